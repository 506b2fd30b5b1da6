package cluster_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/pgstore"
)

// TestParseURLConnectParameters: pgstore.ParseURL takes libpq's TLS parameters and passes them to
// both stores' driver as they are, refuses unknown parameters and certificate files it cannot use
// (naming them), and Redacted shows the parameters but never the password. (pgstore's tests live
// here: a test binary of its own would link the Temporal server once more.)
func TestParseURLConnectParameters(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	ca, _, _ := writeCA(t, dir)
	missing := filepath.Join(dir, "missing.pem")
	const base = "postgres://me:secret@db.internal/toolgate_dev"

	tests := []struct {
		name      string
		give      string
		wantAttrs map[string]string
		wantErr   string
	}{
		{name: "no parameters", give: base, wantAttrs: nil},
		{name: "verify-full with a CA file", give: base + "?sslmode=verify-full&sslrootcert=" + ca,
			wantAttrs: map[string]string{"sslmode": "verify-full", "sslrootcert": ca}},
		{name: "verify-ca", give: base + "?sslmode=verify-ca&sslrootcert=" + ca,
			wantAttrs: map[string]string{"sslmode": "verify-ca", "sslrootcert": ca}},
		{name: "system roots", give: base + "?sslmode=verify-full&sslrootcert=system",
			wantAttrs: map[string]string{"sslmode": "verify-full", "sslrootcert": "system"}},
		{name: "require and friends", give: base + "?sslmode=require&connect_timeout=5&application_name=toolgate",
			wantAttrs: map[string]string{"sslmode": "require", "connect_timeout": "5", "application_name": "toolgate"}},
		{name: "unknown parameter", give: base + "?sslmode=require&search_path=x", wantErr: `unsupported parameter "search_path"`},
		{name: "unknown sslmode", give: base + "?sslmode=verify", wantErr: `sslmode "verify"`},
		{name: "CA file without sslmode", give: base + "?sslrootcert=" + ca, wantErr: "sslrootcert without sslmode"},
		{name: "CA file with sslmode=disable", give: base + "?sslmode=disable&sslrootcert=" + ca, wantErr: "verifies nothing"},
		{name: "missing CA file", give: base + "?sslmode=verify-full&sslrootcert=" + missing, wantErr: missing},
		{name: "CA file without a certificate", give: base + "?sslmode=verify-full&sslrootcert=" + notPEM, wantErr: notPEM + " holds no PEM certificate"},
		{name: "client certificate without its key", give: base + "?sslmode=verify-full&sslcert=" + ca, wantErr: "sslcert and sslkey go together"},
		{name: "client key that is not one", give: base + "?sslmode=verify-full&sslcert=" + ca + "&sslkey=" + notPEM, wantErr: "sslkey=" + notPEM},
		{name: "parameter twice", give: base + "?sslmode=require&sslmode=disable", wantErr: `parameter "sslmode" wants one`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stores, err := pgstore.ParseURL(tt.give)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), "secret", "no password in the error")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAttrs, stores.Main.ConnectAttributes)
			assert.Equal(t, tt.wantAttrs, stores.Visibility.ConnectAttributes)
			assert.Equal(t, "toolgate_dev_visibility", stores.Visibility.DatabaseName)
			assert.NotContains(t, stores.Redacted(), "secret")
			for k := range tt.wantAttrs {
				assert.Contains(t, stores.Redacted(), k+"=")
			}
		})
	}
}
