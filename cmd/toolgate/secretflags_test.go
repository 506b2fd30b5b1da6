package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
)

// An --mcp URL with a credential is refused, saying where it is and which flags to use instead,
// never echoing the URL or the value.
func TestMountURLWithCredentialRefused(t *testing.T) {
	tests := []struct {
		name    string
		give    []string
		wantErr string
	}{
		{name: "plain URL and command", give: []string{"web=https://mcp.example.com/mcp?region=eu", "fs=fs-server --token-file /x"}},
		{name: "userinfo", give: []string{"web=https://me:pw-0123456789@mcp.example.com/mcp"}, wantErr: `the URL of mount "web" carries a credential in its userinfo`},
		{name: "api key", give: []string{"fs=fs-server", "web=https://mcp.example.com/mcp?api_key=pw-0123456789"}, wantErr: `the URL of mount "web" carries a credential in its query parameter "api_key"`},
		{name: "token, upper case", give: []string{"web=http://127.0.0.1:1/mcp?TOKEN=pw-0123456789"}, wantErr: `query parameter "token"`},
		{name: "bad prefix not echoed", give: []string{"we b pw-0123456789=https://h.example/mcp?sig=pw-0123456789"}, wantErr: `the URL of mount number 1 carries`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkMountURLs(tt.give)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			for _, flag := range []string{"--mcp-bearer PREFIX=SECRET_NAME", "--mcp-header PREFIX=Header-Name=SECRET_NAME", "--secrets-dir"} {
				assert.Contains(t, err.Error(), flag)
			}
			assert.NotContains(t, err.Error(), "pw-0123456789")
			assert.NotContains(t, err.Error(), "example")
			var exit *exitError
			require.ErrorAs(t, err, &exit)
			assert.Equal(t, ExitUsage, exit.code)
		})
	}
}

// --mcp-header, --mcp-bearer and --mcp-query name secrets of http(s) mounts, with a source.
func TestMountSecretFlags(t *testing.T) {
	mounts := []string{"web=https://mcp.example.com/mcp", "fs=fs-server"}
	src := secrets.Map{}
	tests := []struct {
		name    string
		give    mountSecretFlags
		noSrc   bool
		want    map[string]mcp.MountOptions
		wantErr string
	}{
		{name: "none", want: map[string]mcp.MountOptions{}},
		{name: "bearer, header and query", give: mountSecretFlags{bearers: []string{"web=web_token"}, headers: []string{"web=X-Tenant=web_tenant"}, query: []string{"web=api_key=web_key"}},
			want: map[string]mcp.MountOptions{"web": {Secrets: src,
				Headers: []mcp.SecretHeader{{Name: "X-Tenant", Secret: "web_tenant"}, {Name: "Authorization", Secret: "web_token", Scheme: "Bearer"}},
				Query:   []mcp.SecretQuery{{Param: "api_key", Secret: "web_key"}}}}},
		{name: "unknown mount", give: mountSecretFlags{bearers: []string{"gh=t"}}, wantErr: `no --mcp mount has prefix "gh"`},
		{name: "command mount", give: mountSecretFlags{bearers: []string{"fs=t"}}, wantErr: "is a command"},
		{name: "no source", give: mountSecretFlags{bearers: []string{"web=t"}}, noSrc: true, wantErr: "--secrets-dir or --secrets-env-prefix"},
		{name: "bearer value", give: mountSecretFlags{bearers: []string{"web=Bearer=x"}}, wantErr: "never its value"},
		{name: "header without secret", give: mountSecretFlags{headers: []string{"web=X-Key"}}, wantErr: "want PREFIX=Header-Name=SECRET_NAME"},
		{name: "query without secret", give: mountSecretFlags{query: []string{"web=key="}}, wantErr: "want PREFIX=param=SECRET_NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s toolcore.SecretSource = src
			if tt.noSrc {
				s = nil
			}
			got, err := tt.give.options(mounts, s)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// --secrets-dir first, --secrets-env-prefix second; a missing directory or a bad prefix fails at
// start.
func TestSecretsFlagsSource(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "api_key"), []byte("file-value-0123\n"), 0o600))
	vars := map[string]string{"TG_API_KEY": "env-value-0123", "TG_OTHER": "env-other-0123"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }

	src, err := secretsFlags{dir: dir, envPrefix: "TG_"}.source(lookup)
	require.NoError(t, err)
	v, err := src.Secret(t.Context(), "api_key")
	require.NoError(t, err)
	assert.Equal(t, "file-value-0123", v, "the directory first")
	v, err = src.Secret(t.Context(), "other")
	require.NoError(t, err)
	assert.Equal(t, "env-other-0123", v)

	src, err = secretsFlags{}.source(lookup)
	require.NoError(t, err)
	assert.Nil(t, src, "no flag, no source")

	_, err = secretsFlags{dir: filepath.Join(dir, "missing")}.source(lookup)
	assert.ErrorContains(t, err, "--secrets-dir")
	_, err = secretsFlags{dir: filepath.Join(dir, "api_key")}.source(lookup)
	assert.ErrorContains(t, err, "is not a directory")
	_, err = secretsFlags{envPrefix: "TG-"}.source(lookup)
	assert.ErrorContains(t, err, "--secrets-env-prefix")
}

// The worker refuses a credential in --mcp before anything else runs or logs the URL, and a
// bearer flag without a source.
func TestWorkerRefusesMountCredentials(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{name: "userinfo", args: []string{"worker", "--mcp", "web=https://me:pw-0123456789@127.0.0.1:1/mcp"}, wantStderr: "carries a credential in its userinfo"},
		{name: "query key", args: []string{"worker", "--mcp", "web=https://127.0.0.1:1/mcp?apikey=pw-0123456789"}, wantStderr: `query parameter "apikey"`},
		{name: "bearer without a source", args: []string{"worker", "--mcp", "web=https://127.0.0.1:1/mcp", "--mcp-bearer", "web=web_token"}, wantStderr: "needs a source"},
		{name: "missing secrets dir", args: []string{"worker", "--secrets-dir", "/nonexistent/secrets"}, wantStderr: "--secrets-dir"},
		{name: "dev, bad env prefix", args: []string{"dev", "--in-memory", "--secrets-env-prefix", "A-B"}, wantStderr: "--secrets-env-prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runIn(tt.args, nil, "")
			assert.Equal(t, ExitUsage, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.wantStderr)
			assert.NotContains(t, stderr, "pw-0123456789")
		})
	}
}
