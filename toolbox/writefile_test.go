package toolbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// approveAll is an in-process approver that approves every call as "test".
func approveAll(context.Context, toolcore.ApprovalRequest) toolcore.ApprovalDecision {
	return toolcore.ApprovalDecision{Approved: true, Reviewer: "test"}
}

func TestWriteFile(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	approved := toolcore.ExecuteOptions{Approve: approveAll}

	res := runCtx(t, context.Background(), reg, NameWriteFile, `{"path":"sub/new.txt","content":"hi there"}`, approved)
	var out writeFileResult
	requireOK(t, res, &out)
	assert.Equal(t, writeFileResult{Path: "sub/new.txt", Bytes: 8}, out)
	data, err := os.ReadFile(filepath.Join(f.root, "sub", "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi there", string(data))

	res = runCtx(t, context.Background(), reg, NameWriteFile, `{"path":"a.txt","content":"replaced"}`, approved)
	requireOK(t, res, &out)
	data, err = os.ReadFile(filepath.Join(f.root, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "replaced", string(data))
}

func TestWriteFileNeedsApproval(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	res := run(t, reg, NameWriteFile, `{"path":"unapproved.txt","content":"x"}`)
	requireError(t, res, toolcore.CodeToolApprovalRejected)
	_, err := os.Stat(filepath.Join(f.root, "unapproved.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing is written without approval")
}

func TestWriteFileRefusesEscapes(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	approved := toolcore.ExecuteOptions{Approve: approveAll}
	for _, p := range []string{"link-out", "dir-out/x.txt", "sub/esc/y.txt", "abs-out", "missing/dir.txt", "sub"} {
		t.Run(p, func(t *testing.T) {
			res := runCtx(t, context.Background(), reg, NameWriteFile, `{"path":"`+p+`","content":"pwned"}`, approved)
			msg := requireError(t, res, toolcore.CodeToolExecutionFailed)
			assert.NotContains(t, msg, f.base, "messages never name the root")
		})
	}
	secretData, err := os.ReadFile(filepath.Join(f.base, "outside", "secret"))
	require.NoError(t, err)
	assert.Equal(t, secret, string(secretData))
	entries, err := os.ReadDir(filepath.Join(f.base, "outside"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing new outside the root")
}

func TestWriteFileRejects(t *testing.T) {
	reg := newTestRegistry(t, Config{Root: t.TempDir()})
	assertRejects(t, reg, NameWriteFile, []rejectCase{
		{name: "no path", give: `{"content":"x"}`, want: `"path" is required`},
		{name: "no content", give: `{"path":"a"}`, want: `"content" is required`},
		{name: "dotdot", give: `{"path":"../a","content":"x"}`, want: `"path" must not contain ".." elements`},
		{name: "absolute", give: `{"path":"/etc/passwd","content":"x"}`, want: `"path" must be relative to the served directory, not absolute`},
		{name: "too long", give: `{"path":"a","content":"` + strings.Repeat("x", MaxWriteBytes+1) + `"}`, want: `"content" must be at most 65536 bytes`},
		{name: "unknown member", give: `{"path":"a","content":"x","mode":1}`, want: `unknown argument "mode"; allowed: "path", "content"`},
	})
}

// A hard link inside the root to a file outside it: write_file replaces the link's directory
// entry (temp file + rename) and never writes through it, so the outside file keeps its content
// (issue 22 item 8).
func TestWriteFileDoesNotWriteThroughAHardLink(t *testing.T) {
	f := newFSFixture(t)
	outside := filepath.Join(f.base, "outside", "secret")
	link := filepath.Join(f.root, "hardlink.txt")
	require.NoError(t, os.Link(outside, link))
	require.NoError(t, os.Chmod(link, 0o640))
	reg := newTestRegistry(t, Config{Root: f.root})

	res := runCtx(t, context.Background(), reg, NameWriteFile, `{"path":"hardlink.txt","content":"pwned"}`, toolcore.ExecuteOptions{Approve: approveAll})
	var out writeFileResult
	requireOK(t, res, &out)
	secretData, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, secret, string(secretData), "the file outside the root is untouched")
	data, err := os.ReadFile(link)
	require.NoError(t, err)
	assert.Equal(t, "pwned", string(data), "the path inside the root has the new content")
	fi, err := os.Stat(link)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the replaced file keeps its permission bits")
	entries, err := os.ReadDir(f.root)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".toolgate-", "no temporary file is left")
	}
}
