// Package codec encrypts Temporal payloads with AES-256-GCM, so tool arguments and results are
// ciphertext in the Temporal server's database, and serves the Temporal codec-server protocol so
// the Web UI and the Temporal CLI can still show them to operators who hold the keys.
//
// # Keys
//
// A Keyring holds named 256-bit keys. The first key not marked decrypt-only encrypts; every key
// decrypts. Each encrypted payload names its key ID in its metadata, so keys rotate without
// rewriting history.
//
// The key file format (also accepted from an environment variable) is one key per line,
// "<id> <base64 of 32 bytes>", optionally followed by the marker "decrypt-only"; blank lines and
// lines starting with # are ignored. A file without markers reads as before: its first line
// encrypts.
//
//	# phase 1 of a rotation: every process learns 2027-01, 2026-12 still encrypts
//	2027-01 Zk3P...base64...= decrypt-only
//	2026-12 9yT0...base64...=
//
// Key material is never logged or put in an error message; only key IDs are.
//
// # Rotation
//
// Rotate in two phases: add the new key decrypt-only and wait until every process holds it,
// then remove the marker so it encrypts; keep the old key for as long as calls encrypted with it
// are retained. A KeyringWatcher (WatchKeyring) is a KeySource that follows its file: it reads
// it every WatchOptions.Interval (2 s), compares its content (so it follows renames and the
// symlink swaps of a Kubernetes Secret volume) and swaps a valid new keyring in atomically. A
// file that cannot be read or parsed, has no key to encrypt with, or drops the key encrypting
// now is refused: the keys in force stay, and the refusal is logged once.
//
// A payload that names a key the keyring lacks makes a KeyringWatcher read its file at once. If
// the key is still missing, DataConverter does not fail the call for good: in workflow code the
// decode panics with a *WaitingForKeyError, which the worker (WorkflowPanicPolicy BlockWorkflow,
// the SDK's default) turns into a workflow task failure naming the key, retried by the server
// until the key arrives; in an activity the decode waits up to ActivityKeyWait; elsewhere it
// returns a *KeyNotHeldError.

// # Payloads
//
// An encrypted payload has metadata encoding "binary/encrypted" and "encryption-key-id" = the
// key ID, and data = 12-byte random nonce || AES-GCM ciphertext of the original payload (its
// metadata and data, protobuf-encoded). The key ID is bound as additional authenticated data, so
// a payload cannot be moved to another key's name. Payloads without the encrypted encoding pass
// through Decode unchanged, so histories written before encryption was turned on stay readable.
//
// Seal and Open encrypt other values with the same keys and rotation (the credentials stores'
// OAuth tokens): nonce || ciphertext as above, the key ID stored beside it by the caller, and the
// caller's additional data (the row a value belongs to) bound with the key ID, so a sealed value
// opens only in its own place.
//
// # Use
//
// Put DataConverter(keys) in client.Options.DataConverter of every client: the worker's, the
// agent's, the CLI's; keys is a *Keyring or a *KeyringWatcher. Search attributes are never
// encoded by a codec: toolgate puts only the tool name, call ID and outcome there, never
// arguments.

// # Codec server
//
// Handler serves POST <prefix>/encode and <prefix>/decode with {"payloads":[...]} (the Temporal
// codec-server protocol), with CORS for the Web UI's origin and an optional bearer token. It
// answers only loopback Host names and HandlerOptions.AllowedHosts (421 otherwise: a page that
// rebinds its DNS name to the server cannot read plaintext), reads at most MaxBodyBytes of a body
// (413), and never grants credentials to the "*" origin. Serve it beyond loopback only with a
// Token.
//
// The Temporal Web UI cannot send a static token, so with a Token the handler also serves
// <prefix>/login: a form whose POST (from the handler's own origin only) checks the token and
// sets the SessionCookie, HttpOnly and SameSite=Strict (Secure with SecureCookie or over TLS),
// valid for SessionTTL. Its value is the expiry and an HMAC of it keyed by the token: no server
// state, and a new token ends every session. A request with the cookie is accepted only from an
// allowed origin (or none) and, for POST, with Content-Type application/json, which a
// cross-site form cannot send. The UI sends the cookie when its codec settings include
// credentials (ui-server codec.includeCredentials).
package codec
