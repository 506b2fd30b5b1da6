package mcp

import (
	"context"
	"reflect"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolgate/toolgate/internal/safetext"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the MCP server's spans.
const TracerName = "github.com/toolgate/toolgate/mcp"

// The trace context keys of a request's params._meta (W3C Trace Context, as MCP's semantic
// conventions carry it) and the attributes of the server's spans.
const (
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"

	attrMCPMethod          = "mcp.method.name"
	attrMCPSessionID       = "mcp.session.id"
	attrMCPProtocolVersion = "mcp.protocol.version"
	attrGenAIToolName      = "gen_ai.tool.name"
	attrGenAIOperationName = "gen_ai.operation.name"
	attrErrorType          = "error.type"
)

// maxTracedNameBytes bounds what a request names on its span (the tool of a tools/call, the
// protocol version of its _meta): the span is made before the tool is looked up.
const maxTracedNameBytes = 256

// maxTraceMetaBytes bounds a traceparent or tracestate value read from a request (the W3C
// bounds are 55 and 512 bytes); a longer one is ignored.
const maxTraceMetaBytes = 1024

// traceContext is the one propagator of _meta: W3C traceparent and tracestate.
var traceContext propagation.TraceContext

// metaCarrier reads and writes the trace context keys of a _meta map.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	v, _ := m[key].(string)
	if len(v) > maxTraceMetaBytes {
		return ""
	}
	return v
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string { return []string{MetaTraceparent, MetaTracestate} }

// traceRequests is the server's outermost receiving middleware: each request (not
// notifications) gets a SERVER span "{mcp.method.name} {target}" (the tool of a tools/call),
// a child of the trace context in its params._meta, so the call it starts (client.Execute, then
// the worker through the Temporal headers) continues the caller's trace. The JSON-RPC request ID
// (jsonrpc.request.id) is not on the span: go-sdk v1.8.0 does not expose it to middleware.
func traceRequests(tp trace.TracerProvider) sdk.Middleware {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	tracer := tp.Tracer(TracerName)
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			params := req.GetParams()
			if strings.HasPrefix(method, "notifications/") || isNilParams(params) {
				return next(ctx, method, req)
			}
			if meta := params.GetMeta(); meta != nil {
				ctx = traceContext.Extract(ctx, metaCarrier(meta))
			}
			name, attrs := method, []attribute.KeyValue{attribute.String(attrMCPMethod, method)}
			if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil {
				tool := cutTraced(call.Params.Name)
				name += " " + tool
				attrs = append(attrs, attribute.String(attrGenAIToolName, tool),
					attribute.String(attrGenAIOperationName, "execute_tool"))
			}
			if ss, ok := req.GetSession().(*sdk.ServerSession); ok && ss != nil {
				if id := ss.ID(); id != "" {
					attrs = append(attrs, attribute.String(attrMCPSessionID, id))
				}
				if v := requestProtocolVersion(ss, params.GetMeta()); v != "" {
					attrs = append(attrs, attribute.String(attrMCPProtocolVersion, cutTraced(v)))
				}
			}
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
			defer span.End()
			res, err := next(ctx, method, req)
			switch {
			case err != nil:
				span.SetAttributes(attribute.String(attrErrorType, "jsonrpc_error"))
				span.SetStatus(codes.Error, "JSON-RPC error")
			case isToolError(res):
				span.SetAttributes(attribute.String(attrErrorType, "tool_error"))
				span.SetStatus(codes.Error, "tool error")
			}
			return res, err
		}
	}
}

// requestProtocolVersion is the revision a request speaks: its _meta's (stateless revisions),
// else the one its session initialized with.
func requestProtocolVersion(ss *sdk.ServerSession, meta map[string]any) string {
	if v, _ := meta[sdk.MetaKeyProtocolVersion].(string); v != "" {
		return v
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// cutTraced cuts s to maxTracedNameBytes on a rune boundary.
func cutTraced(s string) string { return safetext.Cut(s, maxTracedNameBytes) }

// isNilParams reports whether p is nil or a nil pointer (its GetMeta would panic).
func isNilParams(p sdk.Params) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func isToolError(res sdk.Result) bool {
	r, ok := res.(*sdk.CallToolResult)
	return ok && r != nil && r.IsError
}

// injectTrace is a mount's sending middleware: every request to the remote server carries the
// sending attempt's trace context (its execute_tool span) in params._meta, so the remote
// server's spans join the call's trace. It writes a fresh _meta map (the caller's is kept).
func injectTrace(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		params := req.GetParams()
		if !isNilParams(params) && trace.SpanContextFromContext(ctx).IsValid() {
			meta := map[string]any{}
			for k, v := range params.GetMeta() {
				meta[k] = v
			}
			traceContext.Inject(ctx, metaCarrier(meta))
			params.SetMeta(meta)
		}
		return next(ctx, method, req)
	}
}
