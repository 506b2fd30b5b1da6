// Package codec encrypts Temporal payloads with AES-256-GCM, so tool arguments and results are
// ciphertext in the Temporal server's database, and serves the Temporal codec-server protocol so
// the Web UI and the Temporal CLI can still show them to operators who hold the keys.
//
// # Keys
//
// A Keyring holds named 256-bit keys. The first key encrypts; every key decrypts. Each encrypted
// payload names its key ID in its metadata, so keys rotate without rewriting history: put the new
// key first and keep the old ones for as long as calls encrypted with them are retained.
//
// The key file format (also accepted from an environment variable) is one key per line,
// "<id> <base64 of 32 bytes>"; blank lines and lines starting with # are ignored:
//
//	# newest first: it encrypts
//	2026-12 9yT0...base64...=
//	2026-11 Qm4k...base64...=
//
// Key material is never logged or put in an error message; only key IDs are.
//
// # Payloads
//
// An encrypted payload has metadata encoding "binary/encrypted" and "encryption-key-id" = the
// key ID, and data = 12-byte random nonce || AES-GCM ciphertext of the original payload (its
// metadata and data, protobuf-encoded). The key ID is bound as additional authenticated data, so
// a payload cannot be moved to another key's name. Payloads without the encrypted encoding pass
// through Decode unchanged, so histories written before encryption was turned on stay readable.
//
// # Use
//
// Put DataConverter(keys) in client.Options.DataConverter of every client: the worker's, the
// agent's, the CLI's. Search attributes are never encoded by a codec: toolgate puts only the tool
// name, call ID and outcome there, never arguments.
//
// # Codec server
//
// Handler serves POST <prefix>/encode and <prefix>/decode with {"payloads":[...]} (the Temporal
// codec-server protocol), with CORS for the Web UI's origin and an optional bearer token. It
// answers only loopback Host names and HandlerOptions.AllowedHosts (421 otherwise: a page that
// rebinds its DNS name to the server cannot read plaintext), reads at most MaxBodyBytes of a body
// (413), and never grants credentials to the "*" origin. Serve it beyond loopback only with a
// Token.
package codec
