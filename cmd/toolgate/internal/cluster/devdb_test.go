package cluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/pgstore"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// TestDevOnPostgres: `toolgate dev --db postgres://...?sslmode=verify-full&sslrootcert=ca.pem` on
// a PostgreSQL server with a certificate of a private CA, without toolgate's databases, creates
// them with the server's schemas and serves a call, every connection of its stores over TLS; a
// CA that did not sign the server's certificate is refused with the verification error and the
// file's name; stopped and started again on the same databases, it finds that call's result and
// serves another; PostgreSQL visibility lists both by ToolName.
func TestDevOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and toolgate dev")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	toolgateBinary(t) // built (or $TOOLGATE_BIN) before PostgreSQL starts
	pg, err := cluster.StartPostgres(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pg.Stop()) })
	ca, other := writeTLS(t, pg)
	// Encoded as the data line prints it (the parameters sorted and escaped).
	url := "postgres://postgres@" + pg.Address() + "/toolgate_dev?" + neturl.Values{"sslmode": {"verify-full"}, "sslrootcert": {ca}}.Encode()

	wrong, err := pgstore.ParseURL("postgres://postgres@" + pg.Address() + "/toolgate_dev?sslmode=verify-full&sslrootcert=" + other)
	require.NoError(t, err)
	err = pgstore.Setup(wrong)
	require.ErrorContains(t, err, "sslrootcert="+other, "the error names the CA file")
	require.ErrorContains(t, err, "x509: certificate signed by unknown authority")

	call := func(id string, left int) toolcore.ToolCall {
		c, err := toolcore.NewToolCall(id, "add", fmt.Appendf(nil, `{"left":%d,"right":1}`, left))
		require.NoError(t, err)
		return c
	}
	first, second := call("pg-first", 41), call("pg-second", 99)

	frontend, stop := startDevOnPostgres(t, ctx, url)
	cl := tgclient.New(dial(t, frontend), tgclient.Options{TaskQueue: wire.DefaultTaskQueue})
	res, err := cl.Execute(ctx, first)
	require.NoError(t, err)
	require.JSONEq(t, `{"sum":42}`, res.Content())
	plain, tls := storeConnections(t, ctx, pg)
	require.Zero(t, plain, "no connection of toolgate dev's stores without TLS")
	require.NotZero(t, tls, "toolgate dev's stores connect over TLS")
	stop()

	frontend, stop = startDevOnPostgres(t, ctx, url)
	defer stop()
	sdk := dial(t, frontend)
	cl = tgclient.New(sdk, tgclient.Options{TaskQueue: wire.DefaultTaskQueue})
	res, err = cl.Result(ctx, first.ID())
	require.NoError(t, err, "the first call's result survives the restart")
	require.JSONEq(t, `{"sum":42}`, res.Content())
	res, err = cl.Execute(ctx, second)
	require.NoError(t, err)
	require.JSONEq(t, `{"sum":100}`, res.Content())
	query := fmt.Sprintf("%s = 'add' AND %s", wire.SearchAttributeToolName, wire.QueryOKCalls)
	require.NoError(t, waitListed(ctx, sdk, query, 2), query)
}

// startDevOnPostgres starts `toolgate dev --db url --no-ui --port 0`, requires its data line to
// name url, and returns its frontend and a stop function (Ctrl-C; also run at cleanup).
func startDevOnPostgres(t *testing.T, ctx context.Context, url string) (string, func()) {
	t.Helper()
	dev, err := testbin.StartDev(ctx, nil, "--db", url, "--no-ui", "--port", "0", "--log-level", "warn")
	require.NoError(t, err)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			require.NoError(t, dev.Stop(time.Minute), "toolgate dev --db stops on Ctrl-C\n%s", dev.StderrTail(4000))
		}
	}
	t.Cleanup(stop)
	require.Equal(t, url, dev.Ready["data"], "toolgate dev --db prints its database")
	return dev.Frontend(), stop
}

// storeConnections counts the connections to toolgate_dev and toolgate_dev_visibility without
// and with TLS (pg_stat_ssl), asked over a connection of the test's own.
func storeConnections(t *testing.T, ctx context.Context, pg *cluster.Postgres) (plain, tls int) {
	t.Helper()
	connector, err := pq.NewConnector("postgres://postgres@" + pg.Address() + "/postgres?sslmode=disable")
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	defer db.Close()
	err = db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE NOT s.ssl), count(*) FILTER (WHERE s.ssl)
		FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
		WHERE a.datname IN ('toolgate_dev', 'toolgate_dev_visibility')`).Scan(&plain, &tls)
	require.NoError(t, err)
	return plain, tls
}

// writeTLS gives pg a server certificate for 127.0.0.1 signed by a new CA and returns the PEM
// files of that CA and of another CA that signed nothing.
func writeTLS(t *testing.T, pg *cluster.Postgres) (caFile, otherFile string) {
	t.Helper()
	dir := t.TempDir()
	caFile, ca, caKey := writeCA(t, dir)
	otherFile, _, _ = writeCA(t, t.TempDir())
	serverKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}, ca, &serverKey.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(serverKey)
	require.NoError(t, err)
	require.NoError(t, pg.EnableTLS(context.Background(),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))
	return caFile, otherFile
}

// writeCA writes the certificate of a new self-signed CA to dir/ca.pem and returns its file, the
// certificate and its key.
func writeCA(t *testing.T, dir string) (string, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "toolgate test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	path := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return path, cert, key
}
