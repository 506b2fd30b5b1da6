package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// tracedEnv is an env whose Temporal client carries client.TracingInterceptor and whose worker
// and client trace into one recording provider.
type tracedEnv struct {
	*env
	recorder *tracetest.SpanRecorder
	tp       *sdktrace.TracerProvider
}

func newTracedEnv(t *testing.T, register func(*worker.Worker), tools ...toolcore.Tool) *tracedEnv {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	srv := devtest.Server(t)
	sdk, err := sdkclient.Dial(sdkclient.Options{
		HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(),
		Interceptors:      []interceptor.ClientInterceptor{client.TracingInterceptor(tp)},
		ConnectionOptions: sdkclient.ConnectionOptions{DialOptions: []grpc.DialOption{worker.DialOption()}},
	})
	require.NoError(t, err)
	t.Cleanup(sdk.Close)
	e := &env{t: t, queue: devtest.TaskQueue(t), sdk: sdk}
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	w, err := worker.New(sdk, srv.Namespace(), reg, worker.Options{TaskQueue: e.queue, StopTimeout: 5 * time.Second,
		TracerProvider: tp, TraceContent: true})
	require.NoError(t, err)
	if register != nil {
		register(w)
	}
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	e.worker = w
	e.client = client.New(sdk, client.Options{TaskQueue: e.queue, Scope: e.queue, Namespace: srv.Namespace(), TracerProvider: tp})
	return &tracedEnv{env: e, recorder: recorder, tp: tp}
}

// spanTree indexes ended spans by ID.
type spanTree map[trace.SpanID]sdktrace.ReadOnlySpan

func (e *tracedEnv) tree() spanTree {
	tree := spanTree{}
	for _, s := range e.recorder.Ended() {
		tree[s.SpanContext().SpanID()] = s
	}
	return tree
}

func (e *tracedEnv) names() []string {
	var names []string
	for _, s := range e.recorder.Ended() {
		names = append(names, s.Name())
	}
	return names
}

// path returns the names from s up to the root, s first.
func (tr spanTree) path(s sdktrace.ReadOnlySpan) []string {
	var names []string
	for {
		names = append(names, s.Name())
		parent, ok := tr[s.Parent().SpanID()]
		if !ok {
			return names
		}
		s = parent
	}
}

func (tr spanTree) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func attrsOf(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// TestTraceOfACall: one call makes one trace, client -> workflow -> activity -> tool:
// the caller's span, the client's "call add", sdk-go's StartWorkflow, RunWorkflow, StartActivity
// and RunActivity, and "execute_tool add" with the GenAI attributes, the principal's subject and
// the (redacted) arguments and result.
func TestTraceOfACall(t *testing.T) {
	var runs atomic.Int32
	e := newTracedEnv(t, nil, addTool(t, &runs))
	ctx, root := e.tp.Tracer("test").Start(e.ctx(), "agent turn")
	c := call(t, "traced-1", "add", `{"left":2,"right":3}`)
	res, err := e.client.Execute(client.WithPrincipal(ctx, toolcore.Principal{Subject: "alice"}), c)
	require.NoError(t, err)
	require.False(t, res.IsError())
	root.End()

	var tool sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		spans := e.tree().named("execute_tool add")
		if len(spans) == 1 {
			tool = spans[0]
		}
		return tool != nil
	}, testTimeout, 10*time.Millisecond, "the attempt's span ends")
	tree := e.tree()
	assert.Equal(t, []string{"execute_tool add", "RunActivity:ExecuteTool", "StartActivity:ExecuteTool",
		"RunWorkflow:ToolCallWorkflow", "StartWorkflow:ToolCallWorkflow", "call add", "agent turn"}, tree.path(tool))
	assert.Equal(t, root.SpanContext().TraceID(), tool.SpanContext().TraceID())
	assert.Equal(t, trace.SpanKindInternal, tool.SpanKind())
	attrs := attrsOf(tool)
	assert.Equal(t, "execute_tool", attrs["gen_ai.operation.name"])
	assert.Equal(t, "add", attrs["gen_ai.tool.name"])
	assert.Equal(t, "traced-1", attrs["gen_ai.tool.call.id"])
	assert.Equal(t, "test tool add", attrs["gen_ai.tool.description"])
	assert.Equal(t, "function", attrs["gen_ai.tool.type"])
	assert.Equal(t, "ok", attrs["toolgate.outcome"])
	assert.Equal(t, "1", attrs["toolgate.attempt"])
	assert.Equal(t, "alice", attrs["toolgate.principal.subject"])
	assert.JSONEq(t, `{"left":2,"right":3}`, attrs["gen_ai.tool.call.arguments"])
	assert.JSONEq(t, `{"sum":5}`, attrs["gen_ai.tool.call.result"])
	assert.NotContains(t, attrs, "error.type")
	call := tree.named("call add")
	require.Len(t, call, 1)
	assert.Equal(t, "ok", attrsOf(call[0])["toolgate.outcome"])
}

// TestTraceOfAFailedCall: an error result sets error.type to its code and the span's status.
func TestTraceOfAFailedCall(t *testing.T) {
	e := newTracedEnv(t, nil, define(t, "broken", toolcore.Options{}, func(_ context.Context, _ args) (any, error) {
		return nil, errors.New("the backend said no")
	}))
	c := call(t, "traced-2", "broken", `{}`)
	res, err := e.client.Execute(e.ctx(), c)
	require.NoError(t, err)
	require.True(t, res.IsError())
	var tool []sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool { tool = e.tree().named("execute_tool broken"); return len(tool) == 1 },
		testTimeout, 10*time.Millisecond)
	attrs := attrsOf(tool[0])
	assert.Equal(t, "TOOL_EXECUTION_FAILED", attrs["error.type"])
	assert.Equal(t, "error", attrs["toolgate.outcome"])
	assert.Equal(t, codes.Error, tool[0].Status().Code)
}

// tracedRound is an agent workflow running one round of child calls on its own queue.
func tracedRound(ctx workflow.Context, queue string, raw []json.RawMessage) ([]parentOutcome, error) {
	return roundParent(ctx, queue, queue, raw)
}

// TestTraceOfARound: an agent workflow's run is "invoke_agent <type>", and each call of its
// round is traced below it down to its execute_tool span.
func TestTraceOfARound(t *testing.T) {
	var runs atomic.Int32
	e := newTracedEnv(t, func(w *worker.Worker) {
		w.RegisterWorkflowWithOptions(tracedRound, workflow.RegisterOptions{Name: "tracedRound"})
	}, addTool(t, &runs))
	var raw []json.RawMessage
	for i, c := range []toolcore.ToolCall{call(t, "r1", "add", `{"left":1,"right":1}`), call(t, "r2", "add", `{"left":2,"right":2}`)} {
		b, err := c.MarshalJSON()
		require.NoError(t, err, "call %d", i)
		raw = append(raw, b)
	}
	ctx, root := e.tp.Tracer("test").Start(e.ctx(), "agent")
	run, err := e.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: e.queue + "/agent", TaskQueue: e.queue}, "tracedRound", e.queue, raw)
	require.NoError(t, err)
	var out []parentOutcome
	require.NoError(t, run.Get(ctx, &out))
	require.Equal(t, []parentOutcome{{Kind: "result", Content: `{"sum":2}`}, {Kind: "result", Content: `{"sum":4}`}}, out)
	root.End()

	require.Eventually(t, func() bool {
		return len(e.tree().named("execute_tool add")) == 2 && len(e.tree().named("invoke_agent tracedRound")) == 1
	},
		testTimeout, 10*time.Millisecond, "spans: %v", e.names())
	tree := e.tree()
	agent := tree.named("invoke_agent tracedRound")[0]
	assert.Equal(t, "invoke_agent", attrsOf(agent)["gen_ai.operation.name"])
	assert.Equal(t, "tracedRound", attrsOf(agent)["gen_ai.agent.name"])
	var ids []string
	for _, tool := range tree.named("execute_tool add") {
		assert.Equal(t, []string{"execute_tool add", "RunActivity:ExecuteTool", "StartActivity:ExecuteTool",
			"RunWorkflow:ToolCallWorkflow", "StartChildWorkflow:ToolCallWorkflow", "invoke_agent tracedRound",
			"StartWorkflow:tracedRound", "agent"}, tree.path(tool))
		ids = append(ids, attrsOf(tool)["gen_ai.tool.call.id"])
	}
	assert.ElementsMatch(t, []string{"r1", "r2"}, ids)
}
