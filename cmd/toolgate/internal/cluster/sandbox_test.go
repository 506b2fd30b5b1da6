package cluster_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/internal/blobstoretest"
	"github.com/toolgate/toolgate/internal/headstest"
	"github.com/toolgate/toolgate/sandbox"
)

// TestSandboxSQLStoreOnPostgres runs the heads' behaviours (headstest: compare-and-set, one
// winner of concurrent swaps, list, delete) on SQLHeads, and two workers sharing a sealed
// SQLStore (restore on the other worker, a conflict, objects ciphertext in the table, Remove),
// in a real PostgreSQL 15.
func TestSandboxSQLStoreOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	fresh := startBlobPostgres(t)
	ctx := context.Background()
	t.Run("Heads", func(t *testing.T) {
		headstest.Run(t, func(t *testing.T) sandbox.Heads {
			db := fresh(t, "")
			errs := make(chan error, 3)
			for range 3 {
				go func() { errs <- (&sandbox.SQLHeads{DB: db}).EnsureSchema(ctx) }()
			}
			for range 3 {
				require.NoError(t, <-errs)
			}
			return &sandbox.SQLHeads{DB: db}
		})
	})
	t.Run("Workspaces", func(t *testing.T) {
		db := fresh(t, "")
		store, err := sandbox.SQLStore(ctx, db, blobstoretest.Keyring(t, "k1"))
		require.NoError(t, err)
		w1, w2 := sqlWorker(t, store), sqlWorker(t, store)
		a, err := w1.Open(ctx, "run-1")
		require.NoError(t, err)
		defer a.Close()
		require.NoError(t, os.WriteFile(filepath.Join(a.Dir, "main.go"), []byte("package main // plaintext-marker\n"), 0o644))
		head, changed, err := a.Commit(ctx, "call-1", []byte(`{"exitCode":0}`))
		require.NoError(t, err)
		require.True(t, changed)
		a.Close()

		b, err := w2.Open(ctx, "run-1")
		require.NoError(t, err)
		defer b.Close()
		assert.Equal(t, head.Version, b.Head.Version)
		data, err := os.ReadFile(filepath.Join(b.Dir, "main.go"))
		require.NoError(t, err)
		assert.Equal(t, "package main // plaintext-marker\n", string(data))

		// Both at version 1: the second commit conflicts.
		a, err = w1.Open(ctx, "run-1")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(a.Dir, "a"), []byte("a"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(b.Dir, "b"), []byte("b"), 0o644))
		_, _, err = a.Commit(ctx, "call-a", nil)
		require.NoError(t, err)
		_, _, err = b.Commit(ctx, "call-b", nil)
		require.ErrorIs(t, err, sandbox.ErrConflict)
		assert.Contains(t, err.Error(), `"call-a"`)
		require.NoError(t, b.Discard(ctx))
		a.Close()
		b.Close()

		var plain int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM toolgate_sandbox_objects
			WHERE position('plaintext-marker'::bytea in data) > 0 OR substring(data from 1 for 4) <> 'tgb1'::bytea`).Scan(&plain))
		assert.Zero(t, plain, "objects in plaintext")

		// An object no head refers to, older than OrphanGrace (its commit's worker was lost
		// before it swapped the head), is swept; the ones the head refers to stay.
		sum := sha256.Sum256([]byte("run-1"))
		orphan := "ws" + hex.EncodeToString(sum[:16]) + "-" + strings.Repeat("0", 64) + "-0123456789abcdef"
		_, err = db.ExecContext(ctx, `INSERT INTO toolgate_sandbox_objects (key, data, stored) VALUES ($1, 'x', now() - interval '2 days')`, orphan)
		require.NoError(t, err)
		objects := func() (keys []string) {
			require.NoError(t, store.Objects.(blobs.Lister).List(ctx, "ws", func(key string, _ time.Time) error {
				keys = append(keys, key)
				return nil
			}))
			return keys
		}
		before := objects()
		require.Contains(t, before, orphan)
		_, err = w1.Sweep(ctx, time.Now())
		require.NoError(t, err)
		assert.ElementsMatch(t, slices.DeleteFunc(before, func(k string) bool { return k == orphan }), objects())

		require.NoError(t, w2.Remove(ctx, "run-1"))
		var left int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM toolgate_sandbox_objects) + (SELECT count(*) FROM toolgate_sandbox_heads)`).Scan(&left))
		assert.Zero(t, left)
	})
}

// BenchmarkWorkspaceSQLStore10MB commits a 10 MB workspace (half Go source of the toolchain,
// half random bytes in 1 MiB files) to a sealed sandbox.SQLStore on a real PostgreSQL 15
// (lib/pq, text parameters) and restores it on a new worker. Figures in docs/BENCHMARKS.md.
func BenchmarkWorkspaceSQLStore10MB(b *testing.B) {
	const size = 10 << 20
	template := b.TempDir()
	blobstoretest.Workspace(b, template, size)
	db := startBlobPostgres(b)(b, "")
	ctx := context.Background()
	store, err := sandbox.SQLStore(ctx, db, blobstoretest.Keyring(b, "k1"))
	require.NoError(b, err)
	n := 0
	b.Run("commit-first", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			b.StopTimer()
			n++
			ws, err := sqlWorker(b, store).Open(ctx, fmt.Sprint("bench-", n))
			require.NoError(b, err)
			require.NoError(b, os.CopyFS(ws.Dir, os.DirFS(template)))
			b.StartTimer()
			_, changed, err := ws.Commit(ctx, "c1", nil)
			require.NoError(b, err)
			require.True(b, changed)
			ws.Close()
		}
	})
	b.Run("restore-new-worker", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			b.StopTimer()
			w := sqlWorker(b, store)
			b.StartTimer()
			ws, err := w.Open(ctx, "bench-1")
			require.NoError(b, err)
			ws.Close()
		}
	})
}

// sqlWorker is the Workspaces of a new worker (a local directory of its own) on store.
func sqlWorker(t testing.TB, store sandbox.Store) *sandbox.Workspaces {
	w, err := sandbox.NewWorkspaces(sandbox.Config{Dir: filepath.Join(t.TempDir(), "ws"), Store: store})
	require.NoError(t, err)
	return w
}
