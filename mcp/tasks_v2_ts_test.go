package mcp_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/wire"
)

// The official 2026-07-28 TypeScript client (@modelcontextprotocol/client 2.4.0) with its tasks
// extension (@modelcontextprotocol/ext-tasks 0.2.2) against a real `toolgate mcp --listen`
// (issue 34 item 5): a quick call through a tasks session is answered inline, with no tasks/get;
// a long one becomes a task whose completed tasks/get the extension accepts (its inlined result
// carries resultType "complete"); a plain call the client aborts (it closes the request's
// stream and sends nothing else) cancels the call.
func TestTasksV2TypeScriptClient(t *testing.T) {
	if _, err := os.Stat(filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", "ext-tasks")); err != nil {
		t.Fatalf("@modelcontextprotocol/ext-tasks is not installed in interop/node_modules: run `make setup` (%v)", err)
	}
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node is missing: install Node.js 20 and run `make setup`")
	f := newFixture(t)
	server := startMCPProcess(t, f)
	const key, aborted = "tasks-v2-held", "tasks-v2-aborted"
	gate := f.tools.hold(key)
	f.tools.hold(aborted) // until cancelled

	cmd := exec.CommandContext(t.Context(), node, "mcp-tasks-v2.mjs")
	cmd.Dir = interopDir
	cmd.Env = childEnv("MCP_URL="+server.url, "MCP_KEY="+key, "MCP_KEY2="+aborted)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	next, wait := lineReport(t, cmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("toolgate mcp:\n%s", server.log())
		}
	})
	type stepReport struct {
		Step       string   `json:"step"`
		Text       string   `json:"text"`
		Error      string   `json:"error"`
		Outcome    string   `json:"outcome"`
		Dispatched []string `json:"dispatched"`
	}
	step := func(name string) stepReport {
		t.Helper()
		var s stepReport
		next(&s)
		require.Equal(t, name, s.Step, "%+v", s)
		return s
	}

	s := step("quick")
	assert.JSONEq(t, `{"text":"hi"}`, s.Text)
	assert.NotContains(t, s.Dispatched, "tasks/get", "a quick call is answered inline: %v", s.Dispatched)

	step("task-created")
	require.Equal(t, key, <-f.tools.started)
	close(gate)
	_, err = fmt.Fprintln(stdin, "go")
	require.NoError(t, err)
	s = step("task")
	require.Empty(t, s.Error, "the extension accepts the completed task")
	assert.JSONEq(t, `{"runs":1}`, s.Text)
	assert.Contains(t, s.Dispatched, "tasks/get")

	require.Equal(t, aborted, <-f.tools.started)
	_, err = fmt.Fprintln(stdin, "go")
	require.NoError(t, err)
	s = step("abort")
	assert.Equal(t, "error", s.Outcome)
	_, err = f.tg.ResultByWorkflowID(t.Context(), "mcp/toolcall-"+aborted)
	require.ErrorIs(t, err, wire.ErrCallCanceled, "the aborted request cancelled its call")
	assert.Equal(t, 1, f.tools.runsOf(aborted))
	_, err = fmt.Fprintln(stdin, "go")
	require.NoError(t, err)
	step("done")
	require.NoError(t, stdin.Close())
	wait()
}
