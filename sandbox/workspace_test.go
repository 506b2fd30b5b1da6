package sandbox_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/blobstoretest"
	"github.com/toolgate/toolgate/internal/headstest"
	"github.com/toolgate/toolgate/sandbox"
)

// shared is one store the test's "workers" share: a sealed FileStore in a directory.
type shared struct {
	dir   string
	ring  *codec.Keyring
	store sandbox.Store
}

func newShared(t *testing.T) *shared {
	dir := t.TempDir()
	ring := blobstoretest.Keyring(t, "k1")
	return &shared{dir: dir, ring: ring, store: sandbox.FileStore(dir, ring)}
}

// worker returns the Workspaces of a new worker (its own local directory) on the shared store.
func (s *shared) worker(t *testing.T, edit ...func(*sandbox.Config)) *sandbox.Workspaces {
	cfg := sandbox.Config{Dir: filepath.Join(t.TempDir(), "ws"), Store: s.store}
	for _, e := range edit {
		e(&cfg)
	}
	w, err := sandbox.NewWorkspaces(cfg)
	require.NoError(t, err)
	return w
}

// objectFiles lists the object files of the store.
func (s *shared) objectFiles(t *testing.T) []string {
	entries, err := os.ReadDir(filepath.Join(s.dir, "objects"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func open(t *testing.T, w *sandbox.Workspaces, name string) *sandbox.Workspace {
	ws, err := w.Open(context.Background(), name)
	require.NoError(t, err)
	t.Cleanup(ws.Close)
	return ws
}

func write(t *testing.T, dir, rel, content string, mode fs.FileMode) {
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), mode))
	require.NoError(t, os.Chmod(p, mode))
}

func commit(t *testing.T, ws *sandbox.Workspace, call string) sandbox.Head {
	head, changed, err := ws.Commit(context.Background(), call, json.RawMessage(`{"exitCode":0}`))
	require.NoError(t, err)
	require.True(t, changed)
	return head
}

// tree describes a directory: each path with its type, mode and content or target.
func tree(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		info, err := os.Lstat(p)
		require.NoError(t, err)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			out[rel] = "link -> " + target
		case info.IsDir():
			out[rel] = "dir " + info.Mode().String()
		default:
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[rel] = info.Mode().String() + " " + string(data)
		}
		return nil
	}))
	return out
}

func fill(t *testing.T, dir string) {
	write(t, dir, "main.go", "package main\n", 0o644)
	write(t, dir, "bin/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	write(t, dir, "empty", "", 0o600)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "emptydir"), 0o750))
	require.NoError(t, os.Symlink("bin/run.sh", filepath.Join(dir, "run")))
}

// TestWorkspaceRestoresOnAnotherWorker: a workspace committed on one worker opens on another
// (its own directory, the same store) with the same files, modes and links.
func TestWorkspaceRestoresOnAnotherWorker(t *testing.T) {
	s := newShared(t)
	w1, w2 := s.worker(t), s.worker(t)
	ws := open(t, w1, "run-1")
	assert.Equal(t, int64(0), ws.Head.Version)
	fill(t, ws.Dir)
	head := commit(t, ws, "call-1")
	assert.Equal(t, int64(1), head.Version)
	assert.Equal(t, "call-1", head.Call)
	assert.Equal(t, int64(3), head.Files)
	want := tree(t, ws.Dir)
	ws.Close()

	other := open(t, w2, "run-1")
	assert.Equal(t, head.Version, other.Head.Version)
	assert.NotEqual(t, ws.Dir, other.Dir)
	assert.Equal(t, want, tree(t, other.Dir))
	assert.Len(t, want, 6)

	got, entries, err := w2.Show(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, head.Manifest, got.Manifest)
	assert.Len(t, entries, 6)
}

// TestWorkspaceDirtyCopyIsRestored: a call that changed the local copy and ended without Commit
// or Discard (a crash) leaves it dirty; the next Open restores it to the head, keeping the files
// that match (same inode) and rewriting the others.
func TestWorkspaceDirtyCopyIsRestored(t *testing.T) {
	s := newShared(t)
	w := s.worker(t)
	ws := open(t, w, "run-1")
	fill(t, ws.Dir)
	commit(t, ws, "call-1")
	want := tree(t, ws.Dir)
	ws.Close()

	ws = open(t, w, "run-1")
	kept, err := os.Stat(filepath.Join(ws.Dir, "main.go"))
	require.NoError(t, err)
	write(t, ws.Dir, "bin/run.sh", "rm -rf /\n", 0o777)
	write(t, ws.Dir, "extra/deep/file", "x", 0o644)
	require.NoError(t, os.Remove(filepath.Join(ws.Dir, "empty")))
	require.NoError(t, os.Remove(filepath.Join(ws.Dir, "run")))
	require.NoError(t, os.Mkdir(filepath.Join(ws.Dir, "run"), 0o755))
	ws.Close() // no Commit, no Discard: as a crash

	ws = open(t, w, "run-1")
	assert.Equal(t, want, tree(t, ws.Dir))
	again, err := os.Stat(filepath.Join(ws.Dir, "main.go"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(kept, again), "a matching file is kept, not rewritten")

	// Discard drops a call's changes the same way.
	write(t, ws.Dir, "main.go", "package evil\n", 0o644)
	require.NoError(t, ws.Discard(context.Background()))
	assert.Equal(t, want, tree(t, ws.Dir))
}

// TestWorkspaceConflict: two workers open one workspace at the same head and both change it;
// the second Commit fails with ErrConflict naming the first call, and its files are dropped.
func TestWorkspaceConflict(t *testing.T) {
	s := newShared(t)
	w1, w2 := s.worker(t), s.worker(t)
	a, b := open(t, w1, "run-1"), open(t, w2, "run-1")
	write(t, a.Dir, "a.txt", "from a", 0o644)
	write(t, a.Dir, "same.txt", "both wrote this", 0o644)
	write(t, b.Dir, "b.txt", "from b", 0o644)
	write(t, b.Dir, "same.txt", "both wrote this", 0o644)
	commit(t, a, "call-a")
	objects := s.objectFiles(t)
	_, _, err := b.Commit(context.Background(), "call-b", nil)
	require.ErrorIs(t, err, sandbox.ErrConflict)
	assert.Contains(t, err.Error(), `"call-a"`)
	assert.Equal(t, objects, s.objectFiles(t), "the losing commit leaves no object behind")
	require.NoError(t, b.Discard(context.Background()))
	assert.Empty(t, tree(t, b.Dir))
	b.Close()

	// The winner's objects survive the loser's cleanup, though it stored the same bytes.
	b = open(t, s.worker(t), "run-1")
	assert.Equal(t, map[string]string{"a.txt": "-rw-r--r-- from a", "same.txt": "-rw-r--r-- both wrote this"}, tree(t, b.Dir))
}

// TestWorkspaceUnchangedCommitsNothing: a Commit without changes stores nothing and keeps the
// head (a new, empty workspace gets none).
func TestWorkspaceUnchangedCommitsNothing(t *testing.T) {
	s := newShared(t)
	w := s.worker(t)
	ws := open(t, w, "run-1")
	head, changed, err := ws.Commit(context.Background(), "call-0", nil)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, int64(0), head.Version)
	_, err = w.Head(context.Background(), "run-1")
	require.ErrorIs(t, err, sandbox.ErrNoWorkspace)
	assert.Empty(t, s.objectFiles(t))

	fill(t, ws.Dir)
	first := commit(t, ws, "call-1")
	objects := s.objectFiles(t)
	ws.Close()

	ws = open(t, w, "run-1")
	head, changed, err = ws.Commit(context.Background(), "call-2", nil)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, first, head)
	got, err := w.Head(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, "call-1", got.Call)
	assert.Equal(t, objects, s.objectFiles(t))
}

// TestWorkspaceSeesChangesBehindAnUnchangedTime: a file rewritten with the same size and
// modification time is committed (its change time moved), though scans trust known hashes.
func TestWorkspaceSeesChangesBehindAnUnchangedTime(t *testing.T) {
	sandbox.TrustHashesForTest(t)
	s := newShared(t)
	ws := open(t, s.worker(t), "run-1")
	write(t, ws.Dir, "a", "aaaa", 0o644)
	commit(t, ws, "c1")
	p := filepath.Join(ws.Dir, "a")
	before, err := os.Lstat(p)
	require.NoError(t, err)
	for i := 0; ; i++ { // until the file system's clock has ticked
		require.NoError(t, os.WriteFile(p, []byte(fmt.Sprintf("%04d", i)), 0o644))
		require.NoError(t, os.Chtimes(p, before.ModTime(), before.ModTime()))
		now, err := os.Lstat(p)
		require.NoError(t, err)
		if now.Sys().(*syscall.Stat_t).Ctim != before.Sys().(*syscall.Stat_t).Ctim {
			break
		}
	}
	head, changed, err := ws.Commit(context.Background(), "c2", nil)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, int64(2), head.Version)
	_, changed, err = ws.Commit(context.Background(), "c3", nil)
	require.NoError(t, err)
	assert.False(t, changed)
}

// TestWorkspaceStoresEachObjectOnceAndPrunes: identical files are one object; a commit stores
// only new objects; objects no snapshot but the head and the one before uses are deleted.
func TestWorkspaceStoresEachObjectOnceAndPrunes(t *testing.T) {
	s := newShared(t)
	w := s.worker(t)
	ws := open(t, w, "run-1")
	write(t, ws.Dir, "a", "same", 0o644)
	write(t, ws.Dir, "b", "same", 0o644)
	write(t, ws.Dir, "v", "one", 0o644)
	commit(t, ws, "c1")
	assert.Len(t, s.objectFiles(t), 3, "two objects and the manifest")
	write(t, ws.Dir, "v", "two", 0o644)
	commit(t, ws, "c2")
	assert.Len(t, s.objectFiles(t), 5, "one new object and a manifest")
	write(t, ws.Dir, "v", "three", 0o644)
	commit(t, ws, "c3")
	assert.Len(t, s.objectFiles(t), 5, `"one" and the first manifest pruned`)
	ws.Close()

	other := open(t, s.worker(t), "run-1")
	assert.Equal(t, map[string]string{"a": "-rw-r--r-- same", "b": "-rw-r--r-- same", "v": "-rw-r--r-- three"}, tree(t, other.Dir))
}

// TestWorkspaceSymlinksAreNeverFollowed: links are kept as links; a link into the host in the
// local copy, a directory swapped for such a link, or a file replaced by a link to a host file
// never makes commit read or restore write outside the workspace.
func TestWorkspaceSymlinksAreNeverFollowed(t *testing.T) {
	s := newShared(t)
	host := t.TempDir()
	write(t, host, "secret", "host secret", 0o600)
	owner := &sandbox.Owner{UID: os.Getuid() + 1, GID: os.Getgid() + 1}
	w := s.worker(t, func(c *sandbox.Config) {
		if os.Getuid() == 0 {
			c.Owner = owner
		}
	})
	ws := open(t, w, "run-1")
	require.NoError(t, os.Symlink(host, filepath.Join(ws.Dir, "hostdir")))
	require.NoError(t, os.Symlink(filepath.Join(host, "secret"), filepath.Join(ws.Dir, "secret")))
	write(t, ws.Dir, "sub/file", "mine", 0o644)
	write(t, ws.Dir, "copy", "host secret", 0o644)
	commit(t, ws, "c1")
	_, entries, err := w.Show(context.Background(), "run-1")
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Path, "hostdir/", "commit walked into a link")
	}

	// The local copy turns on the host: a directory becomes a link to it, a file a link to
	// a host file with the same bytes.
	require.NoError(t, os.RemoveAll(filepath.Join(ws.Dir, "sub")))
	require.NoError(t, os.Symlink(host, filepath.Join(ws.Dir, "sub")))
	require.NoError(t, os.Remove(filepath.Join(ws.Dir, "copy")))
	require.NoError(t, os.Symlink(filepath.Join(host, "secret"), filepath.Join(ws.Dir, "copy")))
	before := tree(t, host)
	hostInfo, err := os.Stat(filepath.Join(host, "secret"))
	require.NoError(t, err)
	require.NoError(t, ws.Discard(context.Background()))
	assert.Equal(t, before, tree(t, host), "restore wrote through a link")
	assertSameOwner(t, hostInfo, filepath.Join(host, "secret"))
	got := tree(t, ws.Dir)
	assert.Equal(t, "link -> "+host, got["hostdir"])
	assert.Equal(t, "-rw-r--r-- mine", got["sub/file"])
	assert.Equal(t, "-rw-r--r-- host secret", got["copy"])

	// Another worker gets the links as links, even when its local copy's place holds a link
	// into the host.
	w2 := s.worker(t)
	planted := open(t, w2, "planted")
	planted.Close()
	require.NoError(t, os.RemoveAll(planted.Dir))
	require.NoError(t, os.Symlink(host, filepath.Join(filepath.Dir(planted.Dir), sandbox.KeyPrefixForTest("run-1"))))
	other := open(t, w2, "run-1")
	info, err := os.Lstat(other.Dir)
	require.NoError(t, err)
	assert.True(t, info.IsDir(), "the local copy is a directory again")
	assert.Equal(t, "link -> "+filepath.Join(host, "secret"), tree(t, other.Dir)["secret"])
	assert.Equal(t, before, tree(t, host))
}

func assertSameOwner(t *testing.T, before fs.FileInfo, p string) {
	after, err := os.Lstat(p)
	require.NoError(t, err)
	assert.Equal(t, before.Mode(), after.Mode())
	assert.Equal(t, before.Sys().(*syscall.Stat_t).Uid, after.Sys().(*syscall.Stat_t).Uid)
	assert.Equal(t, before.Sys().(*syscall.Stat_t).Gid, after.Sys().(*syscall.Stat_t).Gid)
}

// TestWorkspaceMaliciousManifestIsRefused: a manifest in the store that would write below a
// link, above the root or a device is refused before anything is written.
func TestWorkspaceMaliciousManifestIsRefused(t *testing.T) {
	host := t.TempDir()
	tests := []struct {
		name    string
		entries []sandbox.Entry
	}{
		{"FileBelowALink", []sandbox.Entry{
			{Path: "l", Mode: uint32(fs.ModeSymlink) | 0o777, Link: host},
			{Path: "l/pwn", Mode: 0o644, Size: 3, SHA256: sha("pwn")},
		}},
		{"DotDot", []sandbox.Entry{{Path: "../pwn", Mode: 0o644, Size: 3, SHA256: sha("pwn")}}},
		{"Absolute", []sandbox.Entry{{Path: host + "/pwn", Mode: 0o644, Size: 3, SHA256: sha("pwn")}}},
		{"Unclean", []sandbox.Entry{{Path: "a/../../pwn", Mode: 0o644, Size: 3, SHA256: sha("pwn")}}},
		{"Device", []sandbox.Entry{{Path: "dev", Mode: uint32(fs.ModeDevice) | 0o666}}},
		{"Setuid", []sandbox.Entry{{Path: "su", Mode: uint32(fs.ModeSetuid) | 0o755, Size: 3, SHA256: sha("pwn")}}},
		{"Duplicate", []sandbox.Entry{
			{Path: "a", Mode: 0o644, Size: 3, SHA256: sha("pwn")},
			{Path: "a", Mode: uint32(fs.ModeSymlink) | 0o777, Link: host},
		}},
	}
	t.Run("ValidControl", func(t *testing.T) {
		s := newShared(t)
		plant(t, s, "run-1", []sandbox.Entry{{Path: "ok", Mode: 0o644, Size: 3, SHA256: sha("pwn")}})
		ws := open(t, s.worker(t), "run-1")
		assert.Equal(t, map[string]string{"ok": "-rw-r--r-- pwn"}, tree(t, ws.Dir))
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newShared(t)
			plant(t, s, "run-1", tt.entries)
			_, err := s.worker(t).Open(context.Background(), "run-1")
			require.Error(t, err)
			assert.Empty(t, tree(t, host))
			_, err = os.Stat(filepath.Join(filepath.Dir(host), "pwn"))
			assert.True(t, os.IsNotExist(err))
		})
	}
}

// plant makes a manifest of entries (each file's bytes "pwn") the head of workspace name.
func plant(t *testing.T, s *shared, name string, entries []sandbox.Entry) {
	ctx := context.Background()
	for i := range entries {
		if entries[i].SHA256 != "" {
			entries[i].Object = "0123456789abcdef"
			require.NoError(t, s.store.Objects.Put(ctx, sandbox.FileKeyForTest(name, entries[i]), sandbox.EncodeObjectForTest([]byte("pwn"))))
		}
	}
	data, err := json.Marshal(map[string]any{"commit": "0123456789abcdef", "entries": entries})
	require.NoError(t, err)
	sum := sha(string(data))
	require.NoError(t, s.store.Objects.Put(ctx, sandbox.ManifestKeyForTest(name, sum), sandbox.EncodeObjectForTest(data)))
	require.NoError(t, s.store.Heads.Swap(ctx, name, 0, sandbox.Head{Workspace: name, Version: 1, Manifest: sum}))
}

// TestWorkspaceHardLinks: two names of one file are two files of one object; a local file
// hard-linked to a host file is replaced on restore, never written, chmod'ed or chown'ed.
func TestWorkspaceHardLinks(t *testing.T) {
	s := newShared(t)
	w := s.worker(t, func(c *sandbox.Config) {
		if os.Getuid() == 0 {
			c.Owner = &sandbox.Owner{UID: 65534, GID: 65534}
		}
	})
	ws := open(t, w, "run-1")
	write(t, ws.Dir, "a", "linked bytes", 0o644)
	require.NoError(t, os.Link(filepath.Join(ws.Dir, "a"), filepath.Join(ws.Dir, "b")))
	commit(t, ws, "c1")
	assert.Len(t, s.objectFiles(t), 2, "one object and the manifest")

	other := open(t, s.worker(t), "run-1")
	assert.Equal(t, map[string]string{"a": "-rw-r--r-- linked bytes", "b": "-rw-r--r-- linked bytes"}, tree(t, other.Dir))

	// A host file linked into the local copy with the bytes and mode the manifest wants.
	host := t.TempDir()
	write(t, host, "hostfile", "linked bytes", 0o640)
	before, err := os.Lstat(filepath.Join(host, "hostfile"))
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(ws.Dir, "a")))
	require.NoError(t, os.Link(filepath.Join(host, "hostfile"), filepath.Join(ws.Dir, "a")))
	require.NoError(t, ws.Discard(context.Background()))
	assertSameOwner(t, before, filepath.Join(host, "hostfile"))
	data, err := os.ReadFile(filepath.Join(host, "hostfile"))
	require.NoError(t, err)
	assert.Equal(t, "linked bytes", string(data))
	now, err := os.Lstat(filepath.Join(ws.Dir, "a"))
	require.NoError(t, err)
	assert.False(t, os.SameFile(before, now), "the link was replaced")
}

// TestWorkspaceStripsSetuid: setuid, setgid and sticky bits are neither kept nor restored.
func TestWorkspaceStripsSetuid(t *testing.T) {
	s := newShared(t)
	w := s.worker(t)
	ws := open(t, w, "run-1")
	write(t, ws.Dir, "su", "#!/bin/sh\n", 0o755)
	require.NoError(t, os.Chmod(filepath.Join(ws.Dir, "su"), 0o4755|fs.ModeSetuid|fs.ModeSetgid))
	require.NoError(t, os.Mkdir(filepath.Join(ws.Dir, "tmp"), 0o777))
	require.NoError(t, os.Chmod(filepath.Join(ws.Dir, "tmp"), 0o777|fs.ModeSticky|fs.ModeSetgid))
	info, err := os.Stat(filepath.Join(ws.Dir, "su"))
	require.NoError(t, err)
	require.NotZero(t, info.Mode()&fs.ModeSetuid, "the test set setuid")
	commit(t, ws, "c1")
	_, entries, err := w.Show(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, uint32(0o755), entries[0].Mode)
	assert.Equal(t, uint32(fs.ModeDir)|0o777, entries[1].Mode)

	other := open(t, s.worker(t), "run-1")
	assert.Equal(t, map[string]string{"su": "-rwxr-xr-x #!/bin/sh\n", "tmp": "dir drwxrwxrwx"}, tree(t, other.Dir))
}

// TestWorkspaceTooLarge: a workspace beyond MaxBytes is not committed.
func TestWorkspaceTooLarge(t *testing.T) {
	s := newShared(t)
	w := s.worker(t, func(c *sandbox.Config) { c.MaxBytes = 1000 })
	ws := open(t, w, "run-1")
	write(t, ws.Dir, "a", strings.Repeat("x", 600), 0o644)
	write(t, ws.Dir, "b", strings.Repeat("y", 600), 0o644)
	_, _, err := ws.Commit(context.Background(), "c1", nil)
	require.ErrorIs(t, err, sandbox.ErrWorkspaceTooLarge)
	assert.Empty(t, s.objectFiles(t))
	require.NoError(t, ws.Discard(context.Background()))
	assert.Empty(t, tree(t, ws.Dir))
}

// TestWorkspaceSkipsSpecialFiles: a fifo is neither kept nor left in the local copy.
func TestWorkspaceSkipsSpecialFiles(t *testing.T) {
	s := newShared(t)
	w := s.worker(t)
	ws := open(t, w, "run-1")
	write(t, ws.Dir, "a", "a", 0o644)
	require.NoError(t, syscall.Mkfifo(filepath.Join(ws.Dir, "fifo"), 0o644))
	commit(t, ws, "c1")
	_, entries, err := w.Show(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "a", entries[0].Path)
	assert.Equal(t, map[string]string{"a": "-rw-r--r-- a"}, tree(t, ws.Dir))
}

// TestWorkspaceOwner: with Owner set (a root worker), restore gives the sandbox's user the
// workspace and every file it writes.
func TestWorkspaceOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown needs root")
	}
	s := newShared(t)
	ws := open(t, s.worker(t), "run-1")
	fill(t, ws.Dir)
	commit(t, ws, "c1")
	other := open(t, s.worker(t, func(c *sandbox.Config) { c.Owner = &sandbox.Owner{UID: 65534, GID: 65533} }), "run-1")
	require.NoError(t, filepath.WalkDir(other.Dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := os.Lstat(p)
		require.NoError(t, err)
		st := info.Sys().(*syscall.Stat_t)
		assert.Equal(t, []uint32{65534, 65533}, []uint32{st.Uid, st.Gid}, p)
		return nil
	}))
	parent, err := os.Stat(filepath.Dir(other.Dir))
	require.NoError(t, err)
	assert.Equal(t, fs.ModeDir|0o711, parent.Mode())
}

// TestWorkspaceSealedObjects: objects are ciphertext in the store and open with the ring only.
func TestWorkspaceSealedObjects(t *testing.T) {
	s := newShared(t)
	ws := open(t, s.worker(t), "run-1")
	marker := "plaintext-marker-" + strings.Repeat("z", 40)
	write(t, ws.Dir, "secret.txt", marker, 0o600)
	write(t, ws.Dir, "named-"+strings.Repeat("q", 20), "x", 0o600)
	commit(t, ws, "c1")
	for _, name := range s.objectFiles(t) {
		data, err := os.ReadFile(filepath.Join(s.dir, "objects", name))
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(data, []byte("tgb1")), name)
		assert.NotContains(t, string(data), "plaintext-marker")
		assert.NotContains(t, string(data), "qqqqqqqqqq", "a file name in the manifest")
	}
	other := open(t, s.worker(t), "run-1")
	assert.Equal(t, "-rw------- "+marker, tree(t, other.Dir)["secret.txt"])

	stranger := &shared{dir: s.dir, store: sandbox.FileStore(s.dir, blobstoretest.Keyring(t, "k2"))}
	_, err := stranger.worker(t).Open(context.Background(), "run-1")
	var notHeld *codec.KeyNotHeldError
	require.ErrorAs(t, err, &notHeld)
}

// TestWorkspaceRemoveAndSweep: Remove deletes the head, the objects and the local copy; Sweep
// removes workspaces older than the retention and local copies the store no longer has, and
// leaves a workspace a call holds open.
func TestWorkspaceRemoveAndSweep(t *testing.T) {
	s := newShared(t)
	ctx := context.Background()
	clock := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	w := s.worker(t, func(c *sandbox.Config) {
		c.Retention = time.Hour
		c.Now = func() time.Time { return clock }
	})
	for _, name := range []string{"old", "busy", "gone", "young"} {
		ws := open(t, w, name)
		write(t, ws.Dir, "f", name, 0o644)
		write(t, ws.Dir, "g", "shared", 0o644)
		commit(t, ws, "c-"+name)
		write(t, ws.Dir, "f", name+" 2", 0o644)
		commit(t, ws, "c2-"+name)
		ws.Close()
	}
	clock = clock.Add(2 * time.Hour)
	young := open(t, w, "young")
	write(t, young.Dir, "f", "young 3", 0o644)
	commit(t, young, "c3-young")
	young.Close()

	require.NoError(t, w.Remove(ctx, "gone"))
	_, err := w.Head(ctx, "gone")
	require.ErrorIs(t, err, sandbox.ErrNoWorkspace)
	for _, name := range s.objectFiles(t) {
		assert.False(t, strings.HasPrefix(name, sandbox.KeyPrefixForTest("gone")), name)
	}
	_, err = os.Lstat(filepath.Join(filepath.Dir(young.Dir), sandbox.KeyPrefixForTest("gone")))
	assert.True(t, os.IsNotExist(err), "the local copy stays")
	require.NoError(t, w.Remove(ctx, "gone"), "a second Remove")

	// A local copy of a workspace another worker removed, and one never committed.
	elsewhere := open(t, w, "removed-elsewhere")
	write(t, elsewhere.Dir, "f", "x", 0o644)
	commit(t, elsewhere, "c")
	elsewhere.Close()
	require.NoError(t, s.worker(t).Remove(ctx, "removed-elsewhere"))
	never := open(t, w, "never-committed")
	write(t, never.Dir, "f", "x", 0o644)
	never.Close()

	busy := open(t, w, "busy")
	n, err := w.Sweep(ctx, clock)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "old swept, busy held open, young kept")
	heads, err := w.List(ctx)
	require.NoError(t, err)
	var names []string
	for _, h := range heads {
		names = append(names, h.Workspace)
	}
	assert.Equal(t, []string{"busy", "young"}, names)
	for _, name := range []string{"removed-elsewhere", "never-committed", "old"} {
		_, err = os.Lstat(filepath.Join(filepath.Dir(young.Dir), sandbox.KeyPrefixForTest(name)))
		assert.True(t, os.IsNotExist(err), name)
	}
	var prefixes []string
	for _, name := range s.objectFiles(t) {
		prefixes = append(prefixes, name[:34])
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		assert.Contains(t, []string{sandbox.KeyPrefixForTest("busy"), sandbox.KeyPrefixForTest("young")}, p)
	}
	busy.Close()
	n, err = w.Sweep(ctx, clock)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "busy swept once closed")
}

// TestWorkspaceOpenTakesTurns: a second Open of one workspace on a worker waits for the first
// to Close, and gives up with its context.
func TestWorkspaceOpenTakesTurns(t *testing.T) {
	s := newShared(t)
	w := s.worker(t)
	first := open(t, w, "run-1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := w.Open(ctx, "run-1")
	require.ErrorIs(t, err, context.Canceled)

	got := make(chan *sandbox.Workspace)
	go func() {
		ws, err := w.Open(context.Background(), "run-1")
		assert.NoError(t, err)
		got <- ws
	}()
	write(t, first.Dir, "f", "first", 0o644)
	commit(t, first, "c1")
	first.Close()
	second := <-got
	defer second.Close()
	assert.Equal(t, int64(1), second.Head.Version)
	other := open(t, w, "run-2") // other workspaces do not wait
	other.Close()
}

// TestFileHeads runs the heads' behaviours (headstest) on FileHeads.
func TestFileHeads(t *testing.T) {
	headstest.Run(t, func(t *testing.T) sandbox.Heads { return &sandbox.FileHeads{Dir: t.TempDir()} })
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestWorkspaceRunSweeper: the sweeper sweeps at once (an expired workspace goes) and stops
// with its context.
func TestWorkspaceRunSweeper(t *testing.T) {
	s := newShared(t)
	clock := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	w := s.worker(t, func(c *sandbox.Config) {
		c.Retention = time.Hour
		c.Now = func() time.Time { return clock }
	})
	ws := open(t, w, "old")
	write(t, ws.Dir, "f", "x", 0o644)
	commit(t, ws, "c1")
	ws.Close()
	clock = clock.Add(2 * time.Hour)

	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.RunSweeper(ctx, time.Hour, func(n int, err error) {
			assert.NoError(t, err)
			reports <- n
		})
	}()
	assert.Equal(t, 1, <-reports)
	cancel()
	<-done
	_, err := w.Head(context.Background(), "old")
	require.ErrorIs(t, err, sandbox.ErrNoWorkspace)
}

// staleHeads answers the first Get with a head read earlier (as a worker that read the head
// just before another worker committed twice and pruned it).
type staleHeads struct {
	sandbox.Heads
	stale *sandbox.Head
}

func (h *staleHeads) Get(ctx context.Context, name string) (sandbox.Head, error) {
	if h.stale != nil {
		head := *h.stale
		h.stale = nil
		return head, nil
	}
	return h.Heads.Get(ctx, name)
}

// TestWorkspaceOpenAfterAPrunedHead: a restore whose head's objects were pruned meanwhile reads
// the head again and restores the new one.
func TestWorkspaceOpenAfterAPrunedHead(t *testing.T) {
	s := newShared(t)
	ws := open(t, s.worker(t), "run-1")
	write(t, ws.Dir, "f", "one", 0o644)
	first := commit(t, ws, "c1")
	write(t, ws.Dir, "f", "two", 0o644)
	commit(t, ws, "c2")
	write(t, ws.Dir, "f", "three", 0o644)
	commit(t, ws, "c3") // prunes the first snapshot
	ws.Close()

	stale := &shared{dir: s.dir, store: sandbox.Store{Objects: s.store.Objects, Heads: &staleHeads{Heads: s.store.Heads, stale: &first}}}
	other := open(t, stale.worker(t), "run-1")
	assert.Equal(t, int64(3), other.Head.Version)
	assert.Equal(t, map[string]string{"f": "-rw-r--r-- three"}, tree(t, other.Dir))
}

// TestWorkspaceSweepDeletesOrphanedObjects: Sweep deletes the objects no head refers to once
// older than sandbox.OrphanGrace (a prune cut short by a lost worker, a failed cleanup, a
// removed workspace's leftovers), and keeps every object a head refers to, younger orphans and
// what is not a workspace object.
func TestWorkspaceSweepDeletesOrphanedObjects(t *testing.T) {
	ctx := context.Background()
	s := newShared(t)
	w := s.worker(t)
	ws := open(t, w, "run")
	write(t, ws.Dir, "a.txt", "first", 0o644)
	commit(t, ws, "c1")
	ws.Close()
	ws = open(t, w, "run")
	write(t, ws.Dir, "b.txt", "second", 0o644)
	commit(t, ws, "c2")
	ws.Close()
	referenced := s.objectFiles(t)

	objects := filepath.Join(s.dir, "objects")
	old := time.Now().Add(-sandbox.OrphanGrace - time.Hour)
	orphan := func(workspace, content string, at time.Time) string {
		sum := sha256.Sum256([]byte(content))
		key := sandbox.KeyPrefixForTest(workspace) + "-" + hex.EncodeToString(sum[:]) + "-0123456789abcdef"
		require.NoError(t, s.store.Objects.Put(ctx, key, []byte(content)))
		require.NoError(t, os.Chtimes(filepath.Join(objects, key), at, at))
		return key
	}
	lost := orphan("run", "a prune cut short", old)
	gone := orphan("removed", "a removed workspace's leftover", old)
	young := orphan("run", "a commit under way", time.Now())
	foreign := filepath.Join(objects, "notaworkspaceobject")
	require.NoError(t, os.WriteFile(foreign, []byte("x"), 0o600))
	require.NoError(t, os.Chtimes(foreign, old, old))

	n, err := w.Sweep(ctx, time.Now())
	require.NoError(t, err)
	assert.Zero(t, n, "no workspace is past its retention")
	left := s.objectFiles(t)
	assert.NotContains(t, left, lost)
	assert.NotContains(t, left, gone)
	assert.Contains(t, left, young)
	assert.Contains(t, left, "notaworkspaceobject")
	for _, key := range referenced {
		assert.Contains(t, left, key, "a referenced object is kept")
	}
	again := open(t, s.worker(t), "run")
	assert.Equal(t, map[string]string{"a.txt": "-rw-r--r-- first", "b.txt": "-rw-r--r-- second"}, tree(t, again.Dir))
}
