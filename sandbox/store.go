package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolgate/toolgate/blobs"
)

// Store is where workspaces are kept between calls and across workers: content-addressed objects
// (each file's compressed bytes and each snapshot's manifest) in a blob store, and each
// workspace's head (the last snapshot) in Heads.
type Store struct {
	// Objects holds the objects, by a key derived from the workspace and the object's SHA-256.
	// Wrap it in blobs.Sealed to encrypt them with the codec keyring. Required.
	Objects blobs.Store
	// Heads holds the heads. Required.
	Heads Heads
}

// Head names a workspace's last snapshot and the call that made it.
type Head struct {
	// Workspace is the workspace's name (toolcore.CallRun of its calls).
	Workspace string `json:"workspace"`
	// Version counts the workspace's snapshots from 1; Swap replaces a head only at the version
	// it read.
	Version int64 `json:"version"`
	// Manifest is the SHA-256 (hex) of the snapshot's manifest object.
	Manifest string `json:"manifest"`
	// Prev is the SHA-256 (hex) of the manifest of the snapshot before (empty for the first):
	// its objects are kept until the next commit, for a worker still restoring it.
	Prev string `json:"prev,omitempty"`
	// Call is the idempotency key of the call that committed the snapshot, and Record what that
	// call recorded with it (its result): a lost attempt's Reconcile reads them.
	Call   string          `json:"call,omitempty"`
	Record json.RawMessage `json:"record,omitempty"`
	// Files and Bytes measure the workspace the snapshot holds.
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// Updated is when the head was last swapped (retention counts from it).
	Updated time.Time `json:"updated"`
}

// Heads keeps each workspace's head; implementations are safe for concurrent use across
// processes sharing the same files or database.
type Heads interface {
	// Get returns the workspace's head, or an error wrapping ErrNoWorkspace.
	Get(ctx context.Context, workspace string) (Head, error)
	// Swap makes next the workspace's head if its head's version is still prev (0: the workspace
	// has none yet), else returns an error wrapping ErrConflict. next.Version is prev+1.
	Swap(ctx context.Context, workspace string, prev int64, next Head) error
	// List returns every head, by workspace name.
	List(ctx context.Context) ([]Head, error)
	// Delete removes the workspace's head; a missing one is no error.
	Delete(ctx context.Context, workspace string) error
}

// Errors of the store and the workspaces.
var (
	// ErrNoWorkspace: the store has no head for the workspace (never committed, or removed).
	ErrNoWorkspace = errors.New("no such workspace")
	// ErrConflict: another call committed the workspace since this one restored it; this call's
	// changes were not committed.
	ErrConflict = errors.New("workspace changed by another call")
	// ErrWorkspaceTooLarge: the workspace holds more than Limits.Workspace bytes.
	ErrWorkspaceTooLarge = errors.New("workspace too large")
)
