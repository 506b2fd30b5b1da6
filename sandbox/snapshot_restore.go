package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sync"

	"github.com/toolgate/toolgate/blobs"
)

// restorer brings a local copy to a manifest incrementally: a file whose size and SHA-256 match
// is kept, others are rewritten (a new file renamed over the old, so a hard link to the old one
// is never written through), names the manifest lacks are removed, and nothing is followed: each
// directory is opened beneath its parent after Lstat said it is one.
type restorer struct {
	ctx       context.Context
	objects   blobs.Store
	workspace string
	owner     *Owner
	children  map[string][]Entry // by parent path ("" for the root)
	known     hashes             // files' hashes at the last scan, by identity
	writes    []fileWrite        // the files the walk found missing or different
	dirs      []Entry            // the directories, children before parents
}

func newRestorer(ctx context.Context, objects blobs.Store, workspace string, owner *Owner, entries []Entry) *restorer {
	r := &restorer{ctx: ctx, objects: objects, workspace: workspace, owner: owner, children: map[string][]Entry{}}
	for _, e := range entries {
		parent := path.Dir(e.Path)
		if parent == "." {
			parent = ""
		}
		r.children[parent] = append(r.children[parent], e)
	}
	return r
}

// restore makes root hold exactly the manifest: a walk that removes what the manifest lacks,
// creates directories and links and checks the files already there, then the missing or
// different files fetched and written objectWorkers at a time across the whole tree, then each
// directory's owner and mode (children first: a directory without write permission is filled
// before it gets its mode).
func (r *restorer) restore(root *os.Root) error {
	if err := r.restoreDir(root, ""); err != nil {
		return err
	}
	err := each(r.ctx, batches(r.writes), batchSize, func(ctx context.Context, batch []fileWrite) error {
		dir, done, err := openDirPath(root, manifestDir(batch[0].entry.Path))
		if err != nil {
			return fmt.Errorf("restore %q: %w", batch[0].entry.Path, err)
		}
		defer done()
		for _, w := range batch {
			if err := r.fetchFile(ctx, dir, path.Base(w.entry.Path), w.entry, w.exists); err != nil {
				return fmt.Errorf("restore %q: %w", w.entry.Path, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range r.dirs {
		dir, done, err := openDirPath(root, d.Path)
		if err == nil {
			err = r.settle(dir, d.perm())
			done()
		}
		if err != nil {
			return fmt.Errorf("restore %q: %w", d.Path, err)
		}
	}
	return nil
}

// fileWrite is a file the walk found missing or different.
type fileWrite struct {
	entry  Entry
	exists bool // a file is in the way (replaced by a rename)
}

// batchFiles bounds the files of one batch: its directory is opened once for them.
const batchFiles = 16

// batches cuts writes (those of one directory next to each other, as the walk found them) into
// runs of one directory, of at most batchFiles files and, but for a single big file, less than
// bigObject bytes.
func batches(writes []fileWrite) [][]fileWrite {
	var out [][]fileWrite
	var size int64
	for i, w := range writes {
		n := len(out)
		if n == 0 || i == 0 || manifestDir(writes[i-1].entry.Path) != manifestDir(w.entry.Path) ||
			len(out[n-1]) >= batchFiles || size+w.entry.Size >= bigObject {
			out = append(out, nil)
			n, size = n+1, 0
		}
		out[n-1] = append(out[n-1], w)
		size += w.entry.Size
	}
	return out
}

func batchSize(batch []fileWrite) int64 {
	var n int64
	for _, w := range batch {
		n += w.entry.Size
	}
	return n
}

// manifestDir is the slash path of rel's directory ("" for the root).
func manifestDir(rel string) string {
	if parent := path.Dir(rel); parent != "." {
		return parent
	}
	return ""
}

// restoreDir makes the directory dir (at rel) hold the manifest's children of rel, but for the
// files to write (r.writes) and the directories' modes (r.dirs).
func (r *restorer) restoreDir(dir *os.Root, rel string) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	want := r.children[rel]
	names, err := readNames(dir)
	if err != nil {
		return fmt.Errorf("read directory %q: %w", rel, err)
	}
	for _, name := range names {
		if !slices.ContainsFunc(want, func(e Entry) bool { return path.Base(e.Path) == name }) {
			if err := dir.RemoveAll(name); err != nil {
				return fmt.Errorf("remove %q: %w", path.Join(rel, name), err)
			}
		}
	}
	// Files first, several checked at once; then links and directories, one by one.
	var files []Entry
	for _, e := range want {
		if e.kind() == 0 {
			files = append(files, e)
		}
	}
	var mu sync.Mutex
	err = each(r.ctx, files, func(e Entry) int64 { return e.Size }, func(ctx context.Context, e Entry) error {
		write, exists, err := r.checkFile(dir, path.Base(e.Path), e)
		if err != nil {
			return fmt.Errorf("restore %q: %w", e.Path, err)
		}
		if write {
			mu.Lock()
			r.writes = append(r.writes, fileWrite{entry: e, exists: exists})
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range want {
		name := path.Base(e.Path)
		switch e.kind() {
		case fs.ModeDir:
			err = r.restoreSubdir(dir, name, e)
		case fs.ModeSymlink:
			err = r.restoreLink(dir, name, e)
		}
		if err != nil {
			return fmt.Errorf("restore %q: %w", e.Path, err)
		}
	}
	return nil
}

func (r *restorer) restoreSubdir(dir *os.Root, name string, e Entry) error {
	info, err := dir.Lstat(name)
	if err == nil && !info.IsDir() {
		if err := dir.RemoveAll(name); err != nil {
			return err
		}
	}
	if err != nil || !info.IsDir() {
		if err := dir.Mkdir(name, 0o700); err != nil {
			return err
		}
		if info, err = dir.Lstat(name); err != nil {
			return err
		}
	}
	if info.Mode()&0o700 != 0o700 {
		if err := dir.Chmod(name, 0o700); err != nil {
			return err
		}
	}
	sub, err := openDirBeneath(dir, name, info)
	if err != nil {
		return err
	}
	defer sub.Close()
	if err := r.restoreDir(sub, e.Path); err != nil {
		return err
	}
	r.dirs = append(r.dirs, e) // after its children's
	return nil
}

// settle gives the directory open as dir its owner and mode, through its descriptor.
func (r *restorer) settle(dir *os.Root, perm fs.FileMode) error {
	f, err := dir.OpenFile(".", os.O_RDONLY|oDirectory, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if r.owner != nil {
		if err := f.Chown(r.owner.UID, r.owner.GID); err != nil {
			return err
		}
	}
	return f.Chmod(perm)
}

func (r *restorer) restoreLink(dir *os.Root, name string, e Entry) error {
	info, err := dir.Lstat(name)
	if err == nil && info.Mode().Type() == fs.ModeSymlink {
		if target, err := dir.Readlink(name); err == nil && target == e.Link && r.owned(info) {
			return nil
		}
	}
	if err == nil {
		if err := dir.RemoveAll(name); err != nil {
			return err
		}
	}
	if err := dir.Symlink(e.Link, name); err != nil {
		return err
	}
	if r.owner != nil {
		return dir.Lchown(name, r.owner.UID, r.owner.GID)
	}
	return nil
}

// owned reports whether info's owner is the one restore gives (any, without an Owner).
func (r *restorer) owned(info fs.FileInfo) bool {
	if r.owner == nil {
		return true
	}
	uid, gid, ok := fileOwner(info)
	return ok && uid == r.owner.UID && gid == r.owner.GID
}

// checkFile keeps the file name of dir when its bytes match e (fixing its mode and owner), or
// says it is to be written, and whether a file is in the way. A directory in the way is removed.
func (r *restorer) checkFile(dir *os.Root, name string, e Entry) (write, exists bool, err error) {
	info, err := dir.Lstat(name)
	switch {
	case err == nil && info.Mode().IsRegular() && info.Size() == e.Size && links(info) == 1:
		// Kept when the bytes match; a file linked elsewhere is always replaced, never chmod'ed.
		if sum, err := r.sum(dir, name, e.Path, info); err == nil && sum == e.SHA256 {
			if info.Mode()&(permBits|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == e.perm() && r.owned(info) {
				return false, false, nil
			}
			return false, false, r.fixFile(dir, name, info, e.perm())
		}
	case err == nil && info.IsDir():
		if err := dir.RemoveAll(name); err != nil {
			return false, false, err
		}
		return true, false, nil
	}
	return true, err == nil, nil
}

// fetchFile writes the file name of dir from its object.
func (r *restorer) fetchFile(ctx context.Context, dir *os.Root, name string, e Entry, exists bool) error {
	obj, err := r.objects.Get(ctx, fileKey(r.workspace, e))
	if err != nil {
		return err
	}
	data, err := decodeObject(obj, e.Size)
	if err != nil {
		return err
	}
	if int64(len(data)) != e.Size || sha256Hex(data) != e.SHA256 {
		return errors.New("object does not match its SHA-256")
	}
	return r.writeFile(dir, name, data, e.perm(), exists)
}

// sum is the SHA-256 of the file at rel: known by its identity, else read.
func (r *restorer) sum(dir *os.Root, name, rel string, info fs.FileInfo) (string, error) {
	if k, ok := r.known[rel]; ok {
		if id, ok := identify(info); ok && id == k.id {
			return k.sum, nil
		}
	}
	sum, _, err := hashFile(dir, name, info)
	return sum, err
}

// fixFile sets the owner and mode of a kept file through a descriptor opened without following.
func (r *restorer) fixFile(dir *os.Root, name string, info fs.FileInfo, perm fs.FileMode) error {
	f, err := openFileBeneath(dir, name, info)
	if err != nil {
		return err
	}
	defer f.Close()
	if r.owner != nil {
		if err := f.Chown(r.owner.UID, r.owner.GID); err != nil {
			return err
		}
	}
	return f.Chmod(perm)
}

// writeFile writes data to a new file beside name (O_EXCL: never through an existing name) and
// renames it over name; a name that did not exist is created in place, with O_EXCL too.
func (r *restorer) writeFile(dir *os.Root, name string, data []byte, perm fs.FileMode, exists bool) error {
	tmp := name
	if exists {
		var rnd [8]byte
		_, _ = rand.Read(rnd[:]) // crypto/rand does not fail
		tmp = ".toolgate-restore-" + hex.EncodeToString(rnd[:])
	}
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && r.owner != nil {
		err = f.Chown(r.owner.UID, r.owner.GID)
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && exists {
		err = dir.Rename(tmp, name)
	}
	if err != nil {
		_ = dir.Remove(tmp)
		return err
	}
	return nil
}
