package secrets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// Dir resolves a secret from a directory of files, one per secret: the name "api_key" is the
// file <Path>/api_key, the layout of /run/secrets in Docker and of a mounted Kubernetes Secret.
//
//   - Symbolic links inside the directory are followed (Kubernetes' key -> ..data/key ->
//     ..2026_12_06.../key); a link, or a name, that resolves outside it is refused, and so are
//     absolute links. Names starting with '.' are never secrets (not found).
//   - The file must be a regular file of at most toolcore.MaxSecretBytes, plus one trailing
//     newline ("\n" or "\r\n"), which is trimmed.
//   - A file is read again when it changed (another inode, size or modification time): a secret
//     rotated by replacing or rewriting its file is seen by the next attempt, without a restart.
//
// Use a Dir by pointer (it keeps a cache); it is safe for concurrent use.
type Dir struct {
	// Path is the directory, such as "/run/secrets". Required.
	Path string

	mu    sync.Mutex
	cache map[string]dirEntry // by secret name: the file as last read
}

// dirEntry is a secret's file as last read: what identifies its version, and its value.
type dirEntry struct {
	id    fileID
	size  int64
	mtime time.Time
	value string
}

// Secret returns the content of <Path>/<name> without one trailing newline, or an error wrapping
// toolcore.ErrSecretNotFound when there is no such file. A directory that cannot be opened, a
// link out of it, a file that is not regular or too large are other errors (Chain stops there).
func (d *Dir) Secret(_ context.Context, name string) (string, error) {
	if d.Path == "" {
		return "", errors.New("secrets.Dir needs a Path")
	}
	if err := toolcore.CheckSecretName(name); err != nil {
		return "", err
	}
	if strings.HasPrefix(name, ".") {
		// ".", "..", Kubernetes' "..data" and hidden files are never a secret's file.
		return "", fmt.Errorf("secret %q: a name starting with '.' names no file of %s: %w", name, d.Path, toolcore.ErrSecretNotFound)
	}
	root, err := os.OpenRoot(d.Path)
	if err != nil {
		return "", fmt.Errorf("secrets directory %s: %w", d.Path, err)
	}
	defer root.Close()
	// os.Root follows links only while they stay beneath Path. Non-blocking: a FIFO planted
	// under the name must not hang the attempt (it is refused below as not regular).
	f, err := root.OpenFile(name, openFlags, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			d.forget(name)
			return "", fmt.Errorf("secret %q: no file %s in %s: %w", name, name, d.Path, toolcore.ErrSecretNotFound)
		}
		return "", fmt.Errorf("secret %q: open %s in %s: %w", name, name, d.Path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("secret %q: %w", name, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("secret %q: %s in %s is not a regular file (%s)", name, name, d.Path, info.Mode().Type())
	}
	if info.Size() > maxFileBytes {
		return "", fmt.Errorf("secret %q: file %s in %s is larger than %d bytes", name, name, d.Path, toolcore.MaxSecretBytes)
	}
	entry := dirEntry{id: idOf(info), size: info.Size(), mtime: info.ModTime()}
	if v, ok := d.cached(name, entry); ok {
		return v, nil
	}
	// The version is taken before reading: a write during the read changes it, and the next
	// call reads again.
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("secret %q: read %s in %s: %w", name, name, d.Path, err)
	}
	v := string(b)
	if trimmed, ok := strings.CutSuffix(v, "\n"); ok {
		v = strings.TrimSuffix(trimmed, "\r")
	}
	if len(v) > toolcore.MaxSecretBytes {
		return "", fmt.Errorf("secret %q: file %s in %s is larger than %d bytes", name, name, d.Path, toolcore.MaxSecretBytes)
	}
	entry.value = v
	d.mu.Lock()
	if d.cache == nil {
		d.cache = map[string]dirEntry{}
	}
	d.cache[name] = entry
	d.mu.Unlock()
	return v, nil
}

// maxFileBytes is the largest file Dir reads: a value of MaxSecretBytes and "\r\n".
const maxFileBytes = toolcore.MaxSecretBytes + 2

// cached returns the value read from name's file when it is still the version of entry.
func (d *Dir) cached(name string, entry dirEntry) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.cache[name]
	if !ok || c.id != entry.id || c.size != entry.size || !c.mtime.Equal(entry.mtime) {
		return "", false
	}
	return c.value, true
}

// forget drops name's cached value (its file is gone).
func (d *Dir) forget(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.cache, name)
}
