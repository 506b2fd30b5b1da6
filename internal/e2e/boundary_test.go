package e2e

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// A call ID outside printable ASCII runs under its escaped workflow ID and keeps its ID in the
// result.
func TestNonASCIICallID(t *testing.T) {
	var runs atomic.Int32
	e := newEnv(t, addTool(t, &runs))
	ctx := e.ctx()

	result, err := e.client.Execute(ctx, call(t, "ts-é 1", "add", `{"left":1,"right":2}`))
	require.NoError(t, err)
	assert.Equal(t,
		`{"id":"tool-result-ts-é 1","role":"toolResult","toolCallId":"ts-é 1","toolName":"add","content":"{\"sum\":3}","isError":false}`,
		wireJSON(t, result))
	assert.Equal(t, e.queue+"/toolcall-ts-%C3%A9%201", e.client.WorkflowID("ts-é 1"))
	st, err := e.client.Status(ctx, "ts-é 1")
	require.NoError(t, err)
	assert.Equal(t, e.client.WorkflowID("ts-é 1"), st.WorkflowID)
	assert.Equal(t, "ts-é 1", st.ToolCallID)
}

// A foreign client that starts ToolCallWorkflow under a raw non-ASCII workflow ID gets a failed
// workflow that names the escaping rule, not a call that stays running.
func TestRawNonASCIIWorkflowIDFailsFast(t *testing.T) {
	var runs atomic.Int32
	e := newEnv(t, addTool(t, &runs))
	ctx := e.ctx()
	run, err := e.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{
		ID:                    e.queue + "/toolcall-ts-é-1",
		TaskQueue:             e.queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, wire.ToolCallWorkflowName, json.RawMessage(`{"type":"toolCall","id":"ts-é-1","name":"add","arguments":{"left":1,"right":2}}`))
	require.NoError(t, err)

	_, err = e.client.ResultByWorkflowID(ctx, run.GetID())
	var ce *toolcore.ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, toolcore.CodeInvalidToolCall, ce.Code)
	assert.Contains(t, ce.Message, "toolcall-ts-%C3%A9-1")
	assert.Equal(t, int32(0), runs.Load())
}

// New warns when the worker's Temporal client lacks worker.DialOption, and only then.
func TestWorkerWarnsWithoutHeaderEscaping(t *testing.T) {
	srv := devtest.Server(t)
	plain, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace()})
	require.NoError(t, err)
	t.Cleanup(plain.Close)
	tests := []struct {
		name     string
		client   sdkclient.Client
		wantWarn int
	}{
		{name: "plain client", client: plain, wantWarn: 1},
		{name: "with DialOption", client: devtest.Client(t), wantWarn: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			reg, err := toolcore.NewRegistry()
			require.NoError(t, err)
			_, err = worker.New(tt.client, srv.Namespace(), reg, worker.Options{TaskQueue: devtest.TaskQueue(t), Logger: zap.New(core)})
			require.NoError(t, err)
			assert.Len(t, logs.FilterMessageSnippet("not printable ASCII").All(), tt.wantWarn)
		})
	}
}

// With no worker on the queue, a deadline on Execute returns the deadline error, says that no
// worker polls the queue, and leaves a cancel request that ends the call unrun once a worker
// polls.
func TestExecuteDeadlineWithoutWorker(t *testing.T) {
	queue := devtest.TaskQueue(t)
	sdk := devtest.Client(t)
	cl := client.New(sdk, client.Options{TaskQueue: queue, Scope: queue, Namespace: devtest.Server(t).Namespace()})

	// Longer than the server's long-poll margin, which is what hid the deadline before.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	_, err := cl.Execute(ctx, call(t, "late-1", "add", `{"left":1,"right":2}`))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, client.ErrNoWorker)
	assert.ErrorContains(t, err, queue)

	var runs atomic.Int32
	e := &env{t: t, queue: queue, sdk: sdk, client: cl}
	e.worker = e.startWorker(sdk, 5*time.Second, addTool(t, &runs))
	_, err = cl.Result(e.ctx(), "late-1")
	assert.ErrorIs(t, err, wire.ErrCallCanceled)
	assert.Equal(t, int32(0), runs.Load(), "the tool never runs after the caller gave up")
}

// A worker refuses to join a task queue polled by a worker of another tool set, whose calls it
// would answer with TOOL_NOT_FOUND; a worker of the same tool set joins (scale-out).
func TestOneToolSetPerTaskQueue(t *testing.T) {
	var runs atomic.Int32
	e := newEnv(t, addTool(t, &runs))
	fingerprint, err := toolcore.NewRegistry(addTool(t, &runs))
	require.NoError(t, err)
	ours := worker.ToolSetFingerprint(fingerprint)
	// Wait until the server lists the first worker's poller (it registers on its first poll).
	require.Eventually(t, func() bool {
		resp, err := e.sdk.DescribeTaskQueue(e.ctx(), e.queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		return err == nil && len(resp.GetPollers()) > 0
	}, testTimeout, 20*time.Millisecond)

	start := func(tools ...toolcore.Tool) error {
		reg, err := toolcore.NewRegistry(tools...)
		require.NoError(t, err)
		w, err := worker.New(e.sdk, devtest.Server(t).Namespace(), reg, worker.Options{TaskQueue: e.queue, StopTimeout: time.Second})
		require.NoError(t, err)
		t.Cleanup(w.Stop)
		return w.Start()
	}
	assert.NoError(t, start(addTool(t, &runs)), "same tool set joins")

	weather := define(t, "weather", toolcore.Options{}, func(context.Context, args) (any, error) { return "sunny", nil })
	err = start(addTool(t, &runs), weather)
	require.ErrorIs(t, err, worker.ErrToolSetConflict)
	assert.ErrorContains(t, err, ours)
	assert.ErrorContains(t, err, e.queue)
}

// A call started on a queue whose worker lacks its tool records a TOOL_NOT_FOUND that names the
// queue and the tools that worker has, so the wrong queue shows in the result alone. The call ID
// has that one outcome: resubmitting it returns the recorded result, also through a client on the
// queue whose worker has the tool; a new call ID there runs (contract 7.5 rule 7).
func TestToolNotFoundNamesTheQueue(t *testing.T) {
	var adds atomic.Int32
	echo := define(t, "echo", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(_ context.Context, a args) (any, error) {
		return a.Tag, nil
	})
	e := newEnv(t, addTool(t, &adds), echo)
	ctx := e.ctx()

	// The weather tool has its own worker on its own queue; a client there shares e's scope, so
	// a call ID names the same workflow through either client.
	var forecasts atomic.Int32
	weather := define(t, "weather", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(context.Context, args) (any, error) {
		forecasts.Add(1)
		return "sunny", nil
	})
	side := &env{t: t, queue: e.queue + "-weather", sdk: e.sdk}
	side.worker = side.startWorker(e.sdk, 5*time.Second, weather)
	onWeather := client.New(e.sdk, client.Options{
		TaskQueue: side.queue,
		Scope:     e.queue,
		Namespace: devtest.Server(t).Namespace(),
	})

	wrong := call(t, "c-weather", "weather", `{}`)
	first, err := e.client.Execute(ctx, wrong)
	require.NoError(t, err)
	assert.Equal(t, toolcore.CodeToolNotFound, first.ErrorCode())
	assert.Equal(t, `Unknown Tool "weather" on task queue "`+e.queue+`"; this worker has: add, echo`, first.ErrorMessage())

	tests := []struct {
		name   string
		client *client.Client
	}{
		{name: "resubmitted on the same queue", client: e.client},
		{name: "resubmitted on the tool's queue", client: onWeather},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			again, err := tt.client.Execute(ctx, wrong)
			require.NoError(t, err)
			assert.Equal(t, wireJSON(t, first), wireJSON(t, again), "the recorded result, not a new run")
			byResult, err := tt.client.Result(ctx, wrong.ID())
			require.NoError(t, err)
			assert.Equal(t, wireJSON(t, first), wireJSON(t, byResult))
		})
	}
	assert.Zero(t, forecasts.Load(), "the weather tool never ran for the recorded call")

	fresh, err := onWeather.Execute(ctx, call(t, "c-weather-2", "weather", `{}`))
	require.NoError(t, err)
	assert.Equal(t, `"sunny"`, fresh.Content(), "a new call ID on the tool's queue runs")
	assert.Equal(t, int32(1), forecasts.Load())
	assert.Zero(t, adds.Load())
}

// A fatal tool error and a canceled call are outcomes, not worker problems: with the worker's
// Temporal client logging through internal/logging, neither produces a warning or an error, and
// the SDK's lines about them name the call.
func TestExpectedOutcomesAreNotLoggedAsErrors(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	srv := devtest.Server(t)
	sdk, err := sdkclient.Dial(sdkclient.Options{
		HostPort:          srv.FrontendAddress(),
		Namespace:         srv.Namespace(),
		Logger:            logging.Temporal(zap.New(core)),
		ConnectionOptions: sdkclient.ConnectionOptions{DialOptions: []grpc.DialOption{worker.DialOption()}},
	})
	require.NoError(t, err)
	t.Cleanup(sdk.Close)

	g := newGate()
	fatal := define(t, "ledger", toolcore.Options{}, func(context.Context, args) (any, error) {
		return nil, toolcore.NewNonRecoverableToolError("ledger invariant broken")
	})
	e := &env{t: t, queue: devtest.TaskQueue(t), sdk: sdk}
	e.client = client.New(sdk, client.Options{TaskQueue: e.queue, Scope: e.queue, Namespace: srv.Namespace()})
	e.worker = e.startWorker(sdk, 5*time.Second, fatal, g.tool(t, "slow", toolcore.Options{HeartbeatTimeout: time.Second}, false))
	ctx := e.ctx()

	_, err = e.client.Execute(ctx, call(t, "fatal-1", "ledger", `{}`))
	_, ok := toolcore.AsNonRecoverable(err)
	require.True(t, ok, "want the fatal error, got %v", err)

	done := goExecute(ctx, e.client, call(t, "cancel-é", "slow", `{}`))
	g.waitStarted(t)
	require.NoError(t, e.client.Cancel(ctx, "cancel-é"))
	require.ErrorIs(t, await(t, done).err, wire.ErrCallCanceled)

	ours := map[string]bool{e.client.WorkflowID("fatal-1"): true, e.client.WorkflowID("cancel-é"): true}
	for _, entry := range logs.FilterLevelExact(zap.WarnLevel).All() {
		assert.False(t, ours[workflowIDOf(entry)], "warning about an expected outcome: %s %v", entry.Message, entry.ContextMap())
	}
	for _, entry := range logs.FilterLevelExact(zap.ErrorLevel).All() {
		assert.False(t, ours[workflowIDOf(entry)], "error about an expected outcome: %s %v", entry.Message, entry.ContextMap())
	}
	canceled := logs.FilterMessage("Activity error.").FilterField(zap.String("toolCallId", "cancel-é")).All()
	require.Len(t, canceled, 1, "the SDK's line about the canceled attempt, with the call ID")
	assert.Equal(t, zap.DebugLevel, canceled[0].Level)
	assert.Len(t, logs.FilterMessage("Tool stopped").FilterField(zap.String("toolCallId", "cancel-é")).All(), 1)
	assert.Len(t, logs.FilterMessage("Tool raised a NonRecoverableToolError").FilterField(zap.String("toolCallId", "fatal-1")).All(), 1)
}

// workflowIDOf returns the WorkflowID field of an SDK log entry, "" without one.
func workflowIDOf(entry observer.LoggedEntry) string {
	id, _ := entry.ContextMap()["WorkflowID"].(string)
	return id
}
