package e2e

import (
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// parentOutcome is one outcome of roundParent, in JSON.
type parentOutcome struct {
	Kind    string `json:"kind"`
	Content string `json:"content,omitempty"`
	Error   string `json:"error,omitempty"`
}

// roundParent runs one round of calls as children on the task queue named by its input.
func roundParent(ctx workflow.Context, queue, scope string, raw []json.RawMessage) ([]parentOutcome, error) {
	calls := make([]toolcore.ToolCall, len(raw))
	for i, r := range raw {
		calls[i], _ = toolcore.ParseToolCall(r)
	}
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: queue, Scope: scope, SearchAttributes: true})
	outcomes, err := workflows.ExecuteRound(ctx, calls, toolcore.RoundOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]parentOutcome, len(outcomes))
	for i, o := range outcomes {
		out[i] = parentOutcome{Kind: o.Kind.String(), Content: o.Result.Content()}
		if o.Err != nil {
			out[i].Error = o.Err.Error()
		}
	}
	return out, nil
}

// startParentWorker runs roundParent and AwaitToolCall on a queue of their own.
func (e *env) startParentWorker() string {
	e.t.Helper()
	queue := e.queue + "-parent"
	w := sdkworker.New(e.sdk, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(roundParent, workflow.RegisterOptions{Name: "roundParent"})
	e.client.RegisterAwaitToolCall(w)
	require.NoError(e.t, w.Start())
	e.t.Cleanup(w.Stop)
	return queue
}

func (e *env) runParent(id string, calls ...toolcore.ToolCall) []parentOutcome {
	e.t.Helper()
	raw := make([]json.RawMessage, len(calls))
	for i, c := range calls {
		b, err := c.MarshalJSON()
		require.NoError(e.t, err)
		raw[i] = b
	}
	ctx := e.ctx()
	run, err := e.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: e.queue + "/" + id, TaskQueue: e.queue + "-parent"},
		"roundParent", e.queue, e.queue, raw)
	require.NoError(e.t, err)
	var out []parentOutcome
	require.NoError(e.t, run.Get(ctx, &out))
	return out
}

func TestChildRoundAttachesToCallsStartedByAClient(t *testing.T) {
	g := newGate()
	var runs atomic.Int32
	e := newEnv(t, g.tool(t, "slow", toolcore.Options{}, false), addTool(t, &runs))
	e.startParentWorker()
	ctx := e.ctx()

	// A client started x; the parent's round submits x again (attach), y (a child) and a
	// conflicting z (same ID as the client's z, other arguments).
	x := tagged(t, "x", "slow")
	_, err := e.client.Start(ctx, x)
	require.NoError(t, err)
	g.waitStarted(t)
	z := call(t, "z", "add", `{"left":1,"right":1}`)
	_, err = e.client.Execute(ctx, z)
	require.NoError(t, err)
	close(g.release)

	out := e.runParent("agent-1", x, call(t, "y", "add", `{"left":2,"right":3}`), call(t, "z", "add", `{"left":9,"right":9}`))
	require.Len(t, out, 3)
	assert.Equal(t, parentOutcome{Kind: "result", Content: `{"attempt":1,"tag":"x"}`}, out[0], "attached to the client's run")
	assert.Equal(t, parentOutcome{Kind: "result", Content: `{"sum":5}`}, out[1])
	assert.Equal(t, "failed", out[2].Kind)
	assert.Contains(t, out[2].Error, "different arguments")
	assert.Equal(t, int32(1), g.runs.Load(), "x ran once")
	assert.Equal(t, int32(2), runs.Load(), "z ran once (the client's), y once")

	// The same parent round again (a new agent run resubmitting): every call attaches.
	again := e.runParent("agent-2", x, call(t, "y", "add", `{"left":2,"right":3}`))
	assert.Equal(t, out[:2], again)
	assert.Equal(t, int32(2), runs.Load(), "nothing ran twice")
}

func TestCanceledParentCancelsItsChildren(t *testing.T) {
	g := newGate()
	e := newEnv(t, g.tool(t, "slow", toolcore.Options{}, false))
	e.startParentWorker()
	ctx := e.ctx()
	raw, err := tagged(t, "w", "slow").MarshalJSON()
	require.NoError(t, err)
	run, err := e.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: e.queue + "/agent", TaskQueue: e.queue + "-parent"},
		"roundParent", e.queue, e.queue, []json.RawMessage{raw})
	require.NoError(t, err)
	g.waitStarted(t)

	require.NoError(t, e.sdk.CancelWorkflow(ctx, run.GetID(), ""))
	require.Error(t, run.Get(ctx, nil))
	assert.Error(t, <-g.canceled, "the tool was stopped")
	_, err = e.client.Result(ctx, "w")
	assert.ErrorIs(t, err, wire.ErrCallCanceled, "the child ended canceled")
}
