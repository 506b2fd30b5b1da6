package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/fixtures"
)

// e2ePolicy is issue 32's example: guests may not write files; add only below 1000.
const e2ePolicy = fixtures.ExamplePolicy

// TestPolicyEndToEnd runs toolgate dev --policy as a real process: the denied calls end
// POLICY_DENIED with no effect, the allowed one runs; a changed file is reloaded; the exported
// histories replay with this binary (no policy) and `policy test` with the first set lists exactly
// the call the reloaded set decided otherwise.
func TestPolicyEndToEnd(t *testing.T) {
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "policy.cedar")
	require.NoError(t, os.WriteFile(policyFile, []byte(e2ePolicy), 0o600))
	root := t.TempDir()
	dev := startDev(t, "--data-dir", t.TempDir(), "--no-ui", "--root", root, "--policy", policyFile)
	dev.waitLine(t, dev.stderr, "policy set loaded")
	env := dev.env()

	got := toolgate(t, env, "", "call", "--id", "pol-write", "write_file", `{"path":"notes.txt","content":"hi"}`, "--as", "bob", "--as-group", "guests")
	assert.Equal(t, ExitErrorResult, got.code, got.stderr)
	assert.Contains(t, got.stdout, `POLICY_DENIED\",\"message\":\"denied by policy \\\"guests-no-write\\\": guests may not write files; the tool did not run`)
	assert.NoFileExists(t, filepath.Join(root, "notes.txt"), "nothing ran")

	got = toolgate(t, env, "", "call", "--id", "pol-add-big", "add", `{"left":5000,"right":1}`, "--as", "alice")
	assert.Equal(t, ExitErrorResult, got.code, got.stderr)
	assert.Contains(t, got.stdout, `denied by policy \\\"add-small\\\"`)

	got = toolgate(t, env, "", "call", "--id", "pol-add-small", "add", `{"left":5,"right":1}`, "--as", "alice")
	assert.Equal(t, ExitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, `{\"sum\":6}`)

	// A changed valid file is reloaded: add is no longer bounded.
	require.NoError(t, os.WriteFile(policyFile, []byte(strings.Replace(e2ePolicy, "< 1000", "< 1000000", 1)), 0o600))
	dev.waitLine(t, dev.stderr, "policy set reloaded")
	got = toolgate(t, env, "", "call", "--id", "pol-add-big-2", "add", `{"left":5000,"right":1}`, "--as", "alice")
	assert.Equal(t, ExitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, `{\"sum\":5001}`)

	histories := t.TempDir()
	var files []string
	for _, id := range []string{"pol-write", "pol-add-big", "pol-add-small", "pol-add-big-2"} {
		h := toolgate(t, env, "", "history", "toolcall-"+id)
		require.Equal(t, ExitOK, h.code, h.stderr)
		file := filepath.Join(histories, id+".json")
		require.NoError(t, os.WriteFile(file, []byte(h.stdout), 0o600))
		files = append(files, file)
	}
	replayed := toolgate(t, env, "", append([]string{"replay", "--root", root}, files...)...)
	assert.Equal(t, ExitOK, replayed.code, replayed.stdout+replayed.stderr)
	assert.Equal(t, 4, strings.Count(replayed.stdout, "PASS "), replayed.stdout)

	original := filepath.Join(dir, "original.cedar")
	require.NoError(t, os.WriteFile(original, []byte(e2ePolicy), 0o600))
	tested := toolgate(t, env, "", "policy", "test", original, "--histories", histories, "--root", root)
	assert.Equal(t, ExitErrorResult, tested.code, tested.stderr)
	assert.Equal(t, "CHANGED pol-add-big-2.json toolcall-pol-add-big-2 add alice: allow -> deny add-small\n", tested.stdout)
	assert.Contains(t, tested.stderr, "4 calls decided, 1 would change")

	// The same calls read from the namespace (visibility may lag the last call by a moment).
	require.Eventually(t, func() bool {
		tested = toolgate(t, env, "", "policy", "test", original, "--since", "1h", "--root", root)
		return strings.Contains(tested.stderr, "4 calls decided")
	}, lineTimeout, 100*time.Millisecond, tested.stderr)
	assert.Equal(t, ExitErrorResult, tested.code, tested.stderr)
	assert.Equal(t, "CHANGED namespace toolcall-pol-add-big-2 add alice: allow -> deny add-small\n", tested.stdout)
	assert.Contains(t, tested.stderr, "4 calls decided, 1 would change")
}
