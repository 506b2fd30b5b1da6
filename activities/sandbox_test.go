package activities_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// sandboxRegistry is the sandbox tools on the real bubblewrap runner, with workspaces in a file
// store, and a run_tests command declared idempotent that appends to runs.log.
func sandboxRegistry(t *testing.T) *toolcore.Registry {
	t.Helper()
	runner, err := sandbox.NewRunner(sandbox.RunnerConfig{})
	if err != nil {
		t.Fatalf("the sandbox tests need bubblewrap (run make setup): %v", err)
	}
	parent := t.TempDir()
	require.NoError(t, os.Chmod(parent, 0o711))
	require.NoError(t, os.Chmod(filepath.Dir(parent), 0o711))
	ws, err := sandbox.NewWorkspaces(sandbox.Config{Dir: filepath.Join(parent, "work"), Store: sandbox.FileStore(t.TempDir(), nil), Runner: runner,
		Owner: &sandbox.Owner{UID: runner.UID(), GID: runner.GID()}})
	require.NoError(t, err)
	tools, err := toolbox.SandboxTools(toolbox.Config{Sandbox: &toolbox.Sandbox{Workspaces: ws, Runner: runner,
		Commands: []toolbox.SandboxCommand{{Name: "run_tests", Shell: "echo run >> runs.log; wc -l < runs.log", Idempotent: true}}}})
	require.NoError(t, err)
	return newRegistry(t, tools...)
}

// reconcileTool runs ReconcileTool once in the activity test environment.
func reconcileTool(t *testing.T, reg *toolcore.Registry, in activities.ReconcileToolInput) activities.ReconcileToolOutput {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	(&activities.Activities{Registry: reg}).Register(env)
	val, err := env.ExecuteActivity(wire.ReconcileToolName, in)
	require.NoError(t, err)
	var out activities.ReconcileToolOutput
	require.NoError(t, val.Get(&out))
	return out
}

// exec's Reconcile through ReconcileTool: an attempt that committed the workspace before its
// worker was lost is found with the result it recorded (the command is not run again); one
// whose workspace nobody committed since it started is not found, and exec (without network)
// declares the rerun safe.
func TestSandboxExecReconcile(t *testing.T) {
	reg := sandboxRegistry(t)
	exec := func(key, args string) activities.ExecuteToolOutput {
		in := activities.ExecuteToolInput{ToolCallID: "c-" + key, ToolName: toolbox.NameExec, Accepted: json.RawMessage(args), IdempotencyKey: key, Run: "agent-1"}
		out, err := execute(t, reg, in, nil)
		require.NoError(t, err)
		return out
	}
	lost := exec("toolcall-lost", `{"shell":"echo made > made.txt; echo done"}`)
	require.False(t, lost.IsError, lost.Content)

	got := reconcileTool(t, reg, activities.ReconcileToolInput{ToolCallID: "c-toolcall-lost", ToolName: toolbox.NameExec,
		IdempotencyKey: "toolcall-lost", Run: "agent-1", LastCheckpoint: json.RawMessage(`{"base":0}`)})
	assert.Equal(t, activities.ReconcileToolOutput{Found: true, Content: lost.Content}, got)

	got = reconcileTool(t, reg, activities.ReconcileToolInput{ToolCallID: "c-toolcall-gone", ToolName: toolbox.NameExec,
		IdempotencyKey: "toolcall-gone", Run: "agent-1", LastCheckpoint: json.RawMessage(`{"base":1}`)})
	assert.Equal(t, activities.ReconcileToolOutput{}, got, "nothing committed since the lost attempt started")
	tool, _ := reg.Get(toolbox.NameExec)
	assert.True(t, tool.Options().RerunWhenNotReconciled)

	got = reconcileTool(t, reg, activities.ReconcileToolInput{ToolCallID: "c-toolcall-other", ToolName: toolbox.NameExec,
		IdempotencyKey: "toolcall-other", Run: "agent-1", LastCheckpoint: json.RawMessage(`{"base":0}`)})
	assert.True(t, got.Found)
	assert.True(t, got.IsError, "others committed since it started: outcome unknown, not run again")
	assert.Contains(t, got.Content, "outcome unknown")
}

// An idempotent command's retry (ExecuteTool again under the same key after its attempt
// committed) returns the first attempt's result without running the command again.
func TestSandboxIdempotentCommandRetried(t *testing.T) {
	reg := sandboxRegistry(t)
	in := activities.ExecuteToolInput{ToolCallID: "c1", ToolName: "run_tests", Accepted: json.RawMessage(`{}`), IdempotencyKey: "toolcall-t1", Run: "agent-1", MaxAttempts: 3}
	first, err := execute(t, reg, in, nil)
	require.NoError(t, err)
	assert.Contains(t, first.Content, `"stdout":"1\n"`)
	again, err := execute(t, reg, in, nil)
	require.NoError(t, err)
	assert.Equal(t, first.Content, again.Content)
	assert.NotNil(t, first.Progress, "the first attempt reported its command running")
	assert.Nil(t, again.Progress, "the retry ran nothing")

	other := in
	other.IdempotencyKey = "toolcall-t2"
	next, err := execute(t, reg, other, nil)
	require.NoError(t, err)
	assert.Contains(t, next.Content, `"stdout":"2\n"`, "the command ran once per call")
}
