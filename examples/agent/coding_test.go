package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolbox"
)

// sandboxConfig is a toolbox configuration with the sandbox tools, their workspaces in a
// temporary directory (local copies in work/, the store in store/). It fails naming make setup
// when bubblewrap is missing.
func sandboxConfig(t *testing.T) (toolbox.Config, string) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatal("bubblewrap (bwrap) is not installed: run make setup")
	}
	runner, err := sandbox.NewRunner(sandbox.RunnerConfig{})
	require.NoError(t, err)
	dir := t.TempDir()
	// A root worker's sandbox runs as nobody, who must reach the workspaces' directory (the
	// test's temporary directories are 0700).
	for _, d := range []string{filepath.Dir(dir), dir} {
		require.NoError(t, os.Chmod(d, 0o711))
	}
	work := filepath.Join(dir, "work")
	ws, err := sandbox.NewWorkspaces(sandbox.Config{Dir: work, Store: sandbox.FileStore(filepath.Join(dir, "store"), nil),
		Runner: runner, Owner: &sandbox.Owner{UID: runner.UID(), GID: runner.GID()}})
	require.NoError(t, err)
	return toolbox.Config{Sandbox: &toolbox.Sandbox{Workspaces: ws, Runner: runner}}, work
}

// TestAgentCodingExample: the coding example's model writes hello.sh with workspace_write_file,
// runs it with exec (in bubblewrap, in the agent run's workspace) and reads the out.txt the script
// wrote with workspace_read_file: three calls, three turns, one workspace. The answer quotes what
// the script wrote, and the store holds the workspace under the agent's workflow ID.
func TestAgentCodingExample(t *testing.T) {
	cfg, _ := sandboxConfig(t)
	env := agentEnvWith(t, CodingModel(), cfg)
	var children []string
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		children = append(children, info.WorkflowExecution.ID)
	})
	env.ExecuteWorkflow(AgentWorkflowName, AgentInput{Prompt: CodingPrompt})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result AgentResult
	require.NoError(t, env.GetWorkflowResult(&result))
	assert.Equal(t, 4, result.Turns)
	assert.Equal(t, []string{"agent-test/toolcall-call-write", "agent-test/toolcall-call-exec", "agent-test/toolcall-call-read"}, children,
		"one call per turn, in order")

	tool := map[string]Message{}
	for _, m := range result.Conversation {
		if m.Role == "tool" {
			tool[m.ToolCallID] = m
			assert.False(t, m.IsError, "%s: %s", m.ToolCallID, m.Content)
		}
	}
	var ran struct {
		ExitCode  int    `json:"exitCode"`
		Stdout    string `json:"stdout"`
		Workspace struct {
			Version int64 `json:"version"`
			Changed bool  `json:"changed"`
		} `json:"workspace"`
	}
	require.NoError(t, json.Unmarshal([]byte(tool["call-exec"].Content), &ran), tool["call-exec"].Content)
	assert.Equal(t, 0, ran.ExitCode)
	assert.True(t, ran.Workspace.Changed, "the script wrote out.txt: a new snapshot")
	assert.Equal(t, int64(2), ran.Workspace.Version, "the write's snapshot, then the exec's")
	var read struct {
		Content string `json:"content"`
	}
	require.NoError(t, json.Unmarshal([]byte(tool["call-read"].Content), &read), tool["call-read"].Content)
	assert.Equal(t, "hello from /workspace: 25 words\n", read.Content, "the read gave what the script wrote")
	assert.Contains(t, result.Answer, `The script wrote: {`)
	assert.Contains(t, result.Answer, `hello from /workspace: 25 words`)

	head, entries, err := cfg.Sandbox.Workspaces.Show(t.Context(), "agent-test")
	require.NoError(t, err, "the workspace is the agent run's")
	assert.Equal(t, int64(2), head.Version, "the read changed nothing: no snapshot")
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"hello.sh", "out.txt"}, paths)
}

// TestCodingScriptNamesTheSandboxTools: the script calls the toolbox's sandbox tools by their
// names.
func TestCodingScriptNamesTheSandboxTools(t *testing.T) {
	assert.Equal(t, toolbox.NameWorkspaceWriteFile, codingWriteTool)
	assert.Equal(t, toolbox.NameExec, codingExecTool)
	assert.Equal(t, toolbox.NameWorkspaceReadFile, codingReadTool)
}
