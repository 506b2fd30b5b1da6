package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/toolgate/toolgate/blobs"
)

// A snapshot is a manifest (the commit's token and its []Entry, sorted by path) and one object
// per distinct regular file's bytes, each stored compressed under a key derived from the
// workspace, the bytes' SHA-256 and the token of the commit that first stored them
// (Entry.Object). A commit refers only to objects its head's manifest lists or to objects it
// stored itself, so a prune of an older snapshot, or a losing commit deleting what it stored,
// never deletes an object another commit relies on. The workspace's files are walked with Lstat and opened one directory at a time
// beneath the workspace root (os.Root, O_NOFOLLOW, and the opened file checked to be the one
// Lstat saw), so no symlink the sandbox wrote is ever followed on the host.

// Bounds of a snapshot besides Config.MaxBytes.
const (
	// maxEntries bounds the files, directories and links of a workspace.
	maxEntries = 1 << 17
	// maxManifestBytes bounds a manifest object (maxEntries entries of long paths fit).
	maxManifestBytes = 64 << 20
	// maxLinkBytes bounds a symlink's target (PATH_MAX).
	maxLinkBytes = 4096
	// maxPathBytes bounds an entry's path (PATH_MAX).
	maxPathBytes = 4096
	// maxRecordBytes bounds what a call records with its commit (Head.Record).
	maxRecordBytes = 4 << 20
)

// permBits are the mode bits a snapshot keeps: permissions only (never setuid, setgid, sticky).
const permBits = fs.ModePerm

// keyPrefixLen is the length of a keyPrefix.
const keyPrefixLen = 2 + 32

// keyPrefix is the start of every object key of the workspace: "ws" and 32 hex digits of the
// SHA-256 of its name (also the name of its local copy).
func keyPrefix(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return "ws" + hex.EncodeToString(sum[:16])
}

// fileKey is the object key of a file's bytes with SHA-256 sum (hex), stored by the commit of
// token object.
func fileKey(workspace string, e Entry) string {
	return keyPrefix(workspace) + "-" + e.SHA256 + "-" + e.Object
}

// manifestKey is the object key of a manifest with SHA-256 sum (hex): "_" keeps manifests apart
// from files whose bytes happen to be a manifest's.
func manifestKey(workspace, sum string) string { return keyPrefix(workspace) + "_" + sum }

// newToken returns a commit's token: 16 random hex digits.
func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail
	return hex.EncodeToString(b[:])
}

// isToken reports whether s is a token (16 lowercase hex digits).
func isToken(s string) bool { return len(s) == 16 && isHex(s) }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Object encodings: the first byte of every stored object.
const (
	objectRaw  byte = 'r' // the bytes as they are (they did not compress)
	objectZstd byte = 'z' // the bytes' length (uvarint), then Zstandard frames (RFC 8878)
)

// Zstandard at its default level: against compress/flate it stores source text about a fifth
// smaller, compresses faster and gives up on random bytes an order of magnitude sooner;
// docs/BENCHMARKS.md ("Sandbox") has the figures. Both are safe for concurrent use.
var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			panic(err) // fixed, valid options
		}
		return enc
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		dec, err := zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderConcurrency(0))
		if err != nil {
			panic(err) // fixed, valid options
		}
		return dec
	})
)

// encodeObject compresses data, or keeps it raw when compressing saves less than 1/16.
func encodeObject(data []byte) []byte {
	out := make([]byte, 0, len(data)/2+64)
	out = append(out, objectZstd)
	out = binary.AppendUvarint(out, uint64(len(data)))
	out = zstdEncoder().EncodeAll(data, out)
	if len(out) > len(data)-len(data)/16 {
		return append([]byte{objectRaw}, data...)
	}
	return out
}

// decodeObject returns the bytes of an object, refusing more than limit bytes (a file's size,
// or maxManifestBytes) before it allocates them.
func decodeObject(obj []byte, limit int64) ([]byte, error) {
	if len(obj) == 0 {
		return nil, errors.New("empty object")
	}
	switch obj[0] {
	case objectRaw:
		if int64(len(obj)-1) > limit {
			return nil, fmt.Errorf("object larger than %d bytes", limit)
		}
		return obj[1:], nil
	case objectZstd:
		size, n := binary.Uvarint(obj[1:])
		if n <= 0 || size > uint64(limit) {
			return nil, fmt.Errorf("object larger than %d bytes, or of no valid length", limit)
		}
		// The cap bounds what DecodeAll writes, whatever the frames say.
		data, err := zstdDecoder().DecodeAll(obj[1+n:], make([]byte, 0, size))
		if err != nil {
			return nil, fmt.Errorf("decompress object: %w", err)
		}
		if uint64(len(data)) != size {
			return nil, fmt.Errorf("object of %d bytes, not the %d it says", len(data), size)
		}
		return data, nil
	default:
		return nil, fmt.Errorf("object of unknown encoding %q", obj[0])
	}
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// entryKind is what an entry's mode says it is.
func (e Entry) kind() fs.FileMode { return fs.FileMode(e.Mode) & fs.ModeType }

func (e Entry) perm() fs.FileMode { return fs.FileMode(e.Mode) & permBits }

// manifest is a manifest object: the token of the commit that made it (so every commit's
// manifest is its own object) and the entries.
type manifest struct {
	Commit  string  `json:"commit"`
	Entries []Entry `json:"entries"`
}

// encodeManifest is the manifest object's bytes (before compression) and their SHA-256.
func encodeManifest(token string, entries []Entry) ([]byte, string, error) {
	if entries == nil {
		entries = []Entry{}
	}
	data, err := json.Marshal(manifest{Commit: token, Entries: entries})
	if err != nil {
		return nil, "", fmt.Errorf("encode manifest: %w", err)
	}
	return data, sha256Hex(data), nil
}

// sameFiles reports whether two lists of entries describe the same files (whichever commit
// stored their bytes).
func sameFiles(a, b []Entry) bool {
	return slices.EqualFunc(a, b, func(x, y Entry) bool {
		x.Object, y.Object = "", ""
		return x == y
	})
}

// checkManifest refuses a manifest that could write outside the workspace or beyond its bounds:
// every path clean, relative and below a directory entry listed before it, sorted without
// duplicates; only directories, regular files and symlinks; sizes within maxBytes in all.
func checkManifest(entries []Entry, maxBytes int64) error {
	if len(entries) > maxEntries {
		return fmt.Errorf("%w: more than %d entries", ErrWorkspaceTooLarge, maxEntries)
	}
	dirs := map[string]bool{"": true}
	var total int64
	for i, e := range entries {
		p := e.Path
		if p == "" || len(p) > maxPathBytes || strings.ContainsRune(p, 0) || path.IsAbs(p) ||
			path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("manifest entry %d: path %q is not a clean relative path", i, p)
		}
		if i > 0 && entries[i-1].Path >= p {
			return fmt.Errorf("manifest entry %d: path %q out of order", i, p)
		}
		parent := path.Dir(p)
		if parent == "." {
			parent = ""
		}
		if !dirs[parent] {
			return fmt.Errorf("manifest entry %d: %q is not below a directory of the manifest", i, p)
		}
		if e.Mode&^uint32(fs.ModeType|permBits) != 0 {
			return fmt.Errorf("manifest entry %d: %q has mode bits %o beyond permissions", i, p, e.Mode)
		}
		switch e.kind() {
		case fs.ModeDir:
			dirs[p] = true
		case 0:
			if e.Size < 0 || len(e.SHA256) != sha256.Size*2 || !isHex(e.SHA256) || !isToken(e.Object) {
				return fmt.Errorf("manifest entry %d: file %q without a size, SHA-256 and object", i, p)
			}
			total += e.Size
			if total > maxBytes || total < 0 {
				return fmt.Errorf("%w: manifest holds more than %d bytes", ErrWorkspaceTooLarge, maxBytes)
			}
		case fs.ModeSymlink:
			if e.Link == "" || len(e.Link) > maxLinkBytes || strings.ContainsRune(e.Link, 0) {
				return fmt.Errorf("manifest entry %d: symlink %q has no valid target", i, p)
			}
		default:
			return fmt.Errorf("manifest entry %d: %q is neither a directory, a file nor a symlink", i, p)
		}
	}
	return nil
}

// loadManifest reads and checks a manifest object.
func loadManifest(ctx context.Context, objects blobs.Store, workspace, sum string, maxBytes int64) ([]Entry, error) {
	obj, err := objects.Get(ctx, manifestKey(workspace, sum))
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", sum, err)
	}
	data, err := decodeObject(obj, maxManifestBytes)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", sum, err)
	}
	if sha256Hex(data) != sum {
		return nil, fmt.Errorf("manifest %s: its bytes do not match its SHA-256", sum)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", sum, err)
	}
	if err := checkManifest(m.Entries, maxBytes); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", sum, err)
	}
	return m.Entries, nil
}

// scanned is a workspace as a walk found it.
type scanned struct {
	entries []Entry
	bytes   int64
	files   int64
	skipped []string // fifos, sockets, devices: removed, not kept
	known   hashes   // the SHA-256 of files as the last scan found them
	hashes  hashes   // as this scan found them
}

// hashes are the SHA-256 of files by path, each with the identity it had when hashed (device,
// inode, size, modification and change times): a file whose identity is unchanged is not read
// again. Only files changed a while before they were hashed are kept (racyWindow), so a change
// within one tick of the file system's clock cannot hide behind an unchanged time.
type hashes map[string]hashed

type hashed struct {
	id  fileID
	sum string
}

// racyWindow is how long after a file's last change its hash is trusted by identity alone.
var racyWindow = 2 * time.Second

// scan walks the workspace rooted at root: directories, regular files (hashed, unless known
// has them with their identity) and symlinks become entries; other types are removed from the
// local copy and named in skipped. More than maxBytes of files, or maxEntries entries, is
// ErrWorkspaceTooLarge.
func scan(ctx context.Context, root *os.Root, maxBytes int64, known hashes) (*scanned, error) {
	s := &scanned{known: known, hashes: hashes{}}
	if err := s.walk(ctx, root, "", maxBytes); err != nil {
		return nil, err
	}
	slices.SortFunc(s.entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return s, nil
}

func (s *scanned) walk(ctx context.Context, dir *os.Root, rel string, maxBytes int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	names, err := readNames(dir)
	if err != nil {
		return fmt.Errorf("read directory %q: %w", rel, err)
	}
	for _, name := range names {
		p := path.Join(rel, name)
		info, err := dir.Lstat(name)
		if err != nil {
			return fmt.Errorf("stat %q: %w", p, err)
		}
		if len(s.entries) >= maxEntries {
			return fmt.Errorf("%w: more than %d files, directories and links", ErrWorkspaceTooLarge, maxEntries)
		}
		perm := uint32(info.Mode() & permBits)
		switch info.Mode().Type() {
		case fs.ModeDir:
			s.entries = append(s.entries, Entry{Path: p, Mode: uint32(fs.ModeDir) | perm})
			sub, err := openDirBeneath(dir, name, info)
			if err != nil {
				return fmt.Errorf("open directory %q: %w", p, err)
			}
			err = s.walk(ctx, sub, p, maxBytes)
			sub.Close()
			if err != nil {
				return err
			}
		case 0:
			s.bytes += info.Size()
			if s.bytes > maxBytes {
				return fmt.Errorf("%w: more than %d bytes", ErrWorkspaceTooLarge, maxBytes)
			}
			id, idOK := identify(info)
			sum, size := "", info.Size()
			if k, ok := s.known[p]; ok && idOK && k.id == id {
				sum = k.sum
			} else {
				hashedAt := time.Now()
				if sum, size, err = hashFile(dir, name, info); err != nil {
					return fmt.Errorf("read %q: %w", p, err)
				}
				idOK = idOK && id.changed < hashedAt.Add(-racyWindow).UnixNano()
			}
			if idOK {
				s.hashes[p] = hashed{id: id, sum: sum}
			}
			s.files++
			s.entries = append(s.entries, Entry{Path: p, Mode: perm, Size: size, SHA256: sum})
		case fs.ModeSymlink:
			target, err := dir.Readlink(name)
			if err != nil {
				return fmt.Errorf("read symlink %q: %w", p, err)
			}
			if target == "" || len(target) > maxLinkBytes || strings.ContainsRune(target, 0) {
				return fmt.Errorf("symlink %q: target of %d bytes is not kept", p, len(target))
			}
			s.entries = append(s.entries, Entry{Path: p, Mode: uint32(fs.ModeSymlink) | 0o777, Link: target})
		default:
			// Fifos, sockets and devices are not kept: removed, so the local copy is the snapshot.
			if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s %q: %w", info.Mode().Type(), p, err)
			}
			s.skipped = append(s.skipped, p)
		}
	}
	return nil
}

// readNames lists a directory's names, sorted.
func readNames(dir *os.Root) ([]string, error) {
	f, err := dir.OpenFile(".", os.O_RDONLY|oDirectory, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// openDirBeneath opens the directory name of dir that Lstat described as info, refusing
// anything else swapped in since (a symlink is never followed).
func openDirBeneath(dir *os.Root, name string, info fs.FileInfo) (*os.Root, error) {
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	got, err := sub.Stat(".")
	if err != nil {
		sub.Close()
		return nil, err
	}
	if !os.SameFile(got, info) {
		sub.Close()
		return nil, errors.New("directory changed while it was read")
	}
	return sub, nil
}

// openFileBeneath opens the regular file name of dir that Lstat described as info, with
// O_NOFOLLOW, refusing anything else swapped in since.
func openFileBeneath(dir *os.Root, name string, info fs.FileInfo) (*os.File, error) {
	f, err := dir.OpenFile(name, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !got.Mode().IsRegular() || !os.SameFile(got, info) {
		f.Close()
		return nil, errors.New("file changed while it was read")
	}
	return f, nil
}

// hashFile returns the SHA-256 (hex) and size of the regular file name of dir, reading at most
// the size Lstat saw.
func hashFile(dir *os.Root, name string, info fs.FileInfo) (string, int64, error) {
	f, err := openFileBeneath(dir, name, info)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, info.Size()))
	if err != nil {
		return "", 0, err
	}
	if n != info.Size() {
		return "", 0, errors.New("file changed while it was read")
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// readFile returns the bytes of the file at rel (slash-separated) beneath root when their
// SHA-256 is sum, walking one directory at a time without following symlinks.
func readFile(root *os.Root, rel, sum string, size int64) ([]byte, error) {
	dir, done, err := openDirPath(root, manifestDir(rel))
	if err != nil {
		return nil, err
	}
	defer done()
	name := path.Base(rel)
	info, err := dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() || info.Size() != size {
		return nil, errors.New("file changed since it was hashed")
	}
	f, err := openFileBeneath(dir, name, info)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	if sha256Hex(data) != sum {
		return nil, errors.New("file changed since it was hashed")
	}
	return data, nil
}

// objectWorkers is how many objects a commit or a restore moves at once: the stores' latency
// (a FileStore's fsync, a database's round trip) overlaps, and compression uses every core.
const objectWorkers = 8

// bigObject is the size from which files are moved one at a time, so the workers hold at most
// objectWorkers times this in memory besides one big file.
const bigObject = 8 << 20

// each runs fn on every item, objectWorkers at a time (an item of bigObject bytes or more
// alone, after the others), and returns the first error; the others then stop early.
func each[T any](ctx context.Context, items []T, size func(T) int64, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var big []T
	work := make(chan T)
	var wg sync.WaitGroup
	for range min(objectWorkers, len(items)) {
		wg.Go(func() {
			for item := range work {
				if ctx.Err() != nil {
					continue
				}
				if err := fn(ctx, item); err != nil {
					cancel(err)
				}
			}
		})
	}
	for _, item := range items {
		if size(item) >= bigObject {
			big = append(big, item)
			continue
		}
		work <- item
	}
	close(work)
	wg.Wait()
	for _, item := range big {
		if ctx.Err() != nil {
			break
		}
		if err := fn(ctx, item); err != nil {
			cancel(err)
		}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// openDirPath opens the directory at rel (slash-separated, "" for root) beneath root one
// component at a time, each one Lstat said is a directory (no symlink is followed). done closes
// what it opened.
func openDirPath(root *os.Root, rel string) (dir *os.Root, done func(), err error) {
	dir = root
	done = func() {
		if dir != root {
			dir.Close()
		}
	}
	if rel == "" {
		return dir, done, nil
	}
	for _, name := range strings.Split(rel, "/") {
		info, err := dir.Lstat(name)
		if err == nil && !info.IsDir() {
			err = fmt.Errorf("%q is not a directory", name)
		}
		var sub *os.Root
		if err == nil {
			sub, err = openDirBeneath(dir, name, info)
		}
		if err != nil {
			done()
			return nil, nil, err
		}
		done()
		dir = sub
	}
	return dir, done, nil
}
