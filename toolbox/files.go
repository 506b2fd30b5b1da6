package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/toolcore"
)

// readFileArgs are read_file's validated arguments.
type readFileArgs struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
}

// readFileResult is read_file's output.
type readFileResult struct {
	Path string `json:"path"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// Offset is the byte offset Content starts at.
	Offset int64 `json:"offset"`
	// Content is the text read; absent when the file is binary.
	Content *string `json:"content,omitempty"`
	Binary  bool    `json:"binary,omitempty"`
	// Truncated is true when the file continues after Content; NextOffset is where.
	Truncated  bool  `json:"truncated"`
	NextOffset int64 `json:"nextOffset,omitempty"`
}

// listDirArgs are list_dir's validated arguments.
type listDirArgs struct {
	Path string `json:"path"`
}

// listDirResult is list_dir's output.
type listDirResult struct {
	Path string `json:"path"`
	// Entries are sorted names; directories end in "/".
	Entries []string `json:"entries"`
	// Truncated is true when the directory holds more entries than Entries.
	Truncated bool `json:"truncated"`
}

// files serves read_file and list_dir inside Config.Root. Every call opens the root afresh with
// os.OpenRoot and resolves paths through it: "..", absolute paths and symbolic links that leave
// the root (or are absolute) are refused by the kernel-level walk of os.Root, at the time of the
// access, so swapping a link after validation gains nothing.
type files struct {
	s settings
	// readTool and listTool name the tools an error message points to, and place the root as the
	// model knows it. Optional: default read_file, list_dir and "the served directory".
	readTool, listTool, place string
}

// names returns the read tool, the list tool and the root's name for messages.
func (f files) names() (read, list, place string) {
	read, list, place = f.readTool, f.listTool, f.place
	if read == "" {
		read = NameReadFile
	}
	if list == "" {
		list = NameListDir
	}
	if place == "" {
		place = "the served directory"
	}
	return read, list, place
}

func readFileTool(s settings) (toolcore.Tool, error) {
	f := files{s: s}
	return toolcore.Define(toolcore.Definition[readFileArgs]{
		Name: NameReadFile,
		Description: `Read a text file under the served directory: {"path":"notes/a.txt","offset":0} gives ` +
			`{"path","size","offset","content","truncated","nextOffset"}; call again with "offset" set ` +
			`to "nextOffset" to read on. Paths are relative; ".." is not allowed.`,
		Validate: validateReadFile,
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["path"],`+
			`"properties":{"path":{"type":"string","minLength":1,"description":"File path relative to the served directory (at most %d bytes, no \"..\", not absolute)."},`+
			`"offset":{"type":"integer","minimum":0,"description":"Byte offset to start reading at: 0 (the default), or the nextOffset of the previous read."}}}`, MaxPathBytes)),
		OutputSchema: json.RawMessage(`{"type":"object","required":["path","size","offset","truncated"],"properties":{` +
			`"path":{"type":"string"},"size":{"type":"integer","description":"File size in bytes."},` +
			`"offset":{"type":"integer","description":"Byte offset content starts at."},` +
			`"content":{"type":"string","description":"The text read; absent when the file is binary."},` +
			`"binary":{"type":"boolean"},"truncated":{"type":"boolean","description":"True when the file continues after content."},` +
			`"nextOffset":{"type":"integer","description":"Where to read on when truncated."}}}`),
		Execute: f.read,
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
}

func listDirTool(s settings) (toolcore.Tool, error) {
	f := files{s: s}
	return toolcore.Define(toolcore.Definition[listDirArgs]{
		Name: NameListDir,
		Description: `List a directory under the served directory: {"path":"."} gives {"path","entries",` +
			`"truncated"}, entries sorted, directories ending in "/". Paths are relative; ".." is not allowed.`,
		Validate: validateListDir,
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,`+
			`"properties":{"path":{"type":"string","minLength":1,"description":"Directory path relative to the served directory (at most %d bytes, no \"..\", not absolute). Default \".\", the served directory itself."}}}`, MaxPathBytes)),
		OutputSchema: json.RawMessage(`{"type":"object","required":["path","entries","truncated"],"properties":{` +
			`"path":{"type":"string"},"entries":{"type":"array","items":{"type":"string"},"description":"Sorted names; directories end in \"/\"."},` +
			`"truncated":{"type":"boolean","description":"True when the directory holds more entries."}}}`),
		Execute: f.list,
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
}

func validateReadFile(args toolcore.Arguments) toolcore.Decision[readFileArgs] {
	return validateReadFileIn(args, "the served directory")
}

// validateReadFileIn is validateReadFile of a path in place (named as the model knows it).
func validateReadFileIn(args toolcore.Arguments, place string) toolcore.Decision[readFileArgs] {
	f, reason := readFields(args, "path", "offset")
	if reason != "" {
		return toolcore.Reject[readFileArgs](reason)
	}
	p, present, reason := f.str("path")
	switch {
	case reason != "":
		return toolcore.Reject[readFileArgs](reason)
	case !present:
		return toolcore.Reject[readFileArgs](fmt.Sprintf("%q is required", "path"))
	}
	if reason := checkPathIn(p, "path", place); reason != "" {
		return toolcore.Reject[readFileArgs](reason)
	}
	a := readFileArgs{Path: p}
	n, present, reason := f.number("offset")
	if reason != "" {
		return toolcore.Reject[readFileArgs](reason)
	}
	if present {
		off, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || off < 0 {
			return toolcore.Reject[readFileArgs](fmt.Sprintf("%q must be a whole number of bytes, 0 or more", "offset"))
		}
		a.Offset = off
	}
	return toolcore.Accept(a)
}

func validateListDir(args toolcore.Arguments) toolcore.Decision[listDirArgs] {
	return validateListDirIn(args, "the served directory")
}

// validateListDirIn is validateListDir of a path in place (named as the model knows it).
func validateListDirIn(args toolcore.Arguments, place string) toolcore.Decision[listDirArgs] {
	f, reason := readFields(args, "path")
	if reason != "" {
		return toolcore.Reject[listDirArgs](reason)
	}
	p, present, reason := f.str("path")
	switch {
	case reason != "":
		return toolcore.Reject[listDirArgs](reason)
	case !present:
		p = "."
	}
	if reason := checkPathIn(p, "path", place); reason != "" {
		return toolcore.Reject[listDirArgs](reason)
	}
	return toolcore.Accept(listDirArgs{Path: p})
}

// checkPath refuses, lexically, paths that are not plainly inside the root. os.Root enforces
// the same at access time (and follows symbolic links safely); this gives the model a clear
// reason before any effect.
func checkPath(p string) string {
	return checkPathIn(p, "path", "the served directory")
}

// checkPathIn is checkPath of the member key, in place (named as the model knows it).
func checkPathIn(p, key, place string) string {
	switch {
	case p == "":
		return fmt.Sprintf(`%q must not be empty; use "." for %s`, key, place)
	case len(p) > MaxPathBytes:
		return fmt.Sprintf("%q must be at most %d bytes", key, MaxPathBytes)
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Sprintf("%q must not contain NUL bytes", key)
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return fmt.Sprintf("%q must be relative to %s, not absolute", key, place)
	case slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".."):
		return fmt.Sprintf(`%q must not contain ".." elements`, key)
	case !filepath.IsLocal(p):
		return fmt.Sprintf("%q must name a place inside %s", key, place)
	}
	return ""
}

// openRoot opens the served directory for one call.
func (f files) openRoot() (*os.Root, error) {
	root, err := os.OpenRoot(f.s.Root)
	if err != nil {
		// The operator's path is not the model's business.
		_, _, place := f.names()
		return nil, fmt.Errorf("%s is unavailable", place)
	}
	return root, nil
}

func (f files) read(ctx context.Context, a readFileArgs) (any, error) {
	if err := ctx.Err(); err != nil {
		read, _, _ := f.names()
		return nil, fmt.Errorf("%s: %w", read, context.Cause(ctx))
	}
	root, err := f.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// The type is checked before opening (Stat opens nothing), so a FIFO or device node is never
	// opened; the open itself is non-blocking, and the type is checked again on what was opened,
	// in case the path was swapped in between.
	fi, err := root.Stat(a.Path)
	if err != nil {
		return nil, f.fsError("read", a.Path, err)
	}
	if reason := f.notRegular(fi); reason != "" {
		return nil, fmt.Errorf("read %q: %s", a.Path, reason)
	}
	file, err := root.OpenFile(a.Path, readOpenFlags, 0)
	if err != nil {
		return nil, f.fsError("read", a.Path, err)
	}
	defer file.Close()
	if fi, err = file.Stat(); err != nil {
		return nil, f.fsError("read", a.Path, err)
	}
	if reason := f.notRegular(fi); reason != "" {
		return nil, fmt.Errorf("read %q: %s", a.Path, reason)
	}
	out := readFileResult{Path: shownPath(a.Path), Size: fi.Size(), Offset: a.Offset}
	if a.Offset >= fi.Size() {
		empty := ""
		out.Content = &empty
		return out, nil
	}
	buf := make([]byte, min(int64(f.s.ReadMaxBytes), fi.Size()-a.Offset))
	n, err := io.ReadFull(io.NewSectionReader(file, a.Offset, int64(len(buf))), buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) { // the file shrank
		return nil, f.fsError("read", a.Path, err)
	}
	buf = buf[:n]
	// An offset inside a rune: start at the next rune.
	skip := 0
	for a.Offset > 0 && skip < len(buf) && skip < utf8.UTFMax-1 && !utf8.RuneStart(buf[skip]) {
		skip++
	}
	out.Offset += int64(skip)
	buf = buf[skip:]
	end := out.Offset + int64(len(buf))
	text, ok := asText(buf, end >= fi.Size())
	if !ok {
		// Only the bytes up to end were looked at: say so, and where the rest starts.
		out.Binary = true
		if end < fi.Size() {
			out.Truncated, out.NextOffset = true, end
		}
		return out, nil
	}
	return fitText(text, func(shown string, _ bool) any {
		r := out
		r.Content = &shown
		if next := r.Offset + int64(len(shown)); next < fi.Size() {
			r.Truncated, r.NextOffset = true, next
		}
		return r
	}), nil
}

func (f files) list(ctx context.Context, a listDirArgs) (any, error) {
	if err := ctx.Err(); err != nil {
		_, list, _ := f.names()
		return nil, fmt.Errorf("%s: %w", list, context.Cause(ctx))
	}
	root, err := f.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// As in read: the type is checked before opening, and the open (O_DIRECTORY where there is
	// one) cannot open a FIFO or a device node swapped in after the check.
	fi, err := root.Stat(a.Path)
	if err != nil {
		return nil, f.fsError("list", a.Path, err)
	}
	if !fi.IsDir() {
		return nil, f.notADirectory(a.Path)
	}
	dir, err := root.OpenFile(a.Path, listOpenFlags, 0)
	if err != nil {
		return nil, f.fsError("list", a.Path, err)
	}
	defer dir.Close()
	if fi, err = dir.Stat(); err != nil {
		return nil, f.fsError("list", a.Path, err)
	}
	if !fi.IsDir() {
		return nil, f.notADirectory(a.Path)
	}
	names := []string{} // an empty directory lists [], not null
	more := false
	for {
		entries, err := dir.ReadDir(256)
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			names = append(names, name)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(entries) == 0) {
			break
		}
		if err != nil {
			return nil, f.fsError("list", a.Path, err)
		}
		if len(names) >= maxListScan {
			more = true
			break
		}
	}
	slices.Sort(names)
	shown := shownPath(a.Path)
	if len(names) > f.s.ListMaxEntries {
		names, more = names[:f.s.ListMaxEntries], true
	}
	return fitPrefix(len(names), func(k int) any {
		return listDirResult{Path: shown, Entries: names[:k:k], Truncated: more || k < len(names)}
	}), nil
}

// notADirectory is list's error for a path that is not a directory.
func (f files) notADirectory(p string) error {
	read, _, _ := f.names()
	return fmt.Errorf("list %q: not a directory; use %s", p, read)
}

// notRegular says why fi is not a file read_file reads, or "".
func (f files) notRegular(fi fs.FileInfo) string {
	_, list, _ := f.names()
	switch {
	case fi.IsDir():
		return "is a directory; use " + list
	case !fi.Mode().IsRegular():
		return "not a regular file"
	}
	return ""
}

// shownPath is the path as a result echoes it: at most maxShownChars characters, so that a long
// path cannot push the result's other fields (truncated, size, nextOffset) out of the content
// cap.
func shownPath(p string) string {
	return shorten(p, maxShownChars)
}

// fsError explains a file system error without the operator's paths.
func (f files) fsError(op, p string, err error) error {
	_, _, place := f.names()
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %q: no such file or directory", op, p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s %q: permission denied", op, p)
	case errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes"):
		return fmt.Errorf("%s %q: the path leads outside %s (symbolic links must stay inside it and be relative)", op, p, place)
	case errors.As(err, &pe):
		return fmt.Errorf("%s %q: %s", op, p, pe.Err.Error())
	default:
		return fmt.Errorf("%s %q: %s", op, p, err.Error())
	}
}
