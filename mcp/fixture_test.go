package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

// fixtureArg makes the test binary a stdio MCP server (TestMain): "env" answers its environment,
// "delete_all" (no annotations: Unsafe) writes <dir>/deleted, "say" answers fixtureText and
// "two" two text contents.
const fixtureArg = "mcp-fixture-server"

// fixtureText is what the fixture's "say" tool answers: the conformance suite's text, with
// characters JSON would escape.
const fixtureText = "This is a simple text response for testing.\n\"Quoted\", back\\slash, tab\t, ünïcode ✓"

func runFixtureServer(dir string) int {
	s := sdk.NewServer(&sdk.Implementation{Name: "fixture", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "This process's environment.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			env := os.Environ()
			sort.Strings(env)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(env, "\n")}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "delete_all", Description: "Deletes everything."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			err := os.WriteFile(filepath.Join(dir, "deleted"), []byte("yes"), 0o600)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "deleted"}}}, nil, err
		})
	sdk.AddTool(s, &sdk.Tool{Name: "say", Description: "Say the fixture text.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fixtureText}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "two", Description: "Two text contents.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "one"}, &sdk.TextContent{Text: "two"}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// fixtureWorker mounts the fixture server as prefix "fx" on a worker of its own.
func fixtureWorker(t *testing.T, dir string, topts mcp.TargetOptions, mopts mcp.MountOptions) (*tgclient.Client, *mcp.Remote) {
	t.Helper()
	transport, err := mcp.TargetWith(os.Args[0]+" "+fixtureArg+" "+dir, topts)
	require.NoError(t, err)
	remote, err := mcp.Mount(t.Context(), "fx", transport, mopts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = remote.Close() })
	reg, err := toolcore.NewRegistry(remote.Tools()...)
	require.NoError(t, err)
	tg, _ := servingWorker(t, reg)
	return tg, remote
}

// A mounted command starts with BaseEnv and the variables its mount names, never the worker's
// secrets (issue 22 item 4).
func TestMountedCommandGetsACleanEnvironment(t *testing.T) {
	t.Setenv("TEMPORAL_API_KEY", "leaked-api-key")
	t.Setenv("TOOLGATE_CODEC_KEY", "leaked-codec-key")
	t.Setenv("FIXTURE_NAMED", "named-value")
	tg, _ := fixtureWorker(t, t.TempDir(), mcp.TargetOptions{Env: []string{"FIXTURE_NAMED", "FIXTURE_UNSET"}}, mcp.MountOptions{})
	res := execute(t, tg, "env-1", "fx_env", `{}`)
	require.False(t, res.IsError(), res.Content())
	env := res.Content()
	assert.NotContains(t, env, "leaked-api-key")
	assert.NotContains(t, env, "TEMPORAL_API_KEY")
	assert.NotContains(t, env, "leaked-codec-key")
	assert.Contains(t, env, "FIXTURE_NAMED=named-value")
	assert.NotContains(t, env, "FIXTURE_UNSET")
	assert.Contains(t, env, "PATH=")
}

// A mounted tool's text result is the remote text, byte for byte: not JSON-quoted, for the
// worker's callers and for the MCP clients of toolgate's own server alike; several contents are
// their JSON list (issue 23).
func TestMountedTextPassesThrough(t *testing.T) {
	tg, _ := fixtureWorker(t, t.TempDir(), mcp.TargetOptions{}, mcp.MountOptions{})
	res := execute(t, tg, "say-1", "fx_say", `{}`)
	require.False(t, res.IsError(), res.Content())
	assert.Equal(t, fixtureText, res.Content())
	res = execute(t, tg, "two-1", "fx_two", `{}`)
	require.False(t, res.IsError(), res.Content())
	assert.JSONEq(t, `[{"type":"text","text":"one"},{"type":"text","text":"two"}]`, res.Content())

	// Served back out by toolgate's MCP server: still the remote text.
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	cs := connectInMemory(t, mcp.NewServer(tg, infos, mcp.Options{}))
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "fx_say", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, out.IsError)
	assert.Equal(t, fixtureText, text(t, out))
}

func TestCommandEnv(t *testing.T) {
	vars := map[string]string{"PATH": "/bin", "HOME": "/home/u", "SECRET": "s", "NAMED": "n"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	tests := []struct {
		name string
		give []string
		want []string
	}{
		{name: "base only", want: []string{"PATH=/bin", "HOME=/home/u"}},
		{name: "named", give: []string{"NAMED", "PATH"}, want: []string{"PATH=/bin", "HOME=/home/u", "NAMED=n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mcp.CommandEnv(mcp.TargetOptions{Env: tt.give, LookupEnv: lookup}))
		})
	}
}

// A mounted Unsafe tool whose name matches MountOptions.Approve waits for approval instead of
// running; without annotations it is flagged SideEffectAssumed (issue 22 item 6).
func TestMountedUnsafeToolWaitsForApproval(t *testing.T) {
	dir := t.TempDir()
	tg, remote := fixtureWorker(t, dir, mcp.TargetOptions{}, mcp.MountOptions{Approve: []string{"fx_delete_*"}})
	infos := map[string]toolcore.ToolInfo{}
	for _, tool := range remote.Tools() {
		infos[tool.Name()] = tool.Info()
	}
	assert.True(t, infos["fx_delete_all"].RequireApproval)
	assert.True(t, infos["fx_delete_all"].SideEffectAssumed)
	assert.False(t, infos["fx_env"].RequireApproval)
	assert.False(t, infos["fx_env"].SideEffectAssumed)

	call, err := toolcore.NewToolCall("delete-1", "fx_delete_all", []byte(`{}`))
	require.NoError(t, err)
	_, err = tg.Start(t.Context(), call)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		state, err := tg.Approval(t.Context(), call.ID())
		return err == nil && state.Waiting
	}, time.Minute, 50*time.Millisecond, "the call waits for approval")
	assert.NoFileExists(t, filepath.Join(dir, "deleted"), "the remote tool did not run")
	require.NoError(t, tg.Cancel(t.Context(), call.ID()))
	_, err = mcp.ApprovalRequired("x", []string{"["})
	assert.Error(t, err, "a malformed glob")
}

// The real `toolgate worker` process: a mounted command does not see a secret of the worker's
// environment, sees the variable --mcp-env names, and a tool matching --mcp-approve waits (its
// caller's human may decide it: --mcp-approve-by-caller); the catalog, and `toolgate tools
// --remote`, flag the unannotated delete_all (issue 22 items 4, 6).
func TestWorkerCommandMountIsolatesEnvAndRequiresApproval(t *testing.T) {
	bin := toolgateBinary(t)
	srv := devtest.Server(t)
	queue := devtest.TaskQueue(t)
	dir := t.TempDir()
	stderr := startWorker(t, queue,
		childEnv("AWS_SECRET_ACCESS_KEY=leaked-aws-secret", "TOOLGATE_DB=postgres://u:leaked-db-password@h/db", "FIXTURE_NAMED=named-value"),
		"--mcp", "fx="+os.Args[0]+" "+fixtureArg+" "+dir, "--mcp-env", "fx=FIXTURE_NAMED", "--mcp-approve", "fx_delete_*",
		"--mcp-approve-by-caller", "fx_delete_all")
	tg := tgclient.New(devtest.Client(t), tgclient.Options{TaskQueue: queue})
	var tools []toolcore.ToolInfo
	require.Eventually(t, func() bool {
		var err error
		tools, err = tg.ListTools(t.Context())
		return err == nil && len(tools) > 0
	}, time.Minute, 100*time.Millisecond, "the worker lists its tools: %s", stderr)
	byName := map[string]toolcore.ToolInfo{}
	for _, info := range tools {
		byName[info.Name] = info
	}
	assert.True(t, byName["fx_delete_all"].RequireApproval)
	assert.True(t, byName["fx_delete_all"].SideEffectAssumed)
	for name, info := range byName { // --mcp-approve-by-caller: the caller's human may decide
		assert.Equal(t, name == "fx_delete_all", info.ApprovalByCaller, name)
	}

	// `toolgate tools --remote` flags the unannotated tool for the operator who reads the table.
	list := exec.Command(bin, "tools", "--remote", "--address", srv.FrontendAddress(), "--namespace", srv.Namespace(), "--task-queue", queue)
	list.Env = childEnv()
	out, err := list.Output()
	require.NoError(t, err, "toolgate tools --remote")
	columns := map[string]string{} // tool name -> SIDE EFFECT column
	for _, line := range strings.Split(string(out), "\n") {
		if name, rest, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "fx_") {
			columns[name], _, _ = strings.Cut(strings.TrimSpace(rest), "  ")
		}
	}
	assert.Equal(t, map[string]string{"fx_delete_all": "unsafe (assumed) +approval", "fx_env": "readOnly",
		"fx_say": "readOnly", "fx_two": "readOnly"}, columns, "%s", out)

	res := execute(t, tg, "worker-env", "fx_env", `{}`)
	require.False(t, res.IsError(), res.Content())
	assert.NotContains(t, res.Content(), "leaked")
	assert.Contains(t, res.Content(), "FIXTURE_NAMED=named-value")

	call, err := toolcore.NewToolCall("worker-delete", "fx_delete_all", []byte(`{}`))
	require.NoError(t, err)
	_, err = tg.Start(t.Context(), call)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		state, err := tg.Approval(t.Context(), call.ID())
		return err == nil && state.Waiting
	}, time.Minute, 50*time.Millisecond, "the call waits for approval")
	assert.NoFileExists(t, filepath.Join(dir, "deleted"), "the remote tool did not run")
	require.NoError(t, tg.Cancel(t.Context(), call.ID()))
}
