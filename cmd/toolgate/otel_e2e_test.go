package main

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
)

// startTracedDev starts `toolgate dev` exporting to url over OTLP/gRPC, with extra flags.
func startTracedDev(t *testing.T, url string, args ...string) *devServer {
	t.Helper()
	p := startProcess(t, childEnv(envOTLPProtocol+"=grpc"),
		append([]string{"dev", "--port", "0", "--no-ui", "--in-memory", "--otlp-endpoint", url}, args...)...)
	d := &devServer{process: p, addr: map[string]string{}}
	for {
		line := p.waitLine(t, p.stdout, " ")
		key, value, _ := strings.Cut(line, " ")
		d.addr[key] = value
		if key == "data" {
			return d
		}
	}
}

// received indexes the spans the receiver got and the local ones by span ID (hex): name and
// parent span ID.
type received map[string][2]string

func (r *otlpReceiver) index(local []sdktrace.ReadOnlySpan) received {
	r.mu.Lock()
	defer r.mu.Unlock()
	idx := received{}
	for _, s := range r.spans {
		idx[hex.EncodeToString(s.GetSpanId())] = [2]string{s.GetName(), hex.EncodeToString(s.GetParentSpanId())}
	}
	for _, s := range local {
		idx[s.SpanContext().SpanID().String()] = [2]string{s.Name(), s.Parent().SpanID().String()}
	}
	return idx
}

// path is the names from span id up to the root, across both processes.
func (idx received) path(id string) []string {
	var names []string
	for {
		s, ok := idx[id]
		if !ok {
			return names
		}
		names = append(names, s[0])
		id = s[1]
	}
}

// TestDevExportsTheTraceOfACall: a client tracing into its own provider calls `toolgate dev
// --otlp-endpoint` (OTLP/gRPC to an in-process receiver on the collector protocol); at dev's stop
// (the flush) the receiver holds the worker's side of the same trace: RunWorkflow, StartActivity,
// RunActivity and "execute_tool add" with the GenAI attributes, linked under the client's
// StartWorkflow span through the Temporal headers, from service toolgate-dev.
func TestDevExportsTheTraceOfACall(t *testing.T) {
	r, url := startOTLPReceiver(t)
	dev := startTracedDev(t, url)

	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.addr["frontend"],
		Interceptors: []interceptor.ClientInterceptor{tgclient.TracingInterceptor(tp)}})
	require.NoError(t, err)
	defer c.Close()
	tg := tgclient.New(c, tgclient.Options{TracerProvider: tp})
	ctx, cancel := context.WithTimeout(t.Context(), processTimeout)
	defer cancel()
	ctx, root := tp.Tracer("test").Start(ctx, "agent turn")
	call, err := toolcore.NewToolCall("otlp-1", "add", []byte(`{"left":1,"right":2}`))
	require.NoError(t, err)
	res, err := tg.Execute(ctx, call)
	require.NoError(t, err)
	require.False(t, res.IsError(), res.Content())
	root.End()
	require.Equal(t, ExitOK, dev.interrupt(t), dev.stderrText())

	idx := r.index(recorder.Ended())
	var tool string
	r.mu.Lock()
	for _, s := range r.spans {
		if s.GetName() == "execute_tool add" {
			tool = hex.EncodeToString(s.GetSpanId())
			assert.Equal(t, root.SpanContext().TraceID().String(), hex.EncodeToString(s.GetTraceId()), "one trace")
			attrs := map[string]string{}
			for _, kv := range s.GetAttributes() {
				attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
			}
			assert.Equal(t, "execute_tool", attrs["gen_ai.operation.name"])
			assert.Equal(t, "otlp-1", attrs["gen_ai.tool.call.id"])
			assert.Equal(t, "function", attrs["gen_ai.tool.type"])
			assert.Equal(t, "ok", attrs["toolgate.outcome"])
		}
	}
	service := r.names["execute_tool add"]
	r.mu.Unlock()
	require.NotEmpty(t, tool, "the receiver got no execute_tool span; dev stderr:\n%s", dev.stderrText())
	assert.Equal(t, "toolgate-dev", service)
	assert.Equal(t, []string{"execute_tool add", "RunActivity:ExecuteTool", "StartActivity:ExecuteTool",
		"RunWorkflow:ToolCallWorkflow", "StartWorkflow:ToolCallWorkflow", "call add", "agent turn"}, idx.path(tool))
}
