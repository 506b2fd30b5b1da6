package activities

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/toolcore"
)

// BenchmarkExecuteToolTracing measures what the execute_tool span and the duration histogram add
// to one ExecuteTool attempt in the SDK's activity test environment: without the interceptor,
// with it on a no-op provider (the library's default), and with a recording SDK provider
// (content on and off). docs/BENCHMARKS.md has the figures.
func BenchmarkExecuteToolTracing(b *testing.B) {
	reg, err := toolcore.NewRegistry(toolcore.MustDefine(toolcore.Definition[traceArgs]{Name: "weather",
		Description: "the weather", Execute: func(_ context.Context, a traceArgs) (any, error) { return map[string]string{"city": a.City}, nil }}))
	if err != nil {
		b.Fatal(err)
	}
	in := ExecuteToolInput{ToolCallID: "call-1", ToolName: "weather", Accepted: json.RawMessage(`{"city":"Oslo","apiToken":"x"}`),
		IdempotencyKey: "toolcall-call-1"}
	recording := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	tests := []struct {
		name    string
		tracing *Tracing
	}{
		{name: "untraced"},
		{name: "noop provider", tracing: &Tracing{Tracer: noop.NewTracerProvider().Tracer("bench")}},
		{name: "recording", tracing: &Tracing{Tracer: recording.Tracer("bench")}},
		{name: "recording with content", tracing: &Tracing{Tracer: recording.Tracer("bench"), Content: true}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			a := &Activities{Registry: reg}
			if tt.tracing != nil {
				env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{a.TracingInterceptor(*tt.tracing)}})
			}
			env.RegisterActivity(a.ExecuteTool)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := env.ExecuteActivity(a.ExecuteTool, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
