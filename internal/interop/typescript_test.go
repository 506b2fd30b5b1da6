package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// nodeTimeout bounds the whole node run (never a timing assertion).
const nodeTimeout = 3 * time.Minute

// outcome is contract.mjs's description of how one call ended.
type outcome struct {
	Result  json.RawMessage `json:"result"`
	Kind    string          `json:"kind"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
}

// observed is what contract.mjs prints.
type observed struct {
	Add                outcome `json:"add"`
	AddBytes           string  `json:"addBytes"`
	ResubmitCompleted  outcome `json:"resubmitCompleted"`
	Conflict           outcome `json:"conflict"`
	UnknownTool        outcome `json:"unknownTool"`
	InvalidArguments   outcome `json:"invalidArguments"`
	Malformed          outcome `json:"malformed"`
	NonASCIIWorkflowID string  `json:"nonASCIIWorkflowId"`
	NonASCII           outcome `json:"nonASCII"`
	RawNonASCII        outcome `json:"rawNonASCII"`
	ResubmitRunning    struct {
		SameRun bool `json:"sameRun"`
	} `json:"resubmitRunning"`
	Cancel          outcome         `json:"cancel"`
	Principal       outcome         `json:"principal"`
	PrincipalMemo   json.RawMessage `json:"principalMemo"`
	CancelLatencyMs int             `json:"cancelLatencyMs"`
}

// interopDir returns the npm package's directory, failing the test with the fix when its
// dependencies are not installed.
func interopDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "interop"))
	require.NoError(t, err)
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed (Node 20 or later): %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@temporalio", "client", "package.json")); err != nil {
		t.Fatalf("%s/node_modules lacks @temporalio/client: run `make setup` (npm ci in interop/): %v", dir, err)
	}
	return dir
}

func TestTypeScriptClient(t *testing.T) {
	dir := interopDir(t)
	srv := devtest.Server(t)
	sdk := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	reg, err := toolbox.New(toolbox.Config{DisableHTTP: true})
	require.NoError(t, err)
	require.NoError(t, reg.Register(whoami(t)))
	w, err := worker.New(sdk, srv.Namespace(), reg, worker.Options{TaskQueue: queue, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "contract.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TEMPORAL_ADDRESS="+srv.FrontendAddress(),
		"TEMPORAL_NAMESPACE="+srv.Namespace(),
		"TOOLGATE_TASK_QUEUE="+queue,
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	require.NoError(t, err, "node contract.mjs: %s", stderr.String())
	var got observed
	require.NoError(t, json.Unmarshal(stdout, &got), "%s", stdout)

	const addWire = `{"id":"tool-result-ts-add-1","role":"toolResult","toolCallId":"ts-add-1","toolName":"add","content":"{\"sum\":42}","isError":false}`
	assert.Equal(t, addWire, got.AddBytes, "recorded result bytes")
	assert.JSONEq(t, addWire, string(got.Add.Result))
	assert.JSONEq(t, addWire, string(got.ResubmitCompleted.Result), "resubmitting a completed call returns its result")
	assert.Equal(t, "conflict", got.Conflict.Kind, "%+v", got.Conflict)

	nope, err := toolcore.NewToolCall("ts-nope-1", "nope", []byte(`{}`))
	require.NoError(t, err)
	wantNope, err := json.Marshal(toolcore.NotFoundOnQueueResult(nope, queue, reg.Names()))
	require.NoError(t, err)
	assert.JSONEq(t, string(wantNope), string(got.UnknownTool.Result), "TOOL_NOT_FOUND names the queue and the worker's tools")
	var invalid struct {
		Content string `json:"content"`
		IsError bool   `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(got.InvalidArguments.Result, &invalid), "%+v", got.InvalidArguments)
	assert.True(t, invalid.IsError)
	assert.Contains(t, invalid.Content, `"code":"TOOL_ARGUMENTS_INVALID"`)

	assert.Equal(t, outcome{Kind: "failed", Type: "INVALID_TOOL_CALL", Message: `tool call: missing "arguments"`}, got.Malformed)

	assert.Equal(t, queue+"/toolcall-ts-%C3%A9%201", got.NonASCIIWorkflowID)
	assert.JSONEq(t, `{"id":"tool-result-ts-é 1","role":"toolResult","toolCallId":"ts-é 1","toolName":"echo","content":"{\"text\":\"héllo\"}","isError":false}`,
		string(got.NonASCII.Result))
	assert.Equal(t, "failed", got.RawNonASCII.Kind, "%+v", got.RawNonASCII)
	assert.Equal(t, "INVALID_TOOL_CALL", got.RawNonASCII.Type)
	assert.Contains(t, got.RawNonASCII.Message, "is not printable ASCII")

	const alice = `{"issuer":"https://idp.example","subject":"ts-alice","groups":["guests"]}`
	var whoamiResult struct {
		Content string `json:"content"`
	}
	require.NoError(t, json.Unmarshal(got.Principal.Result, &whoamiResult), "%+v", got.Principal)
	assert.JSONEq(t, alice, whoamiResult.Content, "the tool reads the principal a TypeScript client set")
	assert.JSONEq(t, alice, string(got.PrincipalMemo), "describe shows it")

	assert.True(t, got.ResubmitRunning.SameRun, "resubmitting a running call attaches to it")
	assert.Equal(t, "canceled", got.Cancel.Kind, "%+v", got.Cancel)
	t.Logf("cancel latency of sleep from @temporalio/client (handle.cancel to the result rejecting): %d ms", got.CancelLatencyMs)
}

// whoami is a tool returning the principal its call runs for (toolcore.CallPrincipal).
func whoami(t *testing.T) toolcore.Tool {
	tool, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "whoami",
		Description: "Returns whom the call runs for.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute: func(ctx context.Context, _ map[string]any) (any, error) {
			p, _ := toolcore.CallPrincipal(ctx)
			return p, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	require.NoError(t, err)
	return tool
}
