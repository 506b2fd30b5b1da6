package blobs_test

import (
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/internal/blobstoretest"
)

// BenchmarkFileStore20MB saves and loads a 20 MB part (Save, Load with its SHA-256 check) in a
// FileStore, plain and sealed with a codec key. Figures in docs/BENCHMARKS.md.
func BenchmarkFileStore20MB(b *testing.B) {
	for _, sealed := range []bool{false, true} {
		name := "plain"
		if sealed {
			name = "sealed"
		}
		b.Run(name, func(b *testing.B) {
			var s blobs.Store = &blobs.FileStore{Dir: filepath.Join(b.TempDir(), "blobs")}
			if sealed {
				s = &blobs.Sealed{Store: s, Keys: blobstoretest.Keyring(b, "k1")}
			}
			blobstoretest.BenchSaveLoad(b, s)
		})
	}
}
