package worker

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	otelcontrib "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// tracedHistories are recorded histories with what replay would trace twice: a plain call, a call
// approved through an update, inline and child rounds of an agent workflow.
var tracedHistories = []string{
	"success.json", "fixtures/approval-approved.json", "fixtures/ask-answered.json",
	"rounds/sequential.json", "inline/parallel.json",
}

// replayTraced replays file with interceptors and returns the spans the provider recorded.
func replayTraced(t *testing.T, file string, interceptors func(*sdktrace.TracerProvider) []interceptor.WorkerInterceptor) []sdktrace.ReadOnlySpan {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	tools, err := toolbox.Tools(toolbox.Config{})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(append(tools, fixtures.Tools()...)...)
	require.NoError(t, err)
	replayer, err := sdkworker.NewWorkflowReplayerWithOptions(sdkworker.WorkflowReplayerOptions{Interceptors: interceptors(tp)})
	require.NoError(t, err)
	(&workflows.Workflows{Registry: reg, SearchAttributes: true}).Register(replayer)
	fixtures.RegisterRoundWorkflow(replayer)
	fixtures.RegisterInlineRoundWorkflow(replayer, reg)
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, replayer.ReplayWorkflowHistoryFromJSONFile(logger, filepath.Join("..", "testdata", "histories", file)))
	return recorder.Ended()
}

// TestReplayEmitsNoSpans: replaying recorded histories through the worker's tracing
// interceptors (a recording TracerProvider) ends no span, though the same interceptor without
// the replay guard does (RunWorkflow, HandleUpdate): what a worker replays after a cache
// eviction or a restart is not traced twice.
func TestReplayEmitsNoSpans(t *testing.T) {
	guarded := func(tp *sdktrace.TracerProvider) []interceptor.WorkerInterceptor {
		acts := &activities.Activities{}
		in, err := tracingInterceptors(tp, acts, true)
		require.NoError(t, err)
		return in
	}
	plain := func(tp *sdktrace.TracerProvider) []interceptor.WorkerInterceptor {
		in, err := otelcontrib.NewTracingInterceptor(otelcontrib.TracerOptions{Tracer: tp.Tracer(SDKTracerName)})
		require.NoError(t, err)
		return []interceptor.WorkerInterceptor{in}
	}
	for _, file := range tracedHistories {
		t.Run(file, func(t *testing.T) {
			assert.Empty(t, spanNames(replayTraced(t, file, guarded)), "spans ended by replay with toolgate's interceptors")
			assert.NotEmpty(t, spanNames(replayTraced(t, file, plain)), "sdk-go's interceptor alone traces replay (the guard is what keeps it quiet)")
		})
	}
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name()
	}
	return names
}

// TestAgentRunSpanIsInvokeAgent: the RunWorkflow span of a workflow that is not toolgate's own
// is named invoke_agent with the GenAI attributes; toolgate's own keep sdk-go's names.
func TestAgentRunSpanIsInvokeAgent(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	live, err := otelcontrib.NewTracer(otelcontrib.TracerOptions{Tracer: tp.Tracer(SDKTracerName)})
	require.NoError(t, err)
	rt := &replaySafeTracer{Tracer: live, silent: live, marks: &replayMarks{}}
	for _, name := range []string{"roundAgent", "ToolCallWorkflow"} {
		span, err := rt.StartSpan(&interceptor.TracerStartSpanOptions{Operation: opRunWorkflow, Name: name,
			Tags: map[string]string{tagWorkflowID: "agent-1", tagRunID: "run-1"}})
		require.NoError(t, err)
		span.Finish(&interceptor.TracerFinishSpanOptions{})
	}
	ended := recorder.Ended()
	require.Len(t, ended, 2)
	assert.Equal(t, "invoke_agent roundAgent", ended[0].Name())
	attrs := map[string]string{}
	for _, kv := range ended[0].Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	assert.Equal(t, "invoke_agent", attrs[activities.AttrOperationName])
	assert.Equal(t, "roundAgent", attrs[AttrAgentName])
	assert.Equal(t, "agent-1", attrs[AttrConversationID])
	assert.Equal(t, "RunWorkflow:ToolCallWorkflow", ended[1].Name())
}
