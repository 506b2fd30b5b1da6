package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/filelock"
)

// FileHeads keeps each workspace's head in a small JSON file of Dir (mode 0600; Dir 0700,
// created on first Swap), named by the SHA-256 of the workspace's name. Swap reads, compares and
// renames a new file into place under an exclusive flock of Dir/.lock, so processes sharing the
// directory never both win one version; readers see the old head or the new, never half of one.
// For toolgate dev and workers sharing one file system.
type FileHeads struct {
	// Dir is the directory. Required.
	Dir string
}

var _ Heads = (*FileHeads)(nil)

// headSuffix ends every head file; headLock is the lock of Swap and Delete.
const (
	headSuffix = ".head.json"
	headLock   = ".lock"
)

// maxHeadBytes bounds a head file (the record is bounded by maxRecordBytes).
const maxHeadBytes = maxRecordBytes + 64<<10

func (h *FileHeads) path(workspace string) (string, error) {
	if h.Dir == "" {
		return "", errors.New("sandbox file heads: no directory")
	}
	if workspace == "" {
		return "", errors.New("sandbox heads: empty workspace name")
	}
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(h.Dir, hex.EncodeToString(sum[:])+headSuffix), nil
}

// Get reads the workspace's head.
func (h *FileHeads) Get(ctx context.Context, workspace string) (Head, error) {
	p, err := h.path(workspace)
	if err != nil {
		return Head{}, err
	}
	if err := ctx.Err(); err != nil {
		return Head{}, err
	}
	head, err := readHead(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Head{}, fmt.Errorf("workspace %q: %w", workspace, ErrNoWorkspace)
	}
	if err != nil {
		return Head{}, err
	}
	if head.Workspace != workspace {
		return Head{}, fmt.Errorf("head file %s names workspace %q, not %q", filepath.Base(p), head.Workspace, workspace)
	}
	return head, nil
}

func readHead(p string) (Head, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return Head{}, err
	}
	defer f.Close()
	var head Head
	dec := json.NewDecoder(io.LimitReader(f, maxHeadBytes))
	if err := dec.Decode(&head); err != nil {
		return Head{}, fmt.Errorf("read head %s: %w", filepath.Base(p), err)
	}
	return head, nil
}

// Swap makes next the head if the head's version is still prev, under the directory's lock.
func (h *FileHeads) Swap(ctx context.Context, workspace string, prev int64, next Head) error {
	p, err := h.path(workspace)
	if err != nil {
		return err
	}
	if err := checkSwap(workspace, prev, next); err != nil {
		return err
	}
	data, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("encode head: %w", err)
	}
	if err := os.MkdirAll(h.Dir, 0o700); err != nil {
		return fmt.Errorf("swap head: %w", err)
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(h.Dir, headLock))
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := readHead(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if prev != 0 {
			return fmt.Errorf("%w: workspace %q has no head (removed), not version %d", ErrConflict, workspace, prev)
		}
	case err != nil:
		return err
	case cur.Version != prev:
		return conflictError(workspace, prev, cur)
	}
	tmp, err := os.CreateTemp(h.Dir, ".swap-*")
	if err != nil {
		return fmt.Errorf("swap head: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: no such file
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		return fmt.Errorf("swap head: %w", err)
	}
	return nil
}

// checkSwap refuses a Swap whose next head does not follow prev.
func checkSwap(workspace string, prev int64, next Head) error {
	if workspace == "" {
		return errors.New("sandbox heads: empty workspace name")
	}
	if next.Workspace != workspace || next.Version != prev+1 || prev < 0 {
		return fmt.Errorf("sandbox heads: swap of %q from version %d to %q version %d", workspace, prev, next.Workspace, next.Version)
	}
	if len(next.Record) > maxRecordBytes {
		return fmt.Errorf("sandbox heads: record of %d bytes (at most %d)", len(next.Record), maxRecordBytes)
	}
	return nil
}

// conflictError names the call that committed the head a Swap found.
func conflictError(workspace string, prev int64, cur Head) error {
	return fmt.Errorf("%w: workspace %q is at version %d (committed by call %q), not %d", ErrConflict, workspace, cur.Version, cur.Call, prev)
}

// List reads every head, by workspace name.
func (h *FileHeads) List(ctx context.Context) ([]Head, error) {
	entries, err := os.ReadDir(h.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list heads: %w", err)
	}
	var heads []Head
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), headSuffix) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		head, err := readHead(filepath.Join(h.Dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		heads = append(heads, head)
	}
	slices.SortFunc(heads, func(a, b Head) int { return strings.Compare(a.Workspace, b.Workspace) })
	return heads, nil
}

// Delete removes the workspace's head, under the directory's lock.
func (h *FileHeads) Delete(ctx context.Context, workspace string) error {
	p, err := h.path(workspace)
	if err != nil {
		return err
	}
	if _, err := os.Stat(h.Dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(h.Dir, headLock))
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete head: %w", err)
	}
	return nil
}
