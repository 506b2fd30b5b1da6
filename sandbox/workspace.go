package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/internal/filelock"
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
	// Owner owns every file and directory restore writes in a local copy (the sandbox's host
	// user when the worker runs as root). Optional: default the worker's own user.
	Owner *Owner
	// Now is the clock of Head.Updated. Optional: default time.Now.
	Now func() time.Time
}

// Owner is a host user and group.
type Owner struct {
	UID, GID int
}

// ErrDirUnreachable: the sandbox's user cannot pass through a parent of Config.Dir (a worker
// running as root binds each workspace as that user).
var ErrDirUnreachable = errors.New("sandbox workspaces directory unreachable")

// cleanupTimeout bounds the deletion of a losing commit's objects after its context ended.
const cleanupTimeout = time.Minute

// DefaultRetention is Config.Retention's default.
const DefaultRetention = 7 * 24 * time.Hour

// Workspaces manages the workspaces of this worker. It is safe for concurrent use; calls of one
// workspace on this worker take turns (Open waits for the one before to Close).
type Workspaces struct {
	cfg Config

	mu    sync.Mutex
	locks map[string]*turn  // by workspace name, while held or awaited
	known map[string]hashes // by workspace name: its files' hashes at its last scan
}

// turn is one workspace's lock on this worker: a token in a channel, so a wait can end with ctx.
type turn struct {
	token   chan struct{}
	waiters int
}

// NewWorkspaces returns the Workspaces of cfg, creating cfg.Dir.
func NewWorkspaces(cfg Config) (*Workspaces, error) {
	if cfg.Dir == "" {
		return nil, errors.New("sandbox workspaces: no directory")
	}
	if cfg.Store.Objects == nil || cfg.Store.Heads == nil {
		return nil, errors.New("sandbox workspaces: the store needs objects and heads")
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultLimits.Workspace
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox workspaces: %w", err)
	}
	cfg.Dir = dir
	// 0711: the sandbox's user may reach its own workspace, not list the others.
	if err := os.MkdirAll(cfg.Dir, 0o711); err != nil {
		return nil, fmt.Errorf("sandbox workspaces: %w", err)
	}
	if err := os.Chmod(cfg.Dir, 0o711); err != nil {
		return nil, fmt.Errorf("sandbox workspaces: %w", err)
	}
	if cfg.Runner != nil {
		if err := reachable(cfg.Dir, cfg.Runner.UID(), cfg.Runner.GID()); err != nil {
			return nil, fmt.Errorf("sandbox workspaces %s: %w", cfg.Dir, err)
		}
	}
	return &Workspaces{cfg: cfg, locks: map[string]*turn{}, known: map[string]hashes{}}, nil
}

// Workspace is one workspace opened for one call: its local directory holds exactly the
// snapshot Head names (or nothing, for a new workspace) until the call changes it.
type Workspace struct {
	// Name is the workspace's name; Dir its local directory (a host path).
	Name string
	Dir  string
	// Head is the snapshot the directory was restored to (Version 0: a new workspace).
	Head Head

	w       *Workspaces
	local   localPaths
	entries []Entry // Head's manifest, when read
	loaded  bool
	release func()
}

// localPaths are the files of one workspace's local copy: Dir/wsXXXX (the copy), and beside it
// (outside the sandbox's reach) its state and its lock across processes.
type localPaths struct {
	dir, state, lock string
}

func (w *Workspaces) paths(name string) localPaths {
	base := filepath.Join(w.cfg.Dir, keyPrefix(name))
	return localPaths{dir: base, state: base + ".state", lock: base + ".lock"}
}

// localState is what a local copy holds: the head it was restored to, and whether a call may
// have changed it since (set from Open until Commit or Discard; a crash leaves it set).
type localState struct {
	Workspace string `json:"workspace"`
	Version   int64  `json:"version"`
	Manifest  string `json:"manifest"`
	Dirty     bool   `json:"dirty"`
}

func readState(p string) (localState, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return localState{}, err
	}
	var s localState
	if err := json.Unmarshal(data, &s); err != nil {
		return localState{}, fmt.Errorf("local state %s: %w", filepath.Base(p), err)
	}
	return s, nil
}

func writeState(p string, s localState) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write local state: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("write local state: %w", err)
	}
	return nil
}

// lock takes the workspace's turn on this worker, then its lock across processes sharing Dir.
func (w *Workspaces) lock(ctx context.Context, name string, wait bool) (release func(), ok bool, err error) {
	w.mu.Lock()
	t := w.locks[name]
	if t == nil {
		t = &turn{token: make(chan struct{}, 1)}
		t.token <- struct{}{}
		w.locks[name] = t
	}
	t.waiters++
	w.mu.Unlock()
	leave := func() {
		w.mu.Lock()
		t.waiters--
		if t.waiters == 0 {
			delete(w.locks, name)
		}
		w.mu.Unlock()
	}
	if wait {
		select {
		case <-t.token:
		case <-ctx.Done():
			leave()
			return nil, false, context.Cause(ctx)
		}
	} else {
		select {
		case <-t.token:
		default:
			leave()
			return nil, false, nil
		}
	}
	giveBack := func() { t.token <- struct{}{}; leave() }
	lockPath := w.paths(name).lock
	var unlock func()
	if wait {
		unlock, err = filelock.Lock(ctx, lockPath)
		ok = err == nil
	} else {
		unlock, ok, err = filelock.TryLock(lockPath)
	}
	if err != nil || !ok {
		giveBack()
		return nil, false, err
	}
	var once sync.Once
	return func() { once.Do(func() { unlock(); giveBack() }) }, true, nil
}

// Open locks the named workspace on this worker (waiting for ctx while another call holds it)
// and returns it restored to the store's head: a local copy that is behind (or missing, on a
// new worker, or left dirty by a call that did not commit or discard) is brought up to the head
// first. Close releases it.
func (w *Workspaces) Open(ctx context.Context, name string) (*Workspace, error) {
	if name == "" {
		return nil, errors.New("open workspace: empty name")
	}
	release, _, err := w.lock(ctx, name, true)
	if err != nil {
		return nil, fmt.Errorf("open workspace %q: %w", name, err)
	}
	ws := &Workspace{Name: name, w: w, local: w.paths(name), release: release}
	ws.Dir = ws.local.dir
	if err := ws.open(ctx); err != nil {
		release()
		return nil, fmt.Errorf("open workspace %q: %w", name, err)
	}
	return ws, nil
}

func (ws *Workspace) open(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		head, err := ws.w.cfg.Store.Heads.Get(ctx, ws.Name)
		if errors.Is(err, ErrNoWorkspace) {
			head, err = Head{Workspace: ws.Name}, nil
		}
		if err != nil {
			return err
		}
		ws.Head, ws.entries, ws.loaded = head, nil, false
		state, err := readState(ws.local.state)
		current := err == nil && !state.Dirty && state.Workspace == ws.Name &&
			state.Version == head.Version && state.Manifest == head.Manifest
		if current {
			info, err := os.Lstat(ws.local.dir)
			current = err == nil && info.IsDir()
		}
		if !current {
			err := ws.restore(ctx)
			// Another worker committed twice meanwhile and pruned what this head used: again,
			// from the new head.
			if errors.Is(err, blobs.ErrNotFound) && attempt < 2 {
				if now, herr := ws.w.cfg.Store.Heads.Get(ctx, ws.Name); herr == nil && now.Version != head.Version {
					continue
				}
			}
			if err != nil {
				return err
			}
		}
		// From here until Commit or Discard the call may change the files.
		return ws.saveState(true)
	}
}

func (ws *Workspace) saveState(dirty bool) error {
	return writeState(ws.local.state, localState{Workspace: ws.Name, Version: ws.Head.Version, Manifest: ws.Head.Manifest, Dirty: dirty})
}

// manifest returns Head's entries, read once.
func (ws *Workspace) manifest(ctx context.Context) ([]Entry, error) {
	if ws.loaded {
		return ws.entries, nil
	}
	var entries []Entry
	if ws.Head.Version > 0 {
		var err error
		entries, err = loadManifest(ctx, ws.w.cfg.Store.Objects, ws.Name, ws.Head.Manifest, ws.w.cfg.MaxBytes)
		if err != nil {
			return nil, err
		}
	}
	ws.entries, ws.loaded = entries, true
	return entries, nil
}

// restore brings the local copy to Head (marked dirty while it works: a crash restores again).
func (ws *Workspace) restore(ctx context.Context) error {
	entries, err := ws.manifest(ctx)
	if err != nil {
		return err
	}
	if err := ws.saveState(true); err != nil {
		return err
	}
	root, err := ws.openRoot()
	if err != nil {
		return err
	}
	defer root.Close()
	r := newRestorer(ctx, ws.w.cfg.Store.Objects, ws.Name, ws.w.cfg.Owner, entries)
	r.known = ws.w.hashesOf(ws.Name)
	return r.restore(root)
}

// openRoot opens the local copy's directory (created 0700, owned by Config.Owner), refusing a
// symlink in its place.
func (ws *Workspace) openRoot() (*os.Root, error) {
	info, err := os.Lstat(ws.local.dir)
	if err == nil && !info.IsDir() {
		if err := os.RemoveAll(ws.local.dir); err != nil {
			return nil, err
		}
	}
	if err != nil || !info.IsDir() {
		if err := os.Mkdir(ws.local.dir, 0o700); err != nil {
			return nil, err
		}
		if info, err = os.Lstat(ws.local.dir); err != nil {
			return nil, err
		}
	}
	root, err := os.OpenRoot(ws.local.dir)
	if err != nil {
		return nil, err
	}
	got, err := root.Stat(".")
	if err == nil && !os.SameFile(got, info) {
		err = errors.New("local copy changed while it was opened")
	}
	if err == nil {
		f, ferr := root.OpenFile(".", os.O_RDONLY|oDirectory, 0)
		if ferr == nil {
			if owner := ws.w.cfg.Owner; owner != nil {
				ferr = f.Chown(owner.UID, owner.GID)
			}
			if ferr == nil {
				ferr = f.Chmod(0o700)
			}
			f.Close()
		}
		err = ferr
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

// Commit snapshots the workspace when its files differ from Head and swaps the store's head to
// it, recording call (the call's idempotency key) and record (what the call returned) with it;
// changed is false when nothing differed (then nothing is stored). An error wrapping ErrConflict
// means another call committed first; ErrWorkspaceTooLarge that the files exceed the bound.
// After an error the caller Discards.
//
// Fifos, sockets and devices are not kept: Commit removes them from the local copy. Only the
// objects Head's manifest lacks are stored (each once); after the swap, objects only the
// snapshot before the previous one needed are deleted.
func (ws *Workspace) Commit(ctx context.Context, call string, record json.RawMessage) (head Head, changed bool, err error) {
	head, changed, err = ws.commit(ctx, call, record)
	if err != nil {
		return Head{}, false, fmt.Errorf("commit workspace %q: %w", ws.Name, err)
	}
	return head, changed, nil
}

func (ws *Workspace) commit(ctx context.Context, call string, record json.RawMessage) (Head, bool, error) {
	if ws.release == nil {
		return Head{}, false, errors.New("workspace is closed")
	}
	if len(record) > maxRecordBytes {
		return Head{}, false, fmt.Errorf("record of %d bytes (at most %d)", len(record), maxRecordBytes)
	}
	root, err := ws.openRoot()
	if err != nil {
		return Head{}, false, err
	}
	s, err := scan(ctx, root, ws.w.cfg.MaxBytes, ws.w.hashesOf(ws.Name))
	if err != nil {
		root.Close()
		return Head{}, false, err
	}
	ws.w.setHashes(ws.Name, s.hashes)
	defer root.Close()
	old, err := ws.manifest(ctx)
	if err != nil {
		return Head{}, false, err
	}
	if sameFiles(s.entries, old) {
		return ws.Head, false, ws.saveState(false)
	}
	// Bytes the head's manifest has keep their object; the others are stored under this
	// commit's token, once each.
	token := newToken()
	objectOf := make(map[string]string, len(old))
	for _, e := range old {
		if e.kind() == 0 {
			objectOf[e.SHA256] = e.Object
		}
	}
	var put []Entry
	for i, e := range s.entries {
		if e.kind() != 0 {
			continue
		}
		object, ok := objectOf[e.SHA256]
		if !ok {
			object = token
			objectOf[e.SHA256] = token
			put = append(put, Entry{Path: e.Path, Size: e.Size, SHA256: e.SHA256, Object: token})
		}
		s.entries[i].Object = object
	}
	data, sum, err := encodeManifest(token, s.entries)
	if err != nil {
		return Head{}, false, err
	}
	objects := ws.w.cfg.Store.Objects
	// What this commit stored is its own: deleted again when it does not become the head.
	stored := false
	defer func() {
		if !stored {
			// Even when ctx ended (a cancelled call), within a bound.
			cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			ws.w.deleteObjects(cleanup, ws.Name, put, sum)
		}
	}()
	err = each(ctx, put, func(e Entry) int64 { return e.Size }, func(ctx context.Context, e Entry) error {
		content, err := readFile(root, e.Path, e.SHA256, e.Size)
		if err != nil {
			return fmt.Errorf("read %q: %w", e.Path, err)
		}
		return objects.Put(ctx, fileKey(ws.Name, e), encodeObject(content))
	})
	if err != nil {
		return Head{}, false, err
	}
	if err := objects.Put(ctx, manifestKey(ws.Name, sum), encodeObject(data)); err != nil {
		return Head{}, false, err
	}
	next := Head{
		Workspace: ws.Name,
		Version:   ws.Head.Version + 1,
		Manifest:  sum,
		Prev:      ws.Head.Manifest,
		Call:      call,
		Record:    record,
		Files:     s.files,
		Bytes:     s.bytes,
		Updated:   ws.w.cfg.Now().UTC(),
	}
	if err := ws.w.cfg.Store.Heads.Swap(ctx, ws.Name, ws.Head.Version, next); err != nil {
		// Only a conflict says the head is not this commit; after another error it may be.
		stored = !errors.Is(err, ErrConflict)
		return Head{}, false, err
	}
	stored = true
	before := ws.Head
	ws.Head, ws.entries, ws.loaded = next, s.entries, true
	if err := ws.saveState(false); err != nil {
		return Head{}, false, err
	}
	// Best effort: objects a failed prune leaves stay in the store, never read again.
	ws.w.prune(ctx, ws.Name, before, old, s.entries)
	return next, true, nil
}

// hashesOf returns the workspace's hashes at its last scan on this worker (nil: none).
func (w *Workspaces) hashesOf(name string) hashes {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.known[name]
}

// setHashes keeps the workspace's hashes of a scan (nil forgets them).
func (w *Workspaces) setHashes(name string, h hashes) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if h == nil {
		delete(w.known, name)
		return
	}
	w.known[name] = h
}

// prune deletes the objects of the snapshot before prev (prev.Prev) that neither prev (its
// entries were) nor the new head (now) uses, and that snapshot's manifest. A later commit never
// refers to them: it refers to the new head's objects or to its own.
func (w *Workspaces) prune(ctx context.Context, name string, prev Head, were, now []Entry) {
	if prev.Prev == "" {
		return
	}
	older, err := loadManifest(ctx, w.cfg.Store.Objects, name, prev.Prev, w.cfg.MaxBytes)
	if err != nil {
		return
	}
	used := map[string]bool{}
	for _, list := range [][]Entry{were, now} {
		for _, e := range list {
			if e.kind() == 0 {
				used[fileKey(name, e)] = true
			}
		}
	}
	var unused []Entry
	for _, e := range older {
		if e.kind() == 0 && !used[fileKey(name, e)] {
			used[fileKey(name, e)] = true // once
			unused = append(unused, e)
		}
	}
	w.deleteObjects(ctx, name, unused, prev.Prev)
}

// deleteObjects deletes, as far as it can, the objects of entries and the manifest sum.
func (w *Workspaces) deleteObjects(ctx context.Context, name string, entries []Entry, sum string) {
	_ = each(ctx, entries, func(Entry) int64 { return 0 }, func(ctx context.Context, e Entry) error {
		_ = w.cfg.Store.Objects.Delete(ctx, fileKey(name, e))
		return nil
	})
	_ = w.cfg.Store.Objects.Delete(ctx, manifestKey(name, sum))
}

// Discard returns the local directory to Head (the changes of a call that failed or was not
// committed are dropped).
func (ws *Workspace) Discard(ctx context.Context) error {
	if ws.release == nil {
		return fmt.Errorf("discard workspace %q: workspace is closed", ws.Name)
	}
	if err := ws.restore(ctx); err != nil {
		return fmt.Errorf("discard workspace %q: %w", ws.Name, err)
	}
	return ws.saveState(false)
}

// Close releases the workspace's lock on this worker. A workspace neither committed nor
// discarded since Open is restored by the next Open.
func (ws *Workspace) Close() {
	if ws.release != nil {
		ws.release()
		ws.release = nil
	}
}

// Head returns the named workspace's head in the store (an error wrapping ErrNoWorkspace when
// it has none).
func (w *Workspaces) Head(ctx context.Context, name string) (Head, error) {
	return w.cfg.Store.Heads.Get(ctx, name)
}

// Entry is one file of a snapshot's manifest.
type Entry struct {
	// Path is slash-separated, relative to the workspace root.
	Path string `json:"path"`
	// Mode is the file's type and permission bits (setuid, setgid and sticky bits are never
	// kept).
	Mode uint32 `json:"mode"`
	// Size and SHA256 describe a regular file's bytes; Object names the commit that stored
	// them (a token, part of the object's key). Link is a symlink's target (kept as written,
	// never followed).
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Object string `json:"object,omitempty"`
	Link   string `json:"link,omitempty"`
}

// Show returns the named workspace's head and the entries of its manifest.
func (w *Workspaces) Show(ctx context.Context, name string) (Head, []Entry, error) {
	head, err := w.cfg.Store.Heads.Get(ctx, name)
	if err != nil {
		return Head{}, nil, err
	}
	entries, err := loadManifest(ctx, w.cfg.Store.Objects, name, head.Manifest, w.cfg.MaxBytes)
	if err != nil {
		return Head{}, nil, fmt.Errorf("show workspace %q: %w", name, err)
	}
	return head, entries, nil
}

// List returns every workspace's head in the store.
func (w *Workspaces) List(ctx context.Context) ([]Head, error) {
	return w.cfg.Store.Heads.List(ctx)
}

// Remove deletes the named workspace: its head, its objects and this worker's local copy. It
// waits for a call of the workspace on this worker to close it. The objects go first (those
// the head's and the previous snapshot's manifests list), the head last, so a Remove that fails
// half-way can be run again.
func (w *Workspaces) Remove(ctx context.Context, name string) error {
	if _, err := w.remove(ctx, name, true); err != nil {
		return fmt.Errorf("remove workspace %q: %w", name, err)
	}
	return nil
}

func (w *Workspaces) remove(ctx context.Context, name string, wait bool) (bool, error) {
	release, ok, err := w.lock(ctx, name, wait)
	if err != nil || !ok {
		return false, err
	}
	defer release()
	head, err := w.cfg.Store.Heads.Get(ctx, name)
	switch {
	case errors.Is(err, ErrNoWorkspace):
	case err != nil:
		return false, err
	default:
		objects := w.cfg.Store.Objects
		for _, sum := range []string{head.Manifest, head.Prev} {
			if sum == "" {
				continue
			}
			entries, err := loadManifest(ctx, objects, name, sum, w.cfg.MaxBytes)
			if err != nil && !errors.Is(err, blobs.ErrNotFound) {
				return false, err
			}
			for _, e := range entries {
				if e.kind() == 0 {
					if err := objects.Delete(ctx, fileKey(name, e)); err != nil {
						return false, err
					}
				}
			}
			if err := objects.Delete(ctx, manifestKey(name, sum)); err != nil {
				return false, err
			}
		}
		if err := w.cfg.Store.Heads.Delete(ctx, name); err != nil {
			return false, err
		}
	}
	w.setHashes(name, nil)
	return true, w.removeLocal(w.paths(name))
}

// removeLocal deletes a local copy and its state (the lock file stays: another process may
// hold it open).
func (w *Workspaces) removeLocal(p localPaths) error {
	if err := os.RemoveAll(p.dir); err != nil {
		return err
	}
	if err := os.Remove(p.state); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Sweep removes every workspace whose head was last swapped before now minus Retention, the
// local copies of workspaces the store no longer has (removed on another worker, or never
// committed), and, in a store that lists its objects (blobs.Lister: the file and PostgreSQL
// stores), the objects no head refers to that are older than OrphanGrace; it returns how many
// workspaces it removed from the store. A workspace a call holds open is left for the next
// sweep.
func (w *Workspaces) Sweep(ctx context.Context, now time.Time) (int, error) {
	heads, err := w.cfg.Store.Heads.List(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep workspaces: %w", err)
	}
	cutoff := now.Add(-w.cfg.Retention)
	removed := 0
	for _, h := range heads {
		if !h.Updated.Before(cutoff) {
			continue
		}
		ok, err := w.remove(ctx, h.Workspace, false)
		if err != nil {
			return removed, fmt.Errorf("sweep workspace %q: %w", h.Workspace, err)
		}
		if ok {
			removed++
		}
	}
	if err := w.sweepLocal(ctx); err != nil {
		return removed, fmt.Errorf("sweep workspaces: %w", err)
	}
	if _, err := w.sweepOrphans(ctx, now); err != nil {
		return removed, fmt.Errorf("sweep workspace objects: %w", err)
	}
	return removed, nil
}

// sweepLocal removes the local copies whose workspace has no head in the store.
func (w *Workspaces) sweepLocal(ctx context.Context) error {
	entries, err := os.ReadDir(w.cfg.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		stateName, ok := strings.CutSuffix(e.Name(), ".state")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		state, err := readState(filepath.Join(w.cfg.Dir, e.Name()))
		if err != nil || keyPrefix(state.Workspace) != stateName {
			continue // not ours
		}
		_, err = w.cfg.Store.Heads.Get(ctx, state.Workspace)
		if !errors.Is(err, ErrNoWorkspace) {
			if err != nil {
				return err
			}
			continue
		}
		release, ok, err := w.lock(ctx, state.Workspace, false)
		if err != nil {
			return err
		}
		if !ok {
			continue // open by a call
		}
		// Checked again under the lock: a call may have committed it meanwhile.
		_, err = w.cfg.Store.Heads.Get(ctx, state.Workspace)
		if errors.Is(err, ErrNoWorkspace) {
			err = w.removeLocal(w.paths(state.Workspace))
		}
		release()
		if err != nil && !errors.Is(err, ErrNoWorkspace) {
			return err
		}
	}
	return nil
}

// RunSweeper runs Sweep at once and then every interval (default 1 hour when not positive)
// until ctx ends, telling report (optional) each sweep's outcome. Workers sharing a store may
// all run it: each removes only what is old enough and not open on it.
func (w *Workspaces) RunSweeper(ctx context.Context, interval time.Duration, report func(removed int, err error)) {
	if interval <= 0 {
		interval = time.Hour
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		n, err := w.Sweep(ctx, w.cfg.Now())
		if ctx.Err() != nil {
			return
		}
		if report != nil {
			report(n, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
