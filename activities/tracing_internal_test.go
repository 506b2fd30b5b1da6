package activities

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	otelcontrib "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

type traceArgs struct {
	City     string `json:"city"`
	APIToken string `json:"apiToken"`
}

// TestExecuteToolSpanAndDuration: each attempt through the tracing interceptor ends one INTERNAL
// span "execute_tool <tool>" with the GenAI attributes, the principal's subject, the redacted
// arguments and the result, error.type and an error status for an error result, and records
// gen_ai_execute_tool_duration_seconds labelled by tool and error type.
func TestExecuteToolSpanAndDuration(t *testing.T) {
	define := func(name string, run func(context.Context, traceArgs) (any, error)) toolcore.Tool {
		return toolcore.MustDefine(toolcore.Definition[traceArgs]{Name: name, Description: "the " + name + " tool", Execute: run})
	}
	reg, err := toolcore.NewRegistry(
		define("weather", func(_ context.Context, a traceArgs) (any, error) { return map[string]string{"city": a.City}, nil }),
		define("broken", func(context.Context, traceArgs) (any, error) { return nil, errors.New("backend down") }),
	)
	require.NoError(t, err)
	tests := []struct {
		tool      string
		wantAttrs map[string]string
		wantError string
	}{
		{tool: "weather", wantAttrs: map[string]string{"toolgate.outcome": "ok", "gen_ai.tool.call.result": `{"city":"Oslo"}`}},
		{tool: "broken", wantAttrs: map[string]string{"toolgate.outcome": "error", "error.type": "TOOL_EXECUTION_FAILED"}, wantError: "TOOL_EXECUTION_FAILED"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			recorder := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
			var got []recorded
			var suite testsuite.WorkflowTestSuite
			suite.SetMetricsHandler(timers{got: &got})
			env := suite.NewTestActivityEnvironment()
			a := &Activities{Registry: reg}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{
				a.TracingInterceptor(Tracing{Tracer: tp.Tracer("test"), Content: true})}})
			env.RegisterActivity(a.ExecuteTool)
			_, err := env.ExecuteActivity(a.ExecuteTool, ExecuteToolInput{ToolCallID: "call-7", ToolName: tt.tool,
				Accepted: json.RawMessage(`{"city":"Oslo","apiToken":"s3cret"}`), IdempotencyKey: "toolcall-call-7",
				Principal: &toolcore.Principal{Subject: "alice"}})
			require.NoError(t, err)

			spans := recorder.Ended()
			require.Len(t, spans, 1)
			s := spans[0]
			assert.Equal(t, "execute_tool "+tt.tool, s.Name())
			attrs := map[string]string{}
			for _, kv := range s.Attributes() {
				attrs[string(kv.Key)] = kv.Value.String()
			}
			want := map[string]string{
				"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tt.tool, "gen_ai.tool.call.id": "call-7",
				"gen_ai.tool.description": "the " + tt.tool + " tool", "gen_ai.tool.type": "function",
				"toolgate.attempt": "1", "toolgate.principal.subject": "alice",
				"gen_ai.tool.call.arguments": `{"apiToken":"[REDACTED]","city":"Oslo"}`,
			}
			for k, v := range tt.wantAttrs {
				want[k] = v
			}
			for k, v := range want {
				assert.Equal(t, v, attrs[k], k)
			}
			if tt.wantError != "" {
				assert.Equal(t, codes.Error, s.Status().Code)
			} else {
				assert.NotContains(t, attrs, "error.type")
			}
			var durations []recorded
			for _, r := range got {
				if r.name == MetricExecuteToolDuration {
					durations = append(durations, r)
				}
			}
			require.Len(t, durations, 1)
			assert.Equal(t, tt.tool, durations[0].tags[MetricLabelGenAIToolName])
			assert.Equal(t, tt.wantError, durations[0].tags[MetricLabelErrorType])
		})
	}
}

// TestTracedContentIsBounded: the opt-in arguments are cut to MaxTracedContentBytes on a rune
// boundary, saying how much was cut, and secret-looking members are redacted at any depth.
func TestTracedContentIsBounded(t *testing.T) {
	long := `{"text":"` + strings.Repeat("é", MaxTracedContentBytes) + `"}`
	cut := tracedArguments(json.RawMessage(long))
	assert.LessOrEqual(t, len(cut), MaxTracedContentBytes+32)
	assert.Contains(t, cut, "bytes cut]")
	assert.True(t, strings.HasPrefix(cut, `{"text":"éé`))
	assert.Equal(t, `{"auth":{"Password":"[REDACTED]","user":"bob"},"list":[{"session_token":"[REDACTED]"}]}`,
		tracedArguments(json.RawMessage(`{"auth":{"user":"bob","Password":"hunter2"},"list":[{"session_token":"t"}]}`)))
}

// TestReconcileAndCompensateSpansNameTheCall: the RunActivity span of ReconcileTool and of
// CompensateTool (sdk-go's interceptor) carries the tool, the call and the idempotency key.
func TestReconcileAndCompensateSpansNameTheCall(t *testing.T) {
	reg, err := toolcore.NewRegistry(toolcore.MustDefine(toolcore.Definition[traceArgs]{Name: "book", Description: "book",
		Execute: func(context.Context, traceArgs) (any, error) { return "ok", nil }}))
	require.NoError(t, err)
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	sdkTracing, err := otelcontrib.NewTracingInterceptor(otelcontrib.TracerOptions{Tracer: tp.Tracer("sdk")})
	require.NoError(t, err)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	a := &Activities{Registry: reg}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{sdkTracing, a.TracingInterceptor(Tracing{Tracer: tp.Tracer("test")})}})
	env.RegisterActivity(a.ReconcileTool)
	env.RegisterActivity(a.CompensateTool)
	_, _ = env.ExecuteActivity(a.ReconcileTool, ReconcileToolInput{ToolCallID: "c-1", ToolName: "book", IdempotencyKey: "toolcall-c-1"})
	_, _ = env.ExecuteActivity(a.CompensateTool, wire.CompensateToolInput{Effect: wire.UndoEffect{ToolCallID: "c-2", ToolName: "book",
		IdempotencyKey: "toolcall-c-2"}, Key: "toolcall-c-2/compensate"})
	want := map[string][3]string{
		"RunActivity:ReconcileTool":  {"book", "c-1", "toolcall-c-1"},
		"RunActivity:CompensateTool": {"book", "c-2", "toolcall-c-2/compensate"},
	}
	got := map[string][3]string{}
	for _, s := range recorder.Ended() {
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		got[s.Name()] = [3]string{attrs[AttrToolName], attrs[AttrToolCallID], attrs[AttrIdempotencyKey]}
	}
	assert.Equal(t, want, got)
}
