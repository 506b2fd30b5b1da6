package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"google.golang.org/grpc"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// tracedWorker serves reg on a fresh queue with a worker and a Temporal client traced into one
// recording provider, and returns a traced toolgate client for the queue.
func tracedWorker(t *testing.T, reg *toolcore.Registry) (*tgclient.Client, *sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	srv := devtest.Server(t)
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(),
		Interceptors:      []interceptor.ClientInterceptor{tgclient.TracingInterceptor(tp)},
		ConnectionOptions: sdkclient.ConnectionOptions{DialOptions: []grpc.DialOption{worker.DialOption()}}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, srv.Namespace(), reg, worker.Options{TaskQueue: queue, TracerProvider: tp})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return tgclient.New(c, tgclient.Options{TaskQueue: queue, TracerProvider: tp}), tp, recorder
}

// spanPath is the names from s up to the root among spans, s first.
func spanPath(spans []sdktrace.ReadOnlySpan, s sdktrace.ReadOnlySpan) []string {
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, x := range spans {
		byID[x.SpanContext().SpanID()] = x
	}
	names := []string{s.Name()}
	for p, ok := byID[s.Parent().SpanID()]; ok; p, ok = byID[p.Parent().SpanID()] {
		names = append(names, p.Name())
	}
	return names
}

func endedSpan(t *testing.T, recorder *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		for _, s := range recorder.Ended() {
			if s.Name() == name {
				found = s
			}
		}
		return found != nil
	}, time.Minute, 10*time.Millisecond, "span %q", name)
	return found
}

// TestMCPCallTrace: a tools/call whose params._meta carries a traceparent continues the caller's
// trace: the server's SERVER span "tools/call echo" (mcp.method.name, gen_ai.tool.name,
// mcp.protocol.version) is its child, and the call's workflow, activity and execute_tool spans
// descend from it.
func TestMCPCallTrace(t *testing.T) {
	_, reg := newTestTools(t)
	tg, tp, recorder := tracedWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	cs := connectInMemory(t, mcp.NewServer(tg, infos, mcp.Options{TracerProvider: tp}))

	ctx, caller := tp.Tracer("test").Start(t.Context(), "mcp client")
	meta := sdk.Meta{}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	for k, v := range carrier {
		meta[k] = v
	}
	caller.End()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}, Meta: meta})
	require.NoError(t, err)
	require.False(t, res.IsError)

	tool := endedSpan(t, recorder, "execute_tool echo")
	server := endedSpan(t, recorder, "tools/call echo")
	spans := recorder.Ended()
	assert.Equal(t, []string{"execute_tool echo", "RunActivity:ExecuteTool", "StartActivity:ExecuteTool",
		"RunWorkflow:ToolCallWorkflow", "StartWorkflow:ToolCallWorkflow", "tools/call echo", "mcp client"}, spanPath(spans, tool))
	assert.Equal(t, trace.SpanKindServer, server.SpanKind())
	attrs := map[string]string{}
	for _, kv := range server.Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	assert.Equal(t, "tools/call", attrs["mcp.method.name"])
	assert.Equal(t, "echo", attrs["gen_ai.tool.name"])
	assert.Equal(t, "execute_tool", attrs["gen_ai.operation.name"])
	assert.NotEmpty(t, attrs["mcp.protocol.version"])
}

// TestMountInjectsTraceparent: a mounted server's tools/call carries, in params._meta, the
// traceparent of the attempt's execute_tool span, so the remote server's spans join the trace.
func TestMountInjectsTraceparent(t *testing.T) {
	got := make(chan string, 1)
	remote := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	remote.AddTool(&sdk.Tool{Name: "look", Description: "Record the trace context.",
		InputSchema: map[string]any{"type": "object"}, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			tp, _ := req.Params.Meta[mcp.MetaTraceparent].(string)
			got <- tp
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "seen"}}}, nil
		})
	transport := func() sdk.Transport {
		serverT, clientT := sdk.NewInMemoryTransports()
		go func() { _, _ = remote.Connect(context.Background(), serverT, nil) }()
		return clientT
	}
	mounted, err := mcp.Mount(t.Context(), "far", transport, mcp.MountOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = mounted.Close() })
	reg, err := toolcore.NewRegistry(mounted.Tools()...)
	require.NoError(t, err)
	tg, _, recorder := tracedWorker(t, reg)

	call, err := toolcore.NewToolCall("mount-trace", "far_look", []byte(`{}`))
	require.NoError(t, err)
	res, err := tg.Execute(t.Context(), call)
	require.NoError(t, err)
	require.False(t, res.IsError(), res.Content())
	tool := endedSpan(t, recorder, "execute_tool far_look")
	sc := tool.SpanContext()
	assert.Equal(t, "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01", <-got)
}

// TestMCPSpanBoundsWhatTheRequestNames: the span of a tools/call is made before the tool is looked
// up, so a long tool name is cut (256 bytes) on the span name and attribute, and the request is
// refused as before.
func TestMCPSpanBoundsWhatTheRequestNames(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	cs := connectInMemory(t, mcp.NewServer(nil, nil, mcp.Options{TracerProvider: tp}))
	long := strings.Repeat("n", 10_000)
	_, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: long, Arguments: map[string]any{}})
	require.Error(t, err)
	var call sdktrace.ReadOnlySpan
	for _, s := range recorder.Ended() {
		if strings.HasPrefix(s.Name(), "tools/call ") {
			call = s
		}
	}
	require.NotNil(t, call)
	assert.Equal(t, "tools/call "+long[:256], call.Name())
	assert.Equal(t, "jsonrpc_error", attrOf(call, "error.type"))
}

func attrOf(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}
