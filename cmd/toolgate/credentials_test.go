package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/credentials"
	"github.com/toolgate/toolgate/internal/credstoretest"
)

// TestCredentialsListAndRevoke: credentials list shows each stored token (principal, provider,
// scopes, expiry, refreshable, its key or "plaintext") with untrusted text escaped, never the
// token, as lines and as JSON, without a key; revoke deletes one (exit 1 the second time) and
// the next list lacks it.
func TestCredentialsListAndRevoke(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "creds")
	expiry := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	sealed := &credentials.FileStore{Dir: dir, Keyring: credstoretest.Keyring(t, "k1")}
	require.NoError(t, sealed.Put(ctx, "https://idp alice", "github", credentials.Token{
		AccessToken: "gho_SECRET", RefreshToken: "ghr_SECRET", Scopes: []string{"repo", "read:user"}, Expiry: expiry, Obtained: expiry.Add(-time.Hour),
	}))
	evil := "https://idp \u202eevil\x1b[2J"
	require.NoError(t, sealed.Put(ctx, evil, "github", credentials.Token{AccessToken: "gho_EVIL", Obtained: expiry}))
	plain := &credentials.FileStore{Dir: dir, InsecurePlaintext: true}
	require.NoError(t, plain.Put(ctx, "https://idp bob", "google", credentials.Token{AccessToken: "ya29_PLAIN", Obtained: expiry}))

	code, out, stderr := runIn([]string{"credentials", "list", "--credentials-dir", dir}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	assertNoRaw(t, out)
	assert.Equal(t, "https://idp alice\tgithub\trepo,read:user\t2026-12-06T07:00:00Z\trefreshable\tkey k1\n"+
		"https://idp bob\tgoogle\t-\t-\tnot-refreshable\tplaintext\n"+
		"https://idp \\u202eevil\\u001b[2J\tgithub\t-\t-\tnot-refreshable\tkey k1\t(escaped 2 control characters)\n", out)
	assert.Contains(t, stderr, "1 of 3 tokens are stored in plaintext")
	assert.NotContains(t, out+stderr, "SECRET")

	code, out, stderr = runIn([]string{"credentials", "list", "--json"}, []string{"TOOLGATE_CREDENTIALS_DIR=" + dir}, "")
	require.Equal(t, ExitOK, code, stderr)
	assertNoRaw(t, out)
	var listed []credentialJSON
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed, 3)
	assert.Equal(t, credentialJSON{Principal: "https://idp alice", Provider: "github", Scopes: []string{"repo", "read:user"}, Expiry: expiry,
		Obtained: expiry.Add(-time.Hour), Refreshable: true, KeyID: "k1", Encrypted: true}, listed[0])
	assert.False(t, listed[1].Encrypted, "bob's token is in plaintext")
	assert.Equal(t, evil, listed[2].Principal, "JSON keeps the exact principal")

	code, out, stderr = runIn([]string{"credentials", "revoke", "--credentials-dir", dir, "--principal", "https://idp alice", "--provider", "github"}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	assert.Equal(t, "revoked https://idp alice at github\n", out)
	_, found, err := sealed.Get(ctx, "https://idp alice", "github")
	require.NoError(t, err)
	assert.False(t, found, "the token is gone from the store")
	code, _, stderr = runIn([]string{"credentials", "revoke", "--credentials-dir", dir, "--principal", "https://idp alice", "--provider", "github"}, nil, "")
	assert.Equal(t, ExitErrorResult, code, "a second revoke finds nothing")
	assert.Contains(t, stderr, "no token of https://idp alice at github")
	code, out, _ = runIn([]string{"credentials", "list", "--credentials-dir", dir}, nil, "")
	require.Equal(t, ExitOK, code)
	assert.NotContains(t, out, "alice")
}

// TestCredentialStoreFlags: the store flags refuse what they must, and the DSN, which may hold a
// password, is never echoed.
func TestCredentialStoreFlags(t *testing.T) {
	dsnFile := filepath.Join(t.TempDir(), "dsn")
	require.NoError(t, os.WriteFile(dsnFile, []byte("postgres://u:hunter2@[::1/db\n"), 0o600))
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	tests := []struct {
		name       string
		args       []string
		env        []string
		wantCode   int
		wantStderr string
	}{
		{"both stores", []string{"credentials", "list", "--credentials-dir", "x", "--credentials-postgres-file", dsnFile}, nil, ExitUsage, "none of the others can be"},
		{"bad DSN in a file", []string{"credentials", "list", "--credentials-postgres-file", dsnFile}, nil, ExitUsage, "the PostgreSQL DSN is not valid"},
		{"bad DSN in the environment", []string{"credentials", "list"}, []string{credentialsPostgresEnv + "=postgres://u:hunter2@[::1/db"}, ExitUsage, "the PostgreSQL DSN is not valid"},
		{"a directory others can read", []string{"credentials", "list", "--credentials-dir", open}, nil, ExitUsage, "chmod 700"},
		{"revoke without provider", []string{"credentials", "revoke", "--principal", "p", "--credentials-dir", "x"}, nil, ExitUsage, `"provider" not set`},
		{"revoke with an empty principal", []string{"credentials", "revoke", "--principal", "", "--provider", "g", "--credentials-dir", t.TempDir()}, nil, ExitUsage, "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runIn(tt.args, tt.env, "")
			assert.Equal(t, tt.wantCode, code, stderr)
			assert.Contains(t, stderr, tt.wantStderr)
			assert.NotContains(t, stderr, "hunter2")
		})
	}
}

// TestOpenCredentialStoreNeedsAKey: a worker's or dev's store without --codec-key is refused,
// dev's unless --credentials-insecure-plaintext; dev defaults to its data directory's
// credentials directory, and to a temporary one removed at Close with --in-memory.
func TestOpenCredentialStoreNeedsAKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, _, err := openCredentialStore(ctx, &credentialStoreFlags{use: credentialStoreWorker, storeFlags: storeFlags{dir: dir}}, nil)
	require.ErrorContains(t, err, "give --codec-key")
	_, _, err = openCredentialStore(ctx, &credentialStoreFlags{use: credentialStoreWorker}, credstoretest.Keyring(t, "k1"))
	require.ErrorContains(t, err, "no credentials store")
	_, _, err = openCredentialStore(ctx, &credentialStoreFlags{use: credentialStoreDev, storeFlags: storeFlags{DefaultDir: dir}}, nil)
	require.ErrorContains(t, err, "--credentials-insecure-plaintext")

	store, closer, err := openCredentialStore(ctx, &credentialStoreFlags{use: credentialStoreDev, plaintext: true, storeFlags: storeFlags{DefaultDir: filepath.Join(dir, "credentials")}}, nil)
	require.NoError(t, err)
	require.NoError(t, store.Put(ctx, "p", "g", credentials.Token{AccessToken: "a"}))
	require.NoError(t, closer.Close())
	assert.DirExists(t, filepath.Join(dir, "credentials", "tokens"))

	store, closer, err = openCredentialStore(ctx, &credentialStoreFlags{use: credentialStoreDev, storeFlags: storeFlags{InMemory: true}}, credstoretest.Keyring(t, "k1"))
	require.NoError(t, err)
	tmp := store.(*credentials.FileStore).Dir
	assert.True(t, strings.HasPrefix(filepath.Base(tmp), "toolgate-credentials-"))
	require.NoError(t, closer.Close())
	assert.NoDirExists(t, tmp, "--in-memory's store is removed at Close")
}

// TestCredentialsRekey: rekey rewrites the tokens sealed with an old key with the key file's
// current key (list then names it), and exits 5 naming a token it cannot rewrite.
func TestCredentialsRekey(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "creds")
	old := &credentials.FileStore{Dir: dir, Keyring: credstoretest.Keyring(t, "cli-old")}
	require.NoError(t, old.Put(ctx, "https://idp alice", "github", credentials.Token{AccessToken: "gho_A", Obtained: time.Now()}))
	keyFile := filepath.Join(t.TempDir(), "keys.txt")
	var lines []string
	for _, id := range []string{"cli-new", "cli-old"} {
		lines = append(lines, id+" "+base64.StdEncoding.EncodeToString(credstoretest.Key(t, id).Secret))
	}
	require.NoError(t, os.WriteFile(keyFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600))

	code, out, stderr := runIn([]string{"credentials", "rekey", "--codec-key", keyFile, "--credentials-dir", dir}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	assert.Equal(t, "rekeyed 1 tokens with key cli-new\n", out)
	_, out, _ = runIn([]string{"credentials", "list", "--credentials-dir", dir}, nil, "")
	assert.Contains(t, out, "\tkey cli-new\n")

	plain := &credentials.FileStore{Dir: dir, InsecurePlaintext: true}
	require.NoError(t, plain.Put(ctx, "https://idp bob", "github", credentials.Token{AccessToken: "gho_B", Obtained: time.Now()}))
	code, out, stderr = runIn([]string{"credentials", "rekey", "--codec-key", keyFile, "--credentials-dir", dir}, nil, "")
	assert.Equal(t, ExitFailure, code)
	assert.Equal(t, "rekeyed 0 tokens with key cli-new\n", out)
	assert.Contains(t, stderr, `"https://idp bob" at "github"`)
	assert.Contains(t, stderr, "stored in plaintext")
	assert.NotContains(t, stderr, "gho_")
}
