package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

// The OpenTelemetry environment variables the trace export reads (the exporters read the rest
// of OTEL_EXPORTER_OTLP_*: headers, TLS, timeouts, compression).
const (
	envOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envOTLPProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envOTLPTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
)

// traceFlushTimeout bounds the flush of the spans still buffered when the command ends.
const traceFlushTimeout = 5 * time.Second

// traceOptions are the trace export flags of the commands that run a worker or serve MCP.
type traceOptions struct {
	// endpoint is --otlp-endpoint, "" for the environment's.
	endpoint string
	// content is --trace-content: arguments and results on the execute_tool spans.
	content bool
}

// addTraceFlags adds --otlp-endpoint and, for a command that runs a worker (worker), --trace-content.
func addTraceFlags(cmd *cobra.Command, o *traceOptions, worker bool) {
	fs := cmd.Flags()
	fs.StringVar(&o.endpoint, "otlp-endpoint", "",
		"export OpenTelemetry traces over OTLP to this URL (http://host:4318 for http/protobuf, or grpc with $"+envOTLPProtocol+"=grpc, e.g. http://host:4317); default $"+envOTLPTracesEndpoint+" or $"+envOTLPEndpoint+", none: no export (docs/traces.md)")
	if !worker {
		return
	}
	fs.BoolVar(&o.content, "trace-content", false,
		"add each call's arguments and result (secret-looking members redacted, 4 KiB each) to its execute_tool span")
}

// tracing is a started trace export: its provider (nil when nothing is exported) and the
// shutdown that flushes it.
type tracing struct {
	provider *sdktrace.TracerProvider
	logger   *zap.Logger
}

// tracerProvider is the provider commands hand to the worker, client and MCP server: nil when
// nothing is exported (they fall back to OpenTelemetry's global no-op provider).
func (t *tracing) tracerProvider() trace.TracerProvider {
	if t == nil || t.provider == nil {
		return nil
	}
	return t.provider
}

// shutdown flushes the spans still buffered (at most traceFlushTimeout) and stops the export.
func (t *tracing) shutdown() {
	if t == nil || t.provider == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	if err := t.provider.Shutdown(ctx); err != nil {
		t.logger.Warn("cannot flush the last spans to the OTLP endpoint", zap.Error(err))
	}
}

// start builds the OTLP export when --otlp-endpoint or the environment names an endpoint;
// service names the process in the traces (service.name, unless $OTEL_SERVICE_NAME says).
func (o traceOptions) start(ctx context.Context, lookupEnv func(string) (string, bool), service string, logger *zap.Logger) (*tracing, error) {
	endpoint := o.endpoint
	fromEnv := false
	if endpoint == "" {
		for _, name := range []string{envOTLPTracesEndpoint, envOTLPEndpoint} {
			if v, ok := lookupEnv(name); ok && v != "" {
				endpoint, fromEnv = v, true
				break
			}
		}
	}
	if endpoint == "" {
		return &tracing{logger: logger}, nil
	}
	protocol := "http/protobuf" // the OpenTelemetry specification's default
	for _, name := range []string{envOTLPTracesProtocol, envOTLPProtocol} {
		if v, ok := lookupEnv(name); ok && v != "" {
			protocol = v
			break
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, badInput(fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL with a host", endpoint))
	}
	var exporter sdktrace.SpanExporter
	switch protocol {
	case "grpc":
		var opts []otlptracegrpc.Option
		if !fromEnv {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		exporter, err = otlptracegrpc.New(ctx, opts...)
	case "http/protobuf":
		var opts []otlptracehttp.Option
		if !fromEnv {
			if u.Path == "" || u.Path == "/" {
				u.Path = "/v1/traces"
			}
			opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
		}
		exporter, err = otlptracehttp.New(ctx, opts...)
	default:
		return nil, badInput(fmt.Errorf("$%s %q: want grpc or http/protobuf", envOTLPProtocol, protocol))
	}
	if err != nil {
		return nil, fmt.Errorf("start the OTLP trace export: %w", err)
	}
	// service.name first, so $OTEL_SERVICE_NAME and $OTEL_RESOURCE_ATTRIBUTES override it.
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("describe the process for the traces: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	logger.Info("exporting traces over OTLP", zap.String("endpoint", redactedEndpoint(u)), zap.String("protocol", protocol))
	return &tracing{provider: tp, logger: logger}, nil
}

// redactedEndpoint is the endpoint as logged: scheme, host and path, without user info or query.
func redactedEndpoint(u *url.URL) string {
	return strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/")
}
