package cluster_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
	"github.com/toolgate/toolgate/credentials"
	"github.com/toolgate/toolgate/internal/credstoretest"
)

// sqlBackend is the credentials tables of one database for credstoretest.
type sqlBackend struct{ db *sql.DB }

func (b sqlBackend) Open(_ *testing.T, c credstoretest.Config) credentials.Store {
	return &credentials.SQLStore{DB: b.db, Keyring: c.Keys, InsecurePlaintext: c.InsecurePlaintext, Now: c.Now}
}

// Dump is every row's every column as text, byte columns in PostgreSQL's escape format (a
// printable byte as itself).
func (b sqlBackend) Dump(t *testing.T) string {
	var tokens, pending sql.NullString
	err := b.db.QueryRow(`SELECT string_agg(concat_ws(' ', principal, provider, scopes, expiry, obtained, refreshable, key_id, encode(sealed, 'escape')), E'\n')
		FROM toolgate_credential_tokens`).Scan(&tokens)
	require.NoError(t, err)
	err = b.db.QueryRow(`SELECT string_agg(concat_ws(' ', state, principal, provider, scopes, waiters, expires, key_id, encode(sealed, 'escape')), E'\n')
		FROM toolgate_credential_pending`).Scan(&pending)
	require.NoError(t, err)
	return tokens.String + "\n" + pending.String
}

func (b sqlBackend) MoveSealed(t *testing.T, provider, from, to string) {
	res, err := b.db.Exec(`UPDATE toolgate_credential_tokens AS dst SET sealed = src.sealed, key_id = src.key_id
		FROM toolgate_credential_tokens AS src
		WHERE src.principal = $1 AND src.provider = $3 AND dst.principal = $2 AND dst.provider = $3`, from, to, provider)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// TestSQLStoreOnPostgres runs the stores' behaviours (credstoretest) on a SQLStore in a real
// PostgreSQL 15, after concurrent EnsureSchema calls (idempotent); then toolgate credentials
// list and revoke read the DSN from --credentials-postgres-file (never argv) and from
// $TOOLGATE_CREDENTIALS_POSTGRES.
func TestSQLStoreOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	toolgate := toolgateBinary(t) // built (or $TOOLGATE_BIN) before PostgreSQL starts
	pg, err := cluster.StartPostgres(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pg.Stop()) })
	admin := openDB(t, "postgres://postgres@"+pg.Address()+"/postgres?sslmode=disable")
	_, err = admin.ExecContext(ctx, `CREATE DATABASE toolgate_credentials`)
	require.NoError(t, err)
	dsn := "postgres://postgres@" + pg.Address() + "/toolgate_credentials?sslmode=disable"
	db := openDB(t, dsn)

	ring := credstoretest.Keyring(t, "k1")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = (&credentials.SQLStore{DB: db, Keyring: ring}).EnsureSchema(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.ErrorIs(t, (&credentials.SQLStore{DB: db}).EnsureSchema(ctx), credentials.ErrNoKeyring)

	credstoretest.Run(t, func(t *testing.T) credstoretest.Backend {
		_, err := db.ExecContext(ctx, `TRUNCATE toolgate_credential_tokens, toolgate_credential_pending`)
		require.NoError(t, err)
		return sqlBackend{db: db}
	})

	// The CLI on the same tables.
	_, err = db.ExecContext(ctx, `TRUNCATE toolgate_credential_tokens, toolgate_credential_pending`)
	require.NoError(t, err)
	store := &credentials.SQLStore{DB: db, Keyring: ring}
	expiry := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	require.NoError(t, store.Put(ctx, "https://idp alice", "github", credentials.Token{AccessToken: "gho_SECRET", RefreshToken: "ghr_SECRET", Expiry: expiry, Obtained: expiry}))
	require.NoError(t, store.Put(ctx, "https://idp bob", "github", credentials.Token{AccessToken: "gho_BOB", Obtained: expiry}))
	dsnFile := filepath.Join(t.TempDir(), "dsn")
	require.NoError(t, os.WriteFile(dsnFile, []byte(dsn+"\n"), 0o600))

	out := runToolgate(t, toolgate, nil, "credentials", "list", "--json", "--credentials-postgres-file", dsnFile)
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	require.Len(t, listed, 2)
	assert.Equal(t, "https://idp alice", listed[0]["principal"])
	assert.Equal(t, true, listed[0]["refreshable"])
	assert.Equal(t, "k1", listed[0]["keyId"])
	assert.NotContains(t, out, "SECRET")

	out = runToolgate(t, toolgate, []string{"TOOLGATE_CREDENTIALS_POSTGRES=" + dsn},
		"credentials", "revoke", "--principal", "https://idp alice", "--provider", "github")
	assert.Equal(t, "revoked https://idp alice at github\n", out)
	_, found, err := store.Get(ctx, "https://idp alice", "github")
	require.NoError(t, err)
	assert.False(t, found, "revoked in PostgreSQL")
	_, found, err = store.Get(ctx, "https://idp bob", "github")
	require.NoError(t, err)
	assert.True(t, found, "bob's token stays")
}

// openDB opens dsn with lib/pq, closed at cleanup.
func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	connector, err := pq.NewConnector(dsn)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}

// runToolgate runs toolgate with args and extra environment and returns its stdout; it must exit 0.
func runToolgate(t *testing.T, toolgate string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(toolgate, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "toolgate %s: %s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}
