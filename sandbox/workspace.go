package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Config configures a worker's Workspaces.
type Config struct {
	// Dir holds the local copies of the workspaces on this worker (one directory each, made
	// private to the worker). Required.
	Dir string
	// Store is where workspaces are kept between calls and across workers. Required.
	Store Store
	// Runner runs the commands (exec). Required for exec; the file tools need none.
	Runner *Runner
	// Retention removes a workspace (its head, objects and local copy) that no call committed
	// for this long (Sweep). Optional: default 7 days.
	Retention time.Duration
	// MaxBytes bounds a workspace (its snapshot and its local copy). Optional: default
	// DefaultLimits.Workspace.
	MaxBytes int64
}

// Workspaces manages the workspaces of this worker. It is safe for concurrent use; calls of one
// workspace on this worker take turns (Open waits for the one before to Close).
type Workspaces struct {
	cfg Config
}

// NewWorkspaces returns the Workspaces of cfg, creating cfg.Dir.
func NewWorkspaces(cfg Config) (*Workspaces, error) {
	return nil, errors.New("sandbox: not implemented yet")
}

// Workspace is one workspace opened for one call: its local directory holds exactly the
// snapshot Head names (or nothing, for a new workspace) until the call changes it.
type Workspace struct {
	// Name is the workspace's name; Dir its local directory (a host path).
	Name string
	Dir  string
	// Head is the snapshot the directory was restored to (Version 0: a new workspace).
	Head Head
}

// Open locks the named workspace on this worker (waiting for ctx while another call holds it)
// and returns it restored to the store's head: a local copy that is behind (or missing, on a
// new worker) is brought up to the head first. Close releases it.
func (w *Workspaces) Open(ctx context.Context, name string) (*Workspace, error) {
	return nil, errors.New("sandbox: not implemented yet")
}

// Commit snapshots the workspace when its files differ from Head and swaps the store's head to
// it, recording call (the call's idempotency key) and record (what the call returned) with it;
// changed is false when nothing differed (then nothing is stored). An error wrapping ErrConflict
// means another call committed first; ErrWorkspaceTooLarge that the files exceed the bound.
// After an error the caller Discards.
func (ws *Workspace) Commit(ctx context.Context, call string, record json.RawMessage) (head Head, changed bool, err error) {
	return Head{}, false, errors.New("sandbox: not implemented yet")
}

// Discard returns the local directory to Head (the changes of a call that failed or was not
// committed are dropped).
func (ws *Workspace) Discard(ctx context.Context) error {
	return errors.New("sandbox: not implemented yet")
}

// Close releases the workspace's lock on this worker.
func (ws *Workspace) Close() {}

// Head returns the named workspace's head in the store (an error wrapping ErrNoWorkspace when
// it has none).
func (w *Workspaces) Head(ctx context.Context, name string) (Head, error) {
	return Head{}, errors.New("sandbox: not implemented yet")
}

// Entry is one file of a snapshot's manifest.
type Entry struct {
	// Path is slash-separated, relative to the workspace root.
	Path string `json:"path"`
	// Mode is the file's type and permission bits (setuid, setgid and sticky bits are never
	// kept).
	Mode uint32 `json:"mode"`
	// Size and SHA256 describe a regular file's bytes; Link is a symlink's target (kept as
	// written, never followed).
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Link   string `json:"link,omitempty"`
}

// Show returns the named workspace's head and the entries of its manifest.
func (w *Workspaces) Show(ctx context.Context, name string) (Head, []Entry, error) {
	return Head{}, nil, errors.New("sandbox: not implemented yet")
}

// List returns every workspace's head in the store.
func (w *Workspaces) List(ctx context.Context) ([]Head, error) {
	return nil, errors.New("sandbox: not implemented yet")
}

// Remove deletes the named workspace: its head, its objects and this worker's local copy.
func (w *Workspaces) Remove(ctx context.Context, name string) error {
	return errors.New("sandbox: not implemented yet")
}

// Sweep removes every workspace whose head was last swapped before now minus Retention, and
// returns how many it removed.
func (w *Workspaces) Sweep(ctx context.Context, now time.Time) (int, error) {
	return 0, errors.New("sandbox: not implemented yet")
}
