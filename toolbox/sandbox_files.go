package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/toolcore"
)

// workspaceWriteArgs are workspace_write_file's validated arguments.
type workspaceWriteArgs struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	Executable bool   `json:"executable,omitempty"`
}

// workspaceWriteResult is workspace_write_file's output, and what its commit records.
type workspaceWriteResult struct {
	Path      string         `json:"path"`
	Bytes     int            `json:"bytes"`
	Workspace workspaceState `json:"workspace"`
}

// The workspace file tools are the toolbox's file tools (files.go) with the call's workspace as
// their root: the same os.Root walk, so no path, symbolic link or swapped link the sandbox left
// leads outside it. Reads restore the workspace first (Open); the write commits it.

func (t *sandboxTools) readFileTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[readFileArgs]{
		Name: NameWorkspaceReadFile,
		Description: `Read a text file of this agent run's workspace (where exec runs): {"path":"main.go","offset":0} gives ` +
			`{"path","size","offset","content","truncated","nextOffset"}; call again with "offset" set to "nextOffset" to read on.`,
		Validate: func(args toolcore.Arguments) toolcore.Decision[readFileArgs] {
			return validateReadFileIn(args, "the workspace")
		},
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["path"],`+
			`"properties":{"path":{"type":"string","minLength":1,"description":"File path relative to the workspace (at most %d bytes, no \"..\", not absolute)."},`+
			`"offset":{"type":"integer","minimum":0,"description":"Byte offset to start reading at: 0 (the default), or the nextOffset of the previous read."}}}`, MaxPathBytes)),
		Execute: func(ctx context.Context, a readFileArgs) (any, error) {
			return t.inRoot(ctx, NameWorkspaceReadFile, func(f files) (any, error) { return f.read(ctx, a) })
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly, Timeout: t.timeout},
	})
}

func (t *sandboxTools) listDirTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[listDirArgs]{
		Name: NameWorkspaceListDir,
		Description: `List a directory of this agent run's workspace (where exec runs): {"path":"."} gives {"path","entries",` +
			`"truncated"}, entries sorted, directories ending in "/".`,
		Validate: func(args toolcore.Arguments) toolcore.Decision[listDirArgs] {
			return validateListDirIn(args, "the workspace")
		},
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,`+
			`"properties":{"path":{"type":"string","minLength":1,"description":"Directory path relative to the workspace (at most %d bytes, no \"..\", not absolute). Default \".\", the workspace's root."}}}`, MaxPathBytes)),
		Execute: func(ctx context.Context, a listDirArgs) (any, error) {
			return t.inRoot(ctx, NameWorkspaceListDir, func(f files) (any, error) { return f.list(ctx, a) })
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly, Timeout: t.timeout},
	})
}

// writeFileTool is workspace_write_file: Idempotent (writing the same content to the same path
// again leaves the same file) and without approval: the workspace is the sandbox's, not the
// host's.
func (t *sandboxTools) writeFileTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[workspaceWriteArgs]{
		Name: NameWorkspaceWriteFile,
		Description: `Write a text file in this agent run's workspace (where exec runs), creating it and its directories or ` +
			`replacing it: {"path":"src/main.go","content":"...","executable":false} gives {"path","bytes","workspace":{"version","changed"}}.`,
		Validate: validateWorkspaceWrite,
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["path","content"],`+
			`"properties":{"path":{"type":"string","minLength":1,"description":"File path relative to the workspace (at most %d bytes, no \"..\", not absolute)."},`+
			`"content":{"type":"string","maxLength":%d,"description":"The whole new text of the file (UTF-8, at most %d bytes)."},`+
			`"executable":{"type":"boolean","description":"Make the file executable (default false; an existing file keeps its mode)."}}}`, MaxPathBytes, MaxWorkspaceWriteBytes, MaxWorkspaceWriteBytes)),
		OutputSchema: json.RawMessage(`{"type":"object","required":["path","bytes","workspace"],"properties":{` +
			`"path":{"type":"string"},"bytes":{"type":"integer","description":"Bytes written."},` +
			`"workspace":{"type":"object","properties":{"version":{"type":"integer"},"changed":{"type":"boolean"}}}}}`),
		Execute: t.write,
		Options: toolcore.Options{SideEffect: toolcore.Idempotent, Timeout: t.timeout},
	})
}

func validateWorkspaceWrite(args toolcore.Arguments) toolcore.Decision[workspaceWriteArgs] {
	f, reason := readFields(args, "path", "content", "executable")
	if reason != "" {
		return toolcore.Reject[workspaceWriteArgs](reason)
	}
	p, present, reason := f.str("path")
	switch {
	case reason != "":
		return toolcore.Reject[workspaceWriteArgs](reason)
	case !present:
		return toolcore.Reject[workspaceWriteArgs](fmt.Sprintf("%q is required", "path"))
	}
	if reason := checkPathIn(p, "path", "the workspace"); reason != "" {
		return toolcore.Reject[workspaceWriteArgs](reason)
	}
	if filepath.Clean(p) == "." {
		return toolcore.Reject[workspaceWriteArgs](fmt.Sprintf("%q must name a file, not the workspace itself", "path"))
	}
	content, present, reason := f.str("content")
	switch {
	case reason != "":
		return toolcore.Reject[workspaceWriteArgs](reason)
	case !present:
		return toolcore.Reject[workspaceWriteArgs](fmt.Sprintf("%q is required", "content"))
	case len(content) > MaxWorkspaceWriteBytes:
		return toolcore.Reject[workspaceWriteArgs](fmt.Sprintf("%q must be at most %d bytes", "content", MaxWorkspaceWriteBytes))
	case !utf8.ValidString(content):
		return toolcore.Reject[workspaceWriteArgs](fmt.Sprintf("%q must be valid UTF-8", "content"))
	}
	a := workspaceWriteArgs{Path: p, Content: content}
	if raw, ok := f["executable"]; ok {
		if kind(raw) != "a boolean" {
			return toolcore.Reject[workspaceWriteArgs](fmt.Sprintf("%q must be a boolean, not %s", "executable", kind(raw)))
		}
		a.Executable = string(raw) == "true"
	}
	return toolcore.Accept(a)
}

// inRoot opens the call's workspace (restored to its head), runs do with the file tools rooted
// at it, and closes it.
func (t *sandboxTools) inRoot(ctx context.Context, tool string, do func(files) (any, error)) (any, error) {
	ws, err := t.open(ctx, tool)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	f := t.files
	f.s.Root = ws.Dir
	return do(f)
}

// write writes the file in the call's workspace (its missing directories created, owned by the
// sandbox's user) and commits the workspace.
func (t *sandboxTools) write(ctx context.Context, a workspaceWriteArgs) (any, error) {
	const tool = NameWorkspaceWriteFile
	ws, err := t.open(ctx, tool)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	if r, ok := recorded[workspaceWriteResult](ctx, t, ws.Head); ok {
		return r, nil
	}
	f := t.files
	f.s.Root = ws.Dir
	root, err := f.openRoot()
	if err != nil {
		return nil, err
	}
	n, err := func() (int, error) {
		defer root.Close()
		if err := t.makeParents(root, a.Path); err != nil {
			return 0, err
		}
		mode := func(existing os.FileMode) os.FileMode {
			if a.Executable {
				return existing | 0o111
			}
			return existing
		}
		return f.replaceFile(root, a.Path, a.Content, mode, t.cfg.Owner)
	}()
	if err != nil {
		t.discard(ctx, tool, ws)
		return nil, err
	}
	res := workspaceWriteResult{Path: shownPath(a.Path), Bytes: n, Workspace: workspaceState{Version: ws.Head.Version + 1, Changed: true}}
	state, err := t.commit(ctx, tool, ws, res)
	if err != nil {
		return nil, err
	}
	res.Workspace = state
	return res, nil
}

// makeParents creates the directories above p under root that are missing (0755, owned by the
// configured owner), each through root: none is made outside it.
func (t *sandboxTools) makeParents(root *os.Root, p string) error {
	dir := filepath.Dir(filepath.Clean(p))
	if dir == "." {
		return nil
	}
	parts := strings.Split(filepath.ToSlash(dir), "/")
	for i := range parts {
		sub := filepath.Join(parts[:i+1]...)
		fi, err := root.Lstat(sub)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			// os.Root follows a link that stays inside the root; Stat says where it leads.
			if st, serr := root.Stat(sub); serr == nil && st.IsDir() {
				continue
			}
			return fmt.Errorf("write %q: %q is not a directory", p, sub)
		case err == nil:
			return fmt.Errorf("write %q: %q is not a directory", p, sub)
		case !errors.Is(err, fs.ErrNotExist):
			return t.files.fsError("write", p, err)
		}
		if err := root.Mkdir(sub, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return t.files.fsError("write", p, err)
		}
		if t.cfg.Owner != nil {
			if err := root.Lchown(sub, t.cfg.Owner.UID, t.cfg.Owner.GID); err != nil {
				return t.files.fsError("write", p, err)
			}
		}
	}
	return nil
}
