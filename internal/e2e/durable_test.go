package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

func TestExecuteRecordsResultAndSearchAttributes(t *testing.T) {
	var runs atomic.Int32
	e := newEnv(t, addTool(t, &runs))
	require.True(t, e.worker.SearchAttributes(), "the dev server namespace has the attributes")
	ctx := e.ctx()

	tc := call(t, "call-add-1", "add", `{"left":20,"right":22}`)
	result, err := e.client.Execute(ctx, tc)
	require.NoError(t, err)
	assert.Equal(t,
		`{"id":"tool-result-call-add-1","role":"toolResult","toolCallId":"call-add-1","toolName":"add","content":"{\"sum\":42}","isError":false}`,
		wireJSON(t, result))

	st, err := e.client.Status(ctx, "call-add-1")
	require.NoError(t, err)
	assert.Equal(t, client.Completed, st.State)
	assert.Equal(t, e.client.WorkflowID("call-add-1"), st.WorkflowID)
	assert.Equal(t, "call-add-1", st.ToolCallID)
	assert.Equal(t, "add", st.ToolName)
	require.NotNil(t, st.Result)
	assert.Equal(t, wireJSON(t, result), wireJSON(t, *st.Result))
	assert.NoError(t, st.Err)

	// Visibility is eventually consistent: poll until the call is listed by its attributes. Its
	// ToolOutcome stays unset (an ok call at bare cost), so wire.QueryOKCalls finds it.
	query := fmt.Sprintf(`WorkflowId = %q AND ToolName = "add" AND ToolCallId = "call-add-1" AND %s`,
		e.client.WorkflowID("call-add-1"), wire.QueryOKCalls)
	var listed *workflowservice.ListWorkflowExecutionsResponse
	require.Eventually(t, func() bool {
		resp, err := e.sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		listed = resp
		return err == nil && len(resp.GetExecutions()) == 1
	}, testTimeout, 50*time.Millisecond, "query %s", query)
	assert.NotContains(t, listed.GetExecutions()[0].GetSearchAttributes().GetIndexedFields(), wire.SearchAttributeToolOutcome,
		"an ok call started by the client closes without a ToolOutcome upsert")
	calls, _, err := e.client.ListCalls(ctx, 10, nil)
	require.NoError(t, err)
	require.Len(t, calls, 1, "the env's task queue holds this call only")
	assert.Equal(t, wire.OutcomeOK, calls[0].Outcome, "ListCalls reports it ok")
}

func TestResubmitRunsOnce(t *testing.T) {
	t.Run("closed call", func(t *testing.T) {
		var runs atomic.Int32
		e := newEnv(t, addTool(t, &runs))
		ctx := e.ctx()
		first, err := e.client.Execute(ctx, call(t, "c1", "add", `{"left":1,"right":2}`))
		require.NoError(t, err)
		// Same call, arguments in another order and spacing: the same canonical call.
		again, err := e.client.Execute(ctx, call(t, "c1", "add", `{ "right":2, "left":1 }`))
		require.NoError(t, err)
		assert.Equal(t, wireJSON(t, first), wireJSON(t, again))
		byResult, err := e.client.Result(ctx, "c1")
		require.NoError(t, err)
		assert.Equal(t, wireJSON(t, first), wireJSON(t, byResult))
		assert.Equal(t, int32(1), runs.Load(), "the tool ran once")
	})
	t.Run("running call", func(t *testing.T) {
		g := newGate()
		e := newEnv(t, g.tool(t, "slow", toolcore.Options{}, false))
		ctx := e.ctx()
		tc := call(t, "c2", "slow", `{"tag":"x"}`)
		id, err := e.client.Start(ctx, tc)
		require.NoError(t, err)
		require.Equal(t, 1, g.waitStarted(t))

		again, err := e.client.Start(ctx, tc)
		require.NoError(t, err, "resubmitting a running call attaches to it")
		assert.Equal(t, id, again)
		done := goExecute(ctx, e.client, tc)
		close(g.release)
		got := await(t, done)
		require.NoError(t, got.err)
		assert.Equal(t, `{"attempt":1,"tag":"x"}`, got.result.Content())
		assert.Equal(t, int32(1), g.runs.Load(), "the tool ran once")
	})
}

func TestConflictingResubmitIsRefused(t *testing.T) {
	tests := []struct {
		name      string
		submitted toolcore.ToolCall
		want      string
	}{
		{name: "different arguments", submitted: toolcore.ToolCall{}, want: "different arguments"},
		{name: "different tool", submitted: toolcore.ToolCall{}, want: `submitted "add"`},
	}
	// Built here: call needs t.
	tests[0].submitted = call(t, "c1", "slow", `{"tag":"other"}`)
	tests[1].submitted = call(t, "c1", "add", `{"tag":"x"}`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate()
			e := newEnv(t, g.tool(t, "slow", toolcore.Options{}, false), addTool(t, new(atomic.Int32)))
			ctx := e.ctx()
			original := call(t, "c1", "slow", `{"tag":"x"}`)
			_, err := e.client.Start(ctx, original)
			require.NoError(t, err)
			g.waitStarted(t)

			_, err = e.client.Start(ctx, tt.submitted)
			require.ErrorIs(t, err, wire.ErrCallConflict, "while running")
			assert.ErrorContains(t, err, tt.want)

			close(g.release)
			result, err := e.client.Execute(ctx, original)
			require.NoError(t, err)
			assert.False(t, result.IsError())

			_, err = e.client.Execute(ctx, tt.submitted)
			require.ErrorIs(t, err, wire.ErrCallConflict, "after it closed")
			assert.Equal(t, int32(1), g.runs.Load(), "only the original ran")
		})
	}
}

func TestCancelThroughClient(t *testing.T) {
	g := newGate()
	e := newEnv(t, g.tool(t, "slow", toolcore.Options{HeartbeatTimeout: time.Second}, false))
	ctx := e.ctx()
	done := goExecute(ctx, e.client, call(t, "c1", "slow", `{}`))
	g.waitStarted(t)

	require.NoError(t, e.client.Cancel(ctx, "c1"))
	select {
	case cause := <-g.canceled:
		assert.Error(t, cause)
	case <-time.After(testTimeout):
		t.Fatal("the tool did not observe the cancellation")
	}
	got := await(t, done)
	require.ErrorIs(t, got.err, wire.ErrCallCanceled)
	assert.True(t, got.result.IsZero())

	st, err := e.client.Status(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, client.Canceled, st.State)
	assert.ErrorIs(t, st.Err, wire.ErrCallCanceled)
	assert.ErrorIs(t, e.client.Cancel(ctx, "c1"), client.ErrCallClosed)
	_, err = e.client.Execute(ctx, call(t, "c1", "slow", `{}`))
	assert.ErrorIs(t, err, wire.ErrCallCanceled, "a canceled call stays canceled")
}

func TestExecuteContextCancelCancelsTheCall(t *testing.T) {
	g := newGate()
	e := newEnv(t, g.tool(t, "slow", toolcore.Options{HeartbeatTimeout: time.Second}, false))
	errAgentStopped := errors.New("agent stopped")
	ctx, cancel := context.WithCancelCause(e.ctx())
	done := goExecute(ctx, e.client, call(t, "c1", "slow", `{}`))
	g.waitStarted(t)

	cancel(errAgentStopped)
	got := await(t, done)
	require.ErrorIs(t, got.err, errAgentStopped)
	assert.True(t, got.result.IsZero())
	// Execute waited until the workflow closed, which happens only after the tool stopped.
	select {
	case <-g.canceled:
	default:
		t.Fatal("Execute returned before the tool observed the cancellation")
	}
	st, err := e.client.Status(e.ctx(), "c1")
	require.NoError(t, err)
	assert.Equal(t, client.Canceled, st.State)
}

func TestWorkerLostMidCall(t *testing.T) {
	tests := []struct {
		name       string
		sideEffect toolcore.SideEffect
		wantRuns   int32
		wantError  bool
		wantText   string
	}{
		{name: "unsafe: outcome unknown, ran once", sideEffect: toolcore.Unsafe, wantRuns: 1, wantError: true, wantText: workflows.OutcomeUnknownMessage},
		{name: "idempotent: completed on another worker", sideEffect: toolcore.Idempotent, wantRuns: 2, wantText: `{"attempt":2,"tag":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate()
			// Short heartbeat timeout: the server notices the lost worker within a second.
			tool := g.tool(t, "effect", toolcore.Options{SideEffect: tt.sideEffect, HeartbeatTimeout: time.Second}, true)
			e := &env{t: t, queue: devtest.TaskQueue(t), sdk: devtest.Client(t)}
			e.client = client.New(e.sdk, client.Options{TaskQueue: e.queue, Scope: e.queue, Namespace: devtest.Server(t).Namespace()})

			// The first worker reaches the server through a proxy, so cutting the proxy is a crash.
			p := startProxy(t, devtest.Server(t).FrontendAddress())
			lost, err := sdkclient.Dial(sdkclient.Options{HostPort: p.Addr(), Namespace: devtest.Server(t).Namespace()})
			require.NoError(t, err)
			t.Cleanup(lost.Close)
			// Its stuck attempt can never report back: do not wait for it at cleanup.
			e.startWorker(lost, 10*time.Millisecond, tool)
			// Registered after the lost worker's Stop, so it runs first and frees the stuck attempt.
			t.Cleanup(func() { close(g.release) })

			ctx := e.ctx()
			tc := call(t, "c1", "effect", `{"tag":"x"}`)
			_, err = e.client.Start(ctx, tc)
			require.NoError(t, err)
			require.Equal(t, 1, g.waitStarted(t))
			p.Close()

			e.startWorker(e.sdk, 5*time.Second, tool)
			result, err := e.client.Execute(ctx, tc)
			require.NoError(t, err)
			assert.Equal(t, tt.wantError, result.IsError())
			assert.Contains(t, result.Content(), tt.wantText)
			if tt.wantError {
				assert.Equal(t, toolcore.CodeToolExecutionFailed, result.ErrorCode())
			}
			assert.Equal(t, tt.wantRuns, g.runs.Load())
		})
	}
}

func TestProgressOfARunningTool(t *testing.T) {
	reported := make(chan struct{})
	release := make(chan struct{})
	want := toolcore.Progress{Completed: 3, Total: 10, Message: "3 of 10 pages"}
	tool := define(t, "crawl", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(ctx context.Context, _ args) (any, error) {
		toolcore.ReportProgress(ctx, want)
		close(reported)
		<-release
		return "done", nil
	})
	e := newEnv(t, tool)
	ctx := e.ctx()
	_, err := e.client.Start(ctx, call(t, "c1", "crawl", `{}`))
	require.NoError(t, err)
	<-reported

	require.Eventually(t, func() bool {
		got, ok, err := e.client.Progress(ctx, "c1")
		return err == nil && ok && got == want
	}, testTimeout, 20*time.Millisecond)
	st, err := e.client.Status(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, client.Running, st.State)
	assert.Equal(t, 1, st.Attempt)
	require.NotNil(t, st.Progress)
	assert.Equal(t, want, *st.Progress)
	assert.Nil(t, st.Result)

	close(release)
	result, err := e.client.Result(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, `"done"`, result.Content())
	_, ok, err := e.client.Progress(ctx, "c1")
	require.NoError(t, err)
	assert.False(t, ok, "no progress once the tool is done")
}

func TestNonRecoverableToolError(t *testing.T) {
	var runs atomic.Int32
	tool := define(t, "ledger", toolcore.Options{}, func(context.Context, args) (any, error) {
		runs.Add(1)
		return nil, fmt.Errorf("post entry: %w", toolcore.NewNonRecoverableToolError("ledger invariant broken"))
	})
	e := newEnv(t, tool)
	ctx := e.ctx()
	for _, attempt := range []string{"first", "resubmitted"} {
		_, err := e.client.Execute(ctx, call(t, "c1", "ledger", `{}`))
		fatal, ok := toolcore.AsNonRecoverable(err)
		require.True(t, ok, "%s: want a genuine NonRecoverableToolError, got %v", attempt, err)
		assert.Equal(t, "ledger invariant broken", fatal.Error())
	}
	assert.Equal(t, int32(1), runs.Load())
	st, err := e.client.Status(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, client.Failed, st.State)
	_, ok := toolcore.AsNonRecoverable(st.Err)
	assert.True(t, ok)
}

func TestOutcomesWithoutARun(t *testing.T) {
	var runs atomic.Int32
	e := newEnv(t, addTool(t, &runs))
	ctx := e.ctx()

	t.Run("unknown tool", func(t *testing.T) {
		result, err := e.client.Execute(ctx, call(t, "c-unknown", "subtract", `{}`))
		require.NoError(t, err)
		assert.Equal(t, toolcore.CodeToolNotFound, result.ErrorCode())
	})
	t.Run("rejected arguments", func(t *testing.T) {
		result, err := e.client.Execute(ctx, call(t, "c-rejected", "add", `{"left":"twenty"}`))
		require.NoError(t, err)
		assert.Equal(t, toolcore.CodeToolArgumentsInvalid, result.ErrorCode())
	})
	t.Run("no such call", func(t *testing.T) {
		_, err := e.client.Result(ctx, "never-started")
		assert.ErrorIs(t, err, wire.ErrNotFound)
		assert.ErrorIs(t, e.client.Cancel(ctx, "never-started"), wire.ErrNotFound)
		_, err = e.client.Status(ctx, "never-started")
		assert.ErrorIs(t, err, wire.ErrNotFound)
		_, _, err = e.client.Progress(ctx, "never-started")
		assert.ErrorIs(t, err, wire.ErrNotFound)
	})
	t.Run("zero call fails fast", func(t *testing.T) {
		var ce *toolcore.ContractError
		_, err := e.client.Execute(ctx, toolcore.ToolCall{})
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, toolcore.CodeInvalidToolCall, ce.Code)
	})
	assert.Equal(t, int32(0), runs.Load())
}

func TestMalformedCallStartedByAnotherClient(t *testing.T) {
	e := newEnv(t, addTool(t, new(atomic.Int32)))
	ctx := e.ctx()
	id := e.client.WorkflowID("c1")
	_, err := e.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{
		ID:                    id,
		TaskQueue:             e.queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, wire.ToolCallWorkflowName, json.RawMessage(`{"type":"toolCall","id":"c1","name":"add"}`))
	require.NoError(t, err)

	var ce *toolcore.ContractError
	_, err = e.client.Result(ctx, "c1")
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, toolcore.CodeInvalidToolCall, ce.Code)

	_, err = e.client.Execute(ctx, call(t, "c1", "add", `{}`))
	assert.ErrorIs(t, err, wire.ErrCallConflict, "a malformed recorded call is not this call")
}

func TestSetupSearchAttributesIsIdempotent(t *testing.T) {
	c := devtest.Client(t)
	ns := devtest.Server(t).Namespace()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for range 2 {
		require.NoError(t, worker.SetupSearchAttributes(ctx, c, ns))
	}
	reg, err := toolcore.NewRegistry()
	require.NoError(t, err)
	w, err := worker.New(c, ns, reg, worker.Options{TaskQueue: devtest.TaskQueue(t)})
	require.NoError(t, err)
	assert.True(t, w.SearchAttributes())
}

func TestToolOnItsOwnTaskQueue(t *testing.T) {
	side := devtest.TaskQueue(t) + "-side"
	tool := define(t, "side", toolcore.Options{TaskQueue: side, SideEffect: toolcore.ReadOnly}, func(context.Context, args) (any, error) {
		return "ran on the side queue", nil
	})
	e := newEnv(t, tool)
	require.Equal(t, []string{e.queue, side}, e.worker.TaskQueues())

	result, err := e.client.Execute(e.ctx(), call(t, "c1", "side", `{}`))
	require.NoError(t, err)
	assert.Equal(t, `"ran on the side queue"`, result.Content())
}
