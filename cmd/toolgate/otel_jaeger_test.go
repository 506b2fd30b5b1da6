package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

// jaegerFlag runs TestJaegerTraces (make test-traces): building Jaeger costs minutes of CPU.
var jaegerFlag = flag.Bool("jaeger", false, "run TestJaegerTraces against Jaeger v1.75.0 built from internal/tools/jaeger")

// The tools module Jaeger is built from (outside go.work, GOWORK=off), and the variable naming a
// prebuilt binary instead.
const (
	jaegerModule = "internal/tools/jaeger"
	envJaegerBin = "TOOLGATE_JAEGER_BIN"
)

// buildJaeger builds Jaeger's all-in-one binary into dir, or returns $TOOLGATE_JAEGER_BIN.
func buildJaeger(t *testing.T, dir string) string {
	t.Helper()
	if p := os.Getenv(envJaegerBin); p != "" {
		return p
	}
	root, err := testbin.Root()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "jaeger")
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-w", "-o", out, "github.com/jaegertracing/jaeger/cmd/jaeger")
	cmd.Dir = filepath.Join(root, jaegerModule)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "build jaeger: %s", msg)
	return out
}

// freePorts returns n loopback ports free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// jaeger is a running Jaeger all-in-one: OTLP on loopback, memory storage, the query API.
type jaeger struct {
	otlpGRPC, otlpHTTP, query string
}

const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	dir := t.TempDir()
	bin := buildJaeger(t, dir)
	ports := freePorts(t, 4)
	config := filepath.Join(dir, "jaeger.yaml")
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, jaegerConfig, ports[0], ports[1], ports[2], ports[3]), 0o600))
	cmd := exec.Command(bin, "--config", config)
	var stderr testbin.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	j := &jaeger{query: fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		otlpGRPC: fmt.Sprintf("http://127.0.0.1:%d", ports[2]), otlpHTTP: fmt.Sprintf("http://127.0.0.1:%d", ports[3])}
	require.Eventually(t, func() bool {
		resp, err := http.Get(j.query + "/api/services")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 2*time.Minute, 100*time.Millisecond, "jaeger answers; its output:\n%s", &stderr)
	return j
}

// jaegerTrace is a trace as Jaeger's query API returns it.
type jaegerTrace struct {
	Spans []struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"tags"`
		ProcessID string `json:"processID"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// spanWithParents waits until trace traceID holds the span named name with a path of n spans
// from it to the root, and returns the trace and that span.
func (j *jaeger) spanWithParents(t *testing.T, traceID, name string, n int) (jaegerTrace, int) {
	t.Helper()
	var tr jaegerTrace
	require.Eventually(t, func() bool {
		tr = j.trace(t, traceID, name)
		return len(tr.path(tr.named(name)[0])) == n
	}, time.Minute, 200*time.Millisecond)
	return tr, tr.named(name)[0]
}

// trace reads traceID from Jaeger until it holds a span named want.
func (j *jaeger) trace(t *testing.T, traceID, want string) jaegerTrace {
	t.Helper()
	var tr jaegerTrace
	require.Eventually(t, func() bool {
		resp, err := http.Get(j.query + "/api/traces/" + traceID)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var body struct {
			Data []jaegerTrace `json:"data"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil || len(body.Data) != 1 {
			return false
		}
		tr = body.Data[0]
		return len(tr.named(want)) > 0
	}, time.Minute, 200*time.Millisecond, "trace %s with a span %q", traceID, want)
	return tr
}

func (tr jaegerTrace) named(name string) []int {
	var out []int
	for i, s := range tr.Spans {
		if s.OperationName == name {
			out = append(out, i)
		}
	}
	return out
}

// path is the operation names from span i to the root, with each span's service.
func (tr jaegerTrace) path(i int) []string {
	byID := map[string]int{}
	for k, s := range tr.Spans {
		byID[s.SpanID] = k
	}
	var names []string
	for {
		s := tr.Spans[i]
		names = append(names, tr.Processes[s.ProcessID].ServiceName+" "+s.OperationName)
		parent := -1
		for _, r := range s.References {
			if k, ok := byID[r.SpanID]; ok && r.RefType == "CHILD_OF" {
				parent = k
			}
		}
		if parent < 0 {
			return names
		}
		i = parent
	}
}

func (tr jaegerTrace) tag(i int, key string) string {
	for _, kv := range tr.Spans[i].Tags {
		if kv.Key == key {
			return fmt.Sprint(kv.Value)
		}
	}
	return ""
}

// jaegerRound is an agent workflow: one round of child calls.
func jaegerRound(ctx workflow.Context, queue string, raw []json.RawMessage) (int, error) {
	calls := make([]toolcore.ToolCall, len(raw))
	for i, r := range raw {
		calls[i], _ = toolcore.ParseToolCall(r)
	}
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: queue, Scope: queue, SearchAttributes: true})
	out, err := workflows.ExecuteRound(ctx, calls, toolcore.RoundOptions{})
	return len(out), err
}

// TestJaegerTraces is the long form of the trace tests (make test-traces): a real Jaeger receives
// OTLP from toolgate dev (http/protobuf), toolgate mcp (stdio) and this process (gRPC), and its
// query API returns, for a call, an MCP call and an agent round, one trace each with the span
// tree and the GenAI attributes.
func TestJaegerTraces(t *testing.T) {
	if !*jaegerFlag {
		t.Skip("long test: make test-traces (-args -jaeger) builds Jaeger")
	}
	j := startJaeger(t)
	dev := startProcess(t, childEnv(), "dev", "--port", "0", "--no-ui", "--in-memory", "--otlp-endpoint", j.otlpHTTP)
	addr := map[string]string{}
	for addr["data"] == "" {
		key, value, _ := strings.Cut(dev.waitLine(t, dev.stdout, " "), " ")
		addr[key] = value
	}

	exporter, err := otlptracegrpc.New(t.Context(), otlptracegrpc.WithEndpointURL(j.otlpGRPC))
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter, sdktrace.WithBatchTimeout(100*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "agent"))))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: addr["frontend"],
		Interceptors: []interceptor.ClientInterceptor{tgclient.TracingInterceptor(tp)}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(t.Context(), processTimeout)
	defer cancel()

	t.Run("call", func(t *testing.T) {
		ctx, root := tp.Tracer("test").Start(ctx, "agent turn")
		call, err := toolcore.NewToolCall("jaeger-1", "add", []byte(`{"left":1,"right":2}`))
		require.NoError(t, err)
		res, err := tgclient.New(c, tgclient.Options{TracerProvider: tp}).Execute(ctx, call)
		require.NoError(t, err)
		require.False(t, res.IsError())
		root.End()
		require.NoError(t, tp.ForceFlush(ctx))
		tr, i := j.spanWithParents(t, root.SpanContext().TraceID().String(), "execute_tool add", 7)
		assert.Equal(t, []string{"toolgate-dev execute_tool add", "toolgate-dev RunActivity:ExecuteTool",
			"toolgate-dev StartActivity:ExecuteTool", "toolgate-dev RunWorkflow:ToolCallWorkflow",
			"agent StartWorkflow:ToolCallWorkflow", "agent call add", "agent agent turn"}, tr.path(i))
		assert.Equal(t, "execute_tool", tr.tag(i, "gen_ai.operation.name"))
		assert.Equal(t, "jaeger-1", tr.tag(i, "gen_ai.tool.call.id"))
		assert.Equal(t, "function", tr.tag(i, "gen_ai.tool.type"))
		assert.Equal(t, "ok", tr.tag(i, "toolgate.outcome"))
	})

	t.Run("mcp call", func(t *testing.T) {
		cmd := exec.Command(toolgateBinary(t), "mcp", "--address", addr["frontend"], "--otlp-endpoint", j.otlpHTTP)
		cmd.Env = childEnv()
		cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "1"}, nil).
			Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, nil)
		require.NoError(t, err)
		ctx, root := tp.Tracer("test").Start(ctx, "mcp client")
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, carrier)
		meta := sdkmcp.Meta{}
		for k, v := range carrier {
			meta[k] = v
		}
		res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}, Meta: meta})
		require.NoError(t, err)
		require.False(t, res.IsError)
		root.End()
		require.NoError(t, tp.ForceFlush(ctx))
		require.NoError(t, cs.Close()) // toolgate mcp flushes its spans as it stops
		tr, i := j.spanWithParents(t, root.SpanContext().TraceID().String(), "execute_tool echo", 7)
		assert.Equal(t, []string{"toolgate-dev execute_tool echo", "toolgate-dev RunActivity:ExecuteTool",
			"toolgate-dev StartActivity:ExecuteTool", "toolgate-dev RunWorkflow:ToolCallWorkflow",
			"toolgate-mcp StartWorkflow:ToolCallWorkflow", "toolgate-mcp tools/call echo", "agent mcp client"}, tr.path(i))
		s := tr.named("tools/call echo")[0]
		assert.Equal(t, "tools/call", tr.tag(s, "mcp.method.name"))
		assert.NotEmpty(t, tr.tag(s, "mcp.protocol.version"))
	})

	t.Run("agent round", func(t *testing.T) {
		tools, err := toolbox.Tools(toolbox.Config{})
		require.NoError(t, err)
		reg, err := toolcore.NewRegistry(tools...)
		require.NoError(t, err)
		queue := "jaeger-round"
		w, err := worker.New(c, "default", reg, worker.Options{TaskQueue: queue, TracerProvider: tp})
		require.NoError(t, err)
		w.RegisterWorkflowWithOptions(jaegerRound, workflow.RegisterOptions{Name: "jaegerRound"})
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
		var raw []json.RawMessage
		for _, id := range []string{"r1", "r2"} {
			call, err := toolcore.NewToolCall(id, "add", []byte(`{"left":1,"right":1}`))
			require.NoError(t, err)
			b, err := call.MarshalJSON()
			require.NoError(t, err)
			raw = append(raw, b)
		}
		ctx, root := tp.Tracer("test").Start(ctx, "agent")
		run, err := c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "jaeger-agent", TaskQueue: queue}, "jaegerRound", queue, raw)
		require.NoError(t, err)
		var n int
		require.NoError(t, run.Get(ctx, &n))
		require.Equal(t, 2, n)
		root.End()
		require.NoError(t, tp.ForceFlush(ctx))
		want := []string{"agent execute_tool add", "agent RunActivity:ExecuteTool", "agent StartActivity:ExecuteTool",
			"agent RunWorkflow:ToolCallWorkflow", "agent StartChildWorkflow:ToolCallWorkflow", "agent invoke_agent jaegerRound",
			"agent StartWorkflow:jaegerRound", "agent agent"}
		var tr jaegerTrace
		complete := func() bool { // both calls, each with its whole path (spans arrive in batches)
			tools := tr.named("execute_tool add")
			for _, i := range tools {
				if len(tr.path(i)) != len(want) {
					return false
				}
			}
			return len(tools) == 2
		}
		require.Eventually(t, func() bool {
			tr = j.trace(t, root.SpanContext().TraceID().String(), "execute_tool add")
			return complete()
		}, time.Minute, 200*time.Millisecond, "the round's trace: %+v", tr)
		for _, i := range tr.named("execute_tool add") {
			assert.Equal(t, want, tr.path(i))
		}
		a := tr.named("invoke_agent jaegerRound")[0]
		assert.Equal(t, "invoke_agent", tr.tag(a, "gen_ai.operation.name"))
	})
	assert.Equal(t, ExitOK, dev.interrupt(t), dev.stderrText())
}
