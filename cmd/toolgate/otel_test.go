package main

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// otlpReceiver is an in-process OTLP/gRPC trace receiver (the collector's protocol).
type otlpReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
	names map[string]string // resource service.name of each span, by span name
}

func (r *otlpReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, s)
				r.names[s.GetName()] = service
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// startOTLPReceiver serves an otlpReceiver on a loopback port and returns it and its URL.
func startOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	r := &otlpReceiver{names: map[string]string{}}
	collectortrace.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r, "http://" + ln.Addr().String()
}

// TestTraceExportFlushesAtShutdown: --otlp-endpoint with $OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports
// to the receiver, and shutdown flushes a span the batcher still held, under the command's
// service.name unless $OTEL_SERVICE_NAME says otherwise.
func TestTraceExportFlushesAtShutdown(t *testing.T) {
	r, url := startOTLPReceiver(t)
	tests := []struct {
		name    string
		env     map[string]string
		service string
	}{
		{name: "default service name", env: map[string]string{envOTLPProtocol: "grpc"}, service: "toolgate-worker"},
		{name: "OTEL_SERVICE_NAME", env: map[string]string{envOTLPProtocol: "grpc", "OTEL_SERVICE_NAME": "tools-eu"}, service: "tools-eu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v) // resource.WithFromEnv reads the process environment
			}
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			tr, err := traceOptions{endpoint: url}.start(t.Context(), lookup, "toolgate-worker", zap.NewNop())
			require.NoError(t, err)
			require.NotNil(t, tr.tracerProvider())
			_, span := tr.tracerProvider().Tracer("test").Start(t.Context(), "span of "+tt.name)
			span.End()
			tr.shutdown()
			r.mu.Lock()
			defer r.mu.Unlock()
			assert.Equal(t, tt.service, r.names["span of "+tt.name])
		})
	}
}

// TestTraceExportOffOrRefused: without an endpoint nothing is exported (a nil provider: the
// library's global no-op); an endpoint that is not an http(s) URL, or an unknown protocol, is
// refused as bad input.
func TestTraceExportOffOrRefused(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	tr, err := traceOptions{}.start(t.Context(), none, "toolgate-dev", zap.NewNop())
	require.NoError(t, err)
	assert.Nil(t, tr.tracerProvider())
	tr.shutdown()

	for _, tt := range []struct {
		name     string
		endpoint string
		env      map[string]string
	}{
		{name: "no scheme", endpoint: "127.0.0.1:4317"},
		{name: "other scheme", endpoint: "ftp://127.0.0.1:4317"},
		{name: "from the environment", env: map[string]string{envOTLPEndpoint: "localhost"}},
		{name: "unknown protocol", endpoint: "http://127.0.0.1:4318", env: map[string]string{envOTLPProtocol: "http/json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			_, err := traceOptions{endpoint: tt.endpoint}.start(t.Context(), lookup, "toolgate-dev", zap.NewNop())
			var exit *exitError
			require.ErrorAs(t, err, &exit)
			assert.Equal(t, ExitUsage, exit.code)
		})
	}
}
