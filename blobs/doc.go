// Package blobs keeps the bytes of rich results' parts (toolcore.Part) out of workflow history:
// the ExecuteTool activity puts each image, audio clip, resource or long text in a Store and the
// result records only a toolcore.PartClaim (type, mimeType, size, sha256, key); MCP and
// `toolgate result --parts` read the bytes back by the claim.
//
// # Why a store of toolgate's own
//
// The SDK's external payload storage (converter's StorageDriver, experimental in sdk-go 1.50)
// swaps a large payload for a claim inside the data converter, so any code that decodes the
// payload (the workflow on every replay, the client, the Web UI) loads the megabytes back. A
// workflow must never load megabytes on replay, a payload stays under the 2 MiB limit only if
// the bytes never enter it, and a result is linked and bounded in toolcore before any converter
// sees it. So the activity stores the parts itself and the workflow handles claims only: replay
// reads a claim of a few hundred bytes, and only a reader that asks for the parts (MCP, the CLI)
// touches the store.
//
// # Stores
//
//   - FileStore: one file per key in a directory (toolgate dev keeps <data-dir>/blobs).
//   - SQLStore: table toolgate_blobs in PostgreSQL (production; database/sql, any driver).
//   - Sealed wraps either: every blob encrypted with the codec keyring (AES-256-GCM, the key ID
//     and the blob's key bound as additional data, so a blob moved to another key fails to open).
//
// An S3-compatible store is left for later; it fits the same four methods.
//
// # Integrity and retention
//
// Load checks every blob against its claim's size and SHA-256, so a store cannot hand back other
// bytes unnoticed. Sweep removes the blobs stored before a time; a worker given a store sweeps it
// every SweepOptions.Interval, removing what is older than the namespace's retention plus a day
// of grace (RunSweeper), so a part lives as long as the history that claims it.
package blobs
