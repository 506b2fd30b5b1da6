// Package blobstoretest is the one table of behaviours every blobs.Store passes: run by the
// FileStore's tests (package blobs) and the SQLStore's against a real PostgreSQL
// (cmd/toolgate/internal/cluster), so both stores keep one contract, sealed or not.
package blobstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/toolcore"
)

// Backend is one empty storage (a directory, a database).
type Backend interface {
	// Open returns a store on the storage.
	Open(t *testing.T) blobs.Store
	// Age makes the blob under key look stored d ago.
	Age(t *testing.T, key string, d time.Duration)
}

// Run runs every behaviour as a subtest, each on a Backend fresh returns.
func Run(t *testing.T, fresh func(t *testing.T) Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, b Backend)
	}{
		{"PutGetDelete", testPutGetDelete},
		{"InvalidKeysAreRefused", testInvalidKeys},
		{"SweepRemovesOnlyOldBlobs", testSweep},
		{"SealedStoresCiphertext", testSealed},
		{"LoadChecksTheClaim", testLoadChecksTheClaim},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, fresh(t)) })
	}
}

// Keyring returns a keyring of fresh random keys named ids, the first current.
func Keyring(t testing.TB, ids ...string) *codec.Keyring {
	keys := make([]codec.Key, len(ids))
	for i, id := range ids {
		secret := make([]byte, codec.KeySize)
		_, err := rand.Read(secret)
		require.NoError(t, err)
		keys[i] = codec.Key{ID: id, Secret: secret}
	}
	ring, err := codec.NewKeyring(keys...)
	require.NoError(t, err)
	return ring
}

// Random returns n random bytes.
func Random(t testing.TB, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

func testPutGetDelete(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)
	big := Random(t, 3<<20)

	require.NoError(t, s.Put(ctx, "big", big))
	require.NoError(t, s.Put(ctx, "empty", nil))
	require.NoError(t, s.Put(ctx, "replaced", []byte("one")))
	require.NoError(t, s.Put(ctx, "replaced", []byte("two")))

	got, err := s.Get(ctx, "big")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(big, got), "the blob comes back intact")
	got, err = s.Get(ctx, "empty")
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = s.Get(ctx, "replaced")
	require.NoError(t, err)
	assert.Equal(t, "two", string(got))
	_, err = s.Get(ctx, "never")
	require.ErrorIs(t, err, blobs.ErrNotFound)

	require.NoError(t, s.Delete(ctx, "big"))
	require.NoError(t, s.Delete(ctx, "big"), "deleting a missing blob is no error")
	_, err = s.Get(ctx, "big")
	require.ErrorIs(t, err, blobs.ErrNotFound)
	// Another store value on the same storage (another process) sees the same blobs.
	got, err = b.Open(t).Get(ctx, "replaced")
	require.NoError(t, err)
	assert.Equal(t, "two", string(got))
}

func testInvalidKeys(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)
	for _, key := range []string{"", "../escape", "a/b", ".", "..", "x.y", "sp ace", strings.Repeat("k", blobs.MaxKeyBytes+1)} {
		require.ErrorIs(t, s.Put(ctx, key, []byte("x")), blobs.ErrInvalidKey, "put %q", key)
		_, err := s.Get(ctx, key)
		require.ErrorIs(t, err, blobs.ErrInvalidKey, "get %q", key)
		require.ErrorIs(t, s.Delete(ctx, key), blobs.ErrInvalidKey, "delete %q", key)
	}
}

func testSweep(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)
	for _, key := range []string{"old-1", "old-2", "new"} {
		require.NoError(t, s.Put(ctx, key, []byte(key)))
	}
	b.Age(t, "old-1", 48*time.Hour)
	b.Age(t, "old-2", 25*time.Hour)

	n, err := s.Sweep(ctx, time.Now().Add(-24*time.Hour))

	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for _, key := range []string{"old-1", "old-2"} {
		_, err := s.Get(ctx, key)
		require.ErrorIs(t, err, blobs.ErrNotFound, key)
	}
	got, err := s.Get(ctx, "new")
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	n, err = s.Sweep(ctx, time.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Zero(t, n)
}

func testSealed(t *testing.T, b Backend) {
	ctx := context.Background()
	inner := b.Open(t)
	old := Keyring(t, "k1")
	sealed := &blobs.Sealed{Store: inner, Keys: old}
	plain := bytes.Repeat([]byte("secret report line\n"), 1000)

	require.NoError(t, sealed.Put(ctx, "report", plain))

	stored, err := inner.Get(ctx, "report")
	require.NoError(t, err)
	assert.False(t, bytes.Contains(stored, []byte("secret report")), "the store holds ciphertext")
	got, err := sealed.Get(ctx, "report")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(plain, got))

	require.NoError(t, inner.Put(ctx, "moved", stored))
	_, err = sealed.Get(ctx, "moved")
	require.ErrorIs(t, err, codec.ErrNotAuthentic, "a blob copied under another key does not open")
	require.NoError(t, inner.Put(ctx, "plain", plain))
	_, err = sealed.Get(ctx, "plain")
	require.ErrorIs(t, err, blobs.ErrNotSealed)
	_, err = (&blobs.Sealed{Store: inner, Keys: Keyring(t, "k2")}).Get(ctx, "report")
	var notHeld *codec.KeyNotHeldError
	require.ErrorAs(t, err, &notHeld, "another ring lacks the key")
}

func testLoadChecksTheClaim(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)
	img := toolcore.Image("image/png", Random(t, 1<<20))

	claim, err := blobs.Save(ctx, s, img)
	require.NoError(t, err)
	require.True(t, claim.Stored())
	got, err := blobs.Load(ctx, s, claim)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(img.Data, got))

	tampered := bytes.Clone(img.Data)
	tampered[0] ^= 1
	require.NoError(t, s.Put(ctx, claim.Key, tampered))
	_, err = blobs.Load(ctx, s, claim)
	require.ErrorIs(t, err, toolcore.ErrPartDigest, "other bytes under the key are refused")

	short, err := blobs.Save(ctx, s, toolcore.TextPart("inline"))
	require.NoError(t, err)
	assert.False(t, short.Stored())
	got, err = blobs.Load(ctx, nil, short)
	require.NoError(t, err)
	assert.Equal(t, "inline", string(got))
	_, err = blobs.Load(ctx, s, toolcore.ClaimPart(toolcore.ResourceLink("https://x", "x", ""), ""))
	require.ErrorIs(t, err, blobs.ErrNoBytes)
}

// BenchSaveLoad runs one Save, one Load (with its SHA-256 check) and one Delete of a 20 MB part
// in s per iteration.
func BenchSaveLoad(b *testing.B, s blobs.Store) {
	ctx := context.Background()
	part := toolcore.Resource("file:///report.bin", "application/octet-stream", Random(b, 20<<20))
	b.SetBytes(int64(len(part.Data)))
	b.ResetTimer()
	for b.Loop() {
		claim, err := blobs.Save(ctx, s, part)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := blobs.Load(ctx, s, claim); err != nil {
			b.Fatal(err)
		}
		if err := s.Delete(ctx, claim.Key); err != nil {
			b.Fatal(err)
		}
	}
}

// Workspace writes a sandbox workspace of about size bytes into dir: half Go source files of the
// toolchain (GOROOT/src, as found: text that compresses about five-fold) in a tree of
// directories, half random bytes in 1 MiB files (build outputs, archives: they do not compress).
// It returns the path of a source file, relative to dir.
func Workspace(b testing.TB, dir string, size int64) (source string) {
	var written int64
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(b, err)
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || written >= size/2 {
			return fs.SkipAll
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dir, "src", rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		written += int64(len(data))
		if source == "" {
			source = filepath.Join("src", rel)
		}
		return os.WriteFile(out, data, 0o644)
	})
	require.NoError(b, err)
	require.NoError(b, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	for i := 0; written < size; i++ {
		data := Random(b, 1<<20)
		require.NoError(b, os.WriteFile(filepath.Join(dir, "bin", fmt.Sprintf("blob%03d", i)), data, 0o644))
		written += int64(len(data))
	}
	return source
}
