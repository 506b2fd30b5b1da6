package sandbox

// Internals the external tests (package sandbox_test) reach.
var (
	FileKeyForTest      = fileKey
	ManifestKeyForTest  = manifestKey
	EncodeObjectForTest = encodeObject
	KeyPrefixForTest    = keyPrefix
)
