package blobs_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/internal/blobstoretest"
)

// fileBackend is one directory.
type fileBackend struct{ dir string }

func (b fileBackend) Open(*testing.T) blobs.Store { return &blobs.FileStore{Dir: b.dir} }

func (b fileBackend) Age(t *testing.T, key string, d time.Duration) {
	when := time.Now().Add(-d)
	require.NoError(t, os.Chtimes(filepath.Join(b.dir, key), when, when))
}

// TestFileStore runs the stores' behaviours (blobstoretest) on a FileStore.
func TestFileStore(t *testing.T) {
	blobstoretest.Run(t, func(t *testing.T) blobstoretest.Backend {
		return fileBackend{dir: filepath.Join(t.TempDir(), "blobs")}
	})
}

// A FileStore's directory and files are private to the user; a missing directory sweeps to
// nothing, and foreign files are left alone.
func TestFileStoreModesAndForeignFiles(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "blobs")
	s := &blobs.FileStore{Dir: dir}
	n, err := s.Sweep(ctx, time.Now())
	require.NoError(t, err)
	assert.Zero(t, n)

	require.NoError(t, s.Put(ctx, "k", []byte("x")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600))
	n, err = s.Sweep(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)

	assert.Equal(t, 1, n)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	_, err = os.Stat(filepath.Join(dir, "notes.txt"))
	assert.NoError(t, err, "a file that is no blob is not swept")
}

// countingStore counts sweeps and the cutoffs they were given.
type countingStore struct {
	blobs.Store
	mu      sync.Mutex
	cutoffs []time.Time
	swept   chan struct{}
}

func (s *countingStore) Sweep(_ context.Context, cutoff time.Time) (int, error) {
	s.mu.Lock()
	s.cutoffs = append(s.cutoffs, cutoff)
	s.mu.Unlock()
	s.swept <- struct{}{}
	return 0, nil
}

// RunSweeper sweeps at once and then every interval, removing what is older than the retention
// plus SweepGrace; it returns when its context ends, and does nothing without a retention.
func TestRunSweeper(t *testing.T) {
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	s := &countingStore{swept: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		blobs.RunSweeper(ctx, s, blobs.SweepOptions{Retention: 72 * time.Hour, Interval: time.Millisecond, Now: func() time.Time { return now }})
	}()
	<-s.swept
	<-s.swept
	cancel()
	go func() {
		for range s.swept { // a sweep under way when the context ended
		}
	}()
	<-done
	close(s.swept)

	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, now.Add(-72*time.Hour-blobs.SweepGrace), s.cutoffs[0])

	blobs.RunSweeper(context.Background(), s, blobs.SweepOptions{}) // returns at once
}

// A FileStore lists its blobs by key prefix with their ages, never a Put's temporary file or a
// foreign file; a Sealed store lists through the store it seals, or says it cannot.
func TestFileStoreList(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := &blobs.FileStore{Dir: dir}
	for _, key := range []string{"ws1-a", "ws1-b", "ws2-a"} {
		require.NoError(t, s.Put(ctx, key, []byte(key)))
	}
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "ws1-b"), old, old))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".put-ws1-c"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ws1 not a key"), nil, 0o600))

	list := func(l blobs.Lister) map[string]time.Time {
		got := map[string]time.Time{}
		require.NoError(t, l.List(ctx, "ws1", func(key string, stored time.Time) error {
			got[key] = stored
			return nil
		}))
		return got
	}
	got := list(s)
	assert.Len(t, got, 2)
	assert.WithinDuration(t, old, got["ws1-b"], time.Second)
	assert.WithinDuration(t, time.Now(), got["ws1-a"], time.Minute)
	assert.Equal(t, got, list(&blobs.Sealed{Store: s, Keys: blobstoretest.Keyring(t, "k1")}))

	err := (&blobs.Sealed{Store: struct{ blobs.Store }{s}}).List(ctx, "ws", func(string, time.Time) error { return nil })
	assert.ErrorIs(t, err, blobs.ErrCannotList)
}
