package cluster_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
	"github.com/toolgate/toolgate/internal/blobstoretest"
)

// blobBackend is the toolgate_blobs table of one fresh database.
type blobBackend struct{ db *sql.DB }

func (b blobBackend) Open(*testing.T) blobs.Store { return &blobs.SQLStore{DB: b.db} }

func (b blobBackend) Age(t *testing.T, key string, d time.Duration) {
	res, err := b.db.Exec(`UPDATE toolgate_blobs SET stored = now() - $2 * interval '1 second' WHERE key = $1`, key, d.Seconds())
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// openBlobDB opens dsn with lib/pq, closed at cleanup.
func openBlobDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	connector, err := pq.NewConnector(dsn)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}

// startBlobPostgres starts a real PostgreSQL 15 and returns a function giving a fresh database
// with the blobs table, after concurrent EnsureSchema calls (idempotent), opened with the DSN
// parameters params ("&name=value...").
func startBlobPostgres(t testing.TB) func(t testing.TB, params string) *sql.DB {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	pg, err := cluster.StartPostgres(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pg.Stop()) })
	admin := openBlobDB(t, "postgres://postgres@"+pg.Address()+"/postgres?sslmode=disable")
	var n atomic.Int32
	return func(t testing.TB, params string) *sql.DB {
		name := fmt.Sprintf("toolgate_blobs_%d", n.Add(1))
		_, err := admin.ExecContext(ctx, `CREATE DATABASE `+name)
		require.NoError(t, err)
		db := openBlobDB(t, "postgres://postgres@"+pg.Address()+"/"+name+"?sslmode=disable"+params)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Go(func() { errs[i] = (&blobs.SQLStore{DB: db}).EnsureSchema(ctx) })
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		return db
	}
}

// TestBlobSQLStoreOnPostgres runs the part stores' behaviours (blobstoretest: put, get, delete,
// keys, sweep by age, sealed with the codec keyring, claims checked on load) on a SQLStore in a
// real PostgreSQL 15.
func TestBlobSQLStoreOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	fresh := startBlobPostgres(t)
	blobstoretest.Run(t, func(t *testing.T) blobstoretest.Backend { return blobBackend{db: fresh(t, "")} })
}

// BenchmarkBlobSQLStore20MB saves and loads a 20 MB part in a SQLStore on a real PostgreSQL 15
// (lib/pq), plain and sealed, with lib/pq's default text parameters (a bytea sent hex-encoded) and
// with binary_parameters=yes. Figures in docs/BENCHMARKS.md.
func BenchmarkBlobSQLStore20MB(b *testing.B) {
	fresh := startBlobPostgres(b)
	for _, params := range []string{"text", "binary"} {
		dsnParams := ""
		if params == "binary" {
			dsnParams = "&binary_parameters=yes"
		}
		conn := fresh(b, dsnParams)
		for _, sealed := range []bool{false, true} {
			name := params + "/plain"
			if sealed {
				name = params + "/sealed"
			}
			b.Run(name, func(b *testing.B) {
				var s blobs.Store = &blobs.SQLStore{DB: conn}
				if sealed {
					s = &blobs.Sealed{Store: s, Keys: blobstoretest.Keyring(b, "k1")}
				}
				blobstoretest.BenchSaveLoad(b, s)
			})
		}
	}
}
