package sandbox_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/blobstoretest"
	"github.com/toolgate/toolgate/sandbox"
)

// copyTree copies the regular files and directories of from into to.
func copyTree(b *testing.B, from, to string) {
	require.NoError(b, filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		require.NoError(b, err)
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		require.NoError(b, err)
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	}))
}

// dirBytes sums the sizes of the files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	require.NoError(b, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(b, err)
		if d.Type().IsRegular() {
			info, err := d.Info()
			require.NoError(b, err)
			n += info.Size()
		}
		return nil
	}))
	return n
}

// BenchmarkWorkspaceSnapshot measures, for a 10 MB and a 100 MB workspace (blobstoretest.Workspace: half
// source text, half random bytes) in a sealed FileStore: the first commit (every object new),
// a commit after one source file changed, a commit of an unchanged workspace (the walk and the
// hashes every call pays), and a restore on a new worker (an empty local copy). stored-MB is
// what the store holds after the first commit. Figures in docs/BENCHMARKS.md ("Sandbox"):
//
//	go test ./sandbox -run '^$' -bench BenchmarkWorkspaceSnapshot -benchtime 3x
func BenchmarkWorkspaceSnapshot(b *testing.B) {
	for _, size := range []int64{10 << 20, 100 << 20} {
		template := b.TempDir()
		source := blobstoretest.Workspace(b, template, size)
		mb := fmt.Sprintf("%dMB", size>>20)
		ctx := context.Background()
		// fresh returns a store holding one commit of the template, and its directory.
		fresh := func(b *testing.B) (*shared, *sandbox.Workspace) {
			s := &shared{dir: b.TempDir(), ring: blobstoretest.Keyring(b, "k1")}
			s.store = sandbox.FileStore(s.dir, s.ring)
			w, err := sandbox.NewWorkspaces(sandbox.Config{Dir: b.TempDir(), Store: s.store})
			require.NoError(b, err)
			ws, err := w.Open(ctx, "bench")
			require.NoError(b, err)
			copyTree(b, template, ws.Dir)
			return s, ws
		}
		b.Run(mb+"/commit-first", func(b *testing.B) {
			b.SetBytes(size)
			var stored int64
			for b.Loop() {
				b.StopTimer()
				s, ws := fresh(b)
				b.StartTimer()
				_, changed, err := ws.Commit(ctx, "c1", nil)
				require.NoError(b, err)
				require.True(b, changed)
				b.StopTimer()
				ws.Close()
				stored = dirBytes(b, filepath.Join(s.dir, "objects"))
				b.StartTimer()
			}
			b.ReportMetric(float64(stored)/(1<<20), "stored-MB")
		})
		s, ws := fresh(b)
		_, _, err := ws.Commit(ctx, "c1", nil)
		require.NoError(b, err)
		edit := filepath.Join(ws.Dir, source)
		b.Run(mb+"/commit-one-file-changed", func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				require.NoError(b, os.WriteFile(edit, []byte(fmt.Sprintf("package edited // %d\n", i)), 0o644))
				_, changed, err := ws.Commit(ctx, fmt.Sprint("c", i+1), nil)
				require.NoError(b, err)
				require.True(b, changed)
			}
		})
		b.Run(mb+"/commit-unchanged", func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				_, changed, err := ws.Commit(ctx, "same", nil)
				require.NoError(b, err)
				require.False(b, changed)
			}
		})
		ws.Close()
		b.Run(mb+"/restore-new-worker", func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				b.StopTimer()
				w, err := sandbox.NewWorkspaces(sandbox.Config{Dir: b.TempDir(), Store: s.store})
				require.NoError(b, err)
				b.StartTimer()
				other, err := w.Open(ctx, "bench")
				require.NoError(b, err)
				other.Close()
			}
		})
	}
}
