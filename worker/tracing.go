package worker

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	otelcontrib "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/wire"
)

// TracerName is the instrumentation scope of toolgate's own spans (execute_tool, invoke_agent's
// attributes); sdk-go's interceptor spans (StartWorkflow, RunWorkflow, StartActivity,
// RunActivity, HandleUpdate) use SDKTracerName.
const (
	TracerName    = "github.com/toolgate/toolgate"
	SDKTracerName = "temporal-sdk-go"
)

// The names an agent run's span gets (GenAI semantic conventions): the RunWorkflow span of a
// workflow that is not one of toolgate's own is renamed "invoke_agent <workflow type>".
const (
	SpanInvokeAgent    = "invoke_agent"
	AttrAgentName      = "gen_ai.agent.name"
	AttrConversationID = "gen_ai.conversation.id"
)

// The operations and tags of sdk-go's tracing interceptor this file relies on.
const (
	opRunWorkflow  = "RunWorkflow"
	opHandleUpdate = "HandleUpdate"
	tagRunID       = "temporalRunID"
	tagWorkflowID  = "temporalWorkflowID"
)

// tracingInterceptors returns the worker's interceptors, outermost first: the replay guard,
// sdk-go's OpenTelemetry tracing interceptor (its spans linked through the Temporal headers) with
// the replay-safe tracer, and the activities' execute_tool spans inside RunActivity.
//
// Replay emits no span: sdk-go's interceptor already skips the spans it starts from workflow
// code while replaying (StartActivity, StartChildWorkflow, signals, queries) but not
// RunWorkflow nor HandleUpdate, which a replayed run or update starts again; the guard marks
// those, and the tracer starts them non-recording, carrying the parent's span context so the
// spans after the replay still join the trace.
func tracingInterceptors(tp trace.TracerProvider, acts *activities.Activities, content bool) ([]interceptor.WorkerInterceptor, error) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	marks := &replayMarks{}
	live, err := otelcontrib.NewTracer(otelcontrib.TracerOptions{Tracer: tp.Tracer(SDKTracerName)})
	if err != nil {
		return nil, fmt.Errorf("tracing interceptor: %w", err)
	}
	silent, err := otelcontrib.NewTracer(otelcontrib.TracerOptions{Tracer: tp.Tracer(SDKTracerName), SpanStarter: parentOnly})
	if err != nil {
		return nil, fmt.Errorf("tracing interceptor: %w", err)
	}
	return []interceptor.WorkerInterceptor{
		&replayGuard{marks: marks},
		interceptor.NewTracingInterceptor(&replaySafeTracer{Tracer: live, silent: silent, marks: marks}),
		acts.TracingInterceptor(activities.Tracing{Tracer: tp.Tracer(TracerName), Content: content}),
	}, nil
}

// parentOnly starts no span: it returns the parent's span context as a non-recording span (or
// a no-op one without a parent).
func parentOnly(ctx context.Context, _ trace.Tracer, _ string, _ ...trace.SpanStartOption) trace.Span {
	return trace.SpanFromContext(ctx)
}

// replayMarks holds the runs whose RunWorkflow or HandleUpdate span is about to start in replay.
// The guard sets a mark and the tracer takes it in the same synchronous call chain (a run's
// workflow code runs one coroutine at a time), keyed by run ID.
type replayMarks struct{ runs sync.Map }

func (m *replayMarks) set(run string)   { m.runs.Store(run, struct{}{}) }
func (m *replayMarks) clear(run string) { m.runs.Delete(run) }
func (m *replayMarks) take(run string) bool {
	_, ok := m.runs.LoadAndDelete(run)
	return ok
}

// replaySafeTracer is sdk-go's OpenTelemetry tracer, with a marked run's span started silent and
// an agent workflow's RunWorkflow span named invoke_agent.
type replaySafeTracer struct {
	interceptor.Tracer // live
	silent             interceptor.Tracer
	marks              *replayMarks
}

func (t *replaySafeTracer) StartSpan(opts *interceptor.TracerStartSpanOptions) (interceptor.TracerSpan, error) {
	if (opts.Operation == opRunWorkflow || opts.Operation == opHandleUpdate) && t.marks.take(opts.Tags[tagRunID]) {
		return t.silent.StartSpan(opts)
	}
	span, err := t.Tracer.StartSpan(opts)
	if err != nil || opts.Operation != opRunWorkflow || toolgateWorkflow(opts.Name) {
		return span, err
	}
	if s, ok := span.(trace.Span); ok {
		s.SetName(SpanInvokeAgent + " " + opts.Name)
		s.SetAttributes(
			attribute.String(activities.AttrOperationName, SpanInvokeAgent),
			attribute.String(AttrAgentName, opts.Name),
			attribute.String(AttrConversationID, opts.Tags[tagWorkflowID]))
	}
	return span, nil
}

// toolgateWorkflow reports whether name is one of toolgate's own workflow types; any other on a
// toolgate worker is an agent workflow (RegisterWorkflow).
func toolgateWorkflow(name string) bool {
	switch name {
	case wire.ToolCallWorkflowName, wire.ToolCatalogWorkflowName, wire.UndoWorkflowName:
		return true
	}
	return false
}

// replayGuard marks a run whose workflow or update starts while replaying (see
// tracingInterceptors).
type replayGuard struct {
	interceptor.WorkerInterceptorBase
	marks *replayMarks
}

func (g *replayGuard) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &replayGuardInbound{marks: g.marks}
	i.Next = next
	return i
}

type replayGuardInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	marks *replayMarks
}

func (i *replayGuardInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	if workflow.IsReplaying(ctx) {
		run := workflow.GetInfo(ctx).WorkflowExecution.RunID
		i.marks.set(run)
		defer i.marks.clear(run)
	}
	return i.Next.ExecuteWorkflow(ctx, in)
}

func (i *replayGuardInbound) ExecuteUpdate(ctx workflow.Context, in *interceptor.UpdateInput) (any, error) {
	if workflow.IsReplaying(ctx) {
		run := workflow.GetInfo(ctx).WorkflowExecution.RunID
		i.marks.set(run)
		defer i.marks.clear(run)
	}
	return i.Next.ExecuteUpdate(ctx, in)
}
