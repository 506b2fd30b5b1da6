package toolbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolcore"
)

// MaxWriteBytes bounds the content write_file writes (the validator enforces it).
const MaxWriteBytes = 64 << 10

// writeFileArgs are write_file's validated arguments.
type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// writeFileResult is write_file's output.
type writeFileResult struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

// writeFileTool is write_file: Unsafe (a repeat could overwrite a later change) and approval
// required, so every write is seen by a human before it happens.
func writeFileTool(s settings) (toolcore.Tool, error) {
	f := files{s: s}
	return toolcore.Define(toolcore.Definition[writeFileArgs]{
		Name: NameWriteFile,
		Description: `Write a text file under the served directory, creating or replacing it: ` +
			`{"path":"notes/a.txt","content":"..."} gives {"path","bytes"}. The parent directory must ` +
			`exist. Every write waits for a human's approval. Paths are relative; ".." is not allowed.`,
		Validate: validateWriteFile,
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["path","content"],`+
			`"properties":{"path":{"type":"string","minLength":1,"description":"File path relative to the served directory (at most %d bytes, no \"..\", not absolute); its directory must exist."},`+
			`"content":{"type":"string","maxLength":%d,"description":"The whole new text of the file (UTF-8, at most %d bytes)."}}}`, MaxPathBytes, MaxWriteBytes, MaxWriteBytes)),
		OutputSchema: json.RawMessage(`{"type":"object","required":["path","bytes"],"properties":{` +
			`"path":{"type":"string"},"bytes":{"type":"integer","description":"Bytes written."}}}`),
		Execute: f.write,
		Options: toolcore.Options{SideEffect: toolcore.Unsafe, RequireApproval: true},
	})
}

func validateWriteFile(args toolcore.Arguments) toolcore.Decision[writeFileArgs] {
	f, reason := readFields(args, "path", "content")
	if reason != "" {
		return toolcore.Reject[writeFileArgs](reason)
	}
	p, present, reason := f.str("path")
	switch {
	case reason != "":
		return toolcore.Reject[writeFileArgs](reason)
	case !present:
		return toolcore.Reject[writeFileArgs](fmt.Sprintf("%q is required", "path"))
	}
	if reason := checkPath(p); reason != "" {
		return toolcore.Reject[writeFileArgs](reason)
	}
	content, present, reason := f.str("content")
	switch {
	case reason != "":
		return toolcore.Reject[writeFileArgs](reason)
	case !present:
		return toolcore.Reject[writeFileArgs](fmt.Sprintf("%q is required", "content"))
	case len(content) > MaxWriteBytes:
		return toolcore.Reject[writeFileArgs](fmt.Sprintf("%q must be at most %d bytes", "content", MaxWriteBytes))
	case !utf8.ValidString(content):
		return toolcore.Reject[writeFileArgs](fmt.Sprintf("%q must be valid UTF-8", "content"))
	}
	return toolcore.Accept(writeFileArgs{Path: p, Content: content})
}

// write writes the content to a new temporary file beside the target, through os.Root (no escape
// at access time), and renames it over the target: the file is replaced, never written in place,
// so a target that is a hard link to a file outside the root leaves that file untouched, and a
// reader never sees half a write. An existing file's permission bits are kept. It never creates
// directories.
func (f files) write(ctx context.Context, a writeFileArgs) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("write_file: %w", context.Cause(ctx))
	}
	root, err := f.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	n, err := f.replaceFile(root, a.Path, a.Content, func(existing os.FileMode) os.FileMode { return existing }, nil)
	if err != nil {
		return nil, err
	}
	return writeFileResult{Path: a.Path, Bytes: n}, nil
}

// replaceFile replaces the regular file p under root with content as write describes; mode gives
// the new file's permission bits from the existing file's (0644 for a new file), and owner, when
// not nil, owns it.
func (f files) replaceFile(root *os.Root, p, content string, mode func(existing os.FileMode) os.FileMode, owner *sandbox.Owner) (int, error) {
	perm := mode(0o644)
	if fi, err := root.Lstat(p); err == nil {
		if !fi.Mode().IsRegular() {
			return 0, fmt.Errorf("write %q: not a regular file", p)
		}
		perm = mode(fi.Mode().Perm())
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".toolgate-"+hex.EncodeToString(nonce[:])+".tmp")
	file, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return 0, f.fsError("write", p, err)
	}
	n, err := file.WriteString(content)
	if err == nil {
		err = file.Chmod(perm) // the umask narrowed OpenFile's mode
	}
	if err == nil && owner != nil {
		err = file.Chown(owner.UID, owner.GID)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, p)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return 0, f.fsError("write", p, err)
	}
	return n, nil
}
