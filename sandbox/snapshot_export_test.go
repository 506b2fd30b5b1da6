package sandbox

import "time"

// Internals the external tests (package sandbox_test) reach.
var (
	FileKeyForTest      = fileKey
	ManifestKeyForTest  = manifestKey
	EncodeObjectForTest = encodeObject
	KeyPrefixForTest    = keyPrefix
)

// TrustHashesForTest makes scans trust the hash of every file by its identity, however recent
// its change, until the test ends.
func TrustHashesForTest(t interface{ Cleanup(func()) }) {
	old := racyWindow
	racyWindow = -time.Hour
	t.Cleanup(func() { racyWindow = old })
}
