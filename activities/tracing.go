package activities

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/wire"
)

// The OpenTelemetry names the attempts report (GenAI semantic conventions, Development status;
// docs/traces.md).
const (
	// SpanExecuteTool prefixes the span of one ExecuteTool attempt: "execute_tool <tool name>".
	SpanExecuteTool = "execute_tool"
	// AttrOperationName is gen_ai.operation.name; an attempt's is "execute_tool".
	AttrOperationName = "gen_ai.operation.name"
	// AttrToolName, AttrToolCallID, AttrToolDescription and AttrToolType name the tool and the
	// call; the type is always "function".
	AttrToolName        = "gen_ai.tool.name"
	AttrToolCallID      = "gen_ai.tool.call.id"
	AttrToolDescription = "gen_ai.tool.description"
	AttrToolType        = "gen_ai.tool.type"
	// AttrToolArguments and AttrToolResult are the opt-in content (Tracing.Content): the
	// validated arguments with secret-looking members redacted, and the result content, each
	// cut to MaxTracedContentBytes.
	AttrToolArguments = "gen_ai.tool.call.arguments"
	AttrToolResult    = "gen_ai.tool.call.result"
	// AttrErrorType is error.type on a failed attempt: the result's error code
	// (TOOL_EXECUTION_FAILED, ...) or the attempt's error type (wire.ErrType*, "canceled").
	AttrErrorType = "error.type"
	// AttrOutcome is toolgate.outcome: "ok", "error" (an error result), or the error type of an
	// attempt that ended without a result.
	AttrOutcome = "toolgate.outcome"
	// AttrAttempt is toolgate.attempt, the call's attempt number (1 for the first).
	AttrAttempt = "toolgate.attempt"
	// AttrPrincipal is toolgate.principal.subject, the subject of the principal the call runs
	// for (toolcore.CallPrincipal), when it has one.
	AttrPrincipal = "toolgate.principal.subject"
	// AttrIdempotencyKey is toolgate.idempotency_key on reconcile and compensation spans.
	AttrIdempotencyKey = "toolgate.idempotency_key"

	// MetricExecuteToolDuration is gen_ai.execute_tool.duration in Prometheus form: the time of
	// one ExecuteTool attempt, in seconds, as a histogram, through the worker client's
	// MetricsHandler like the other metrics of this package. Labels: gen_ai_tool_name, and
	// error_type (empty for an ok result).
	MetricExecuteToolDuration = "gen_ai_execute_tool_duration_seconds"
	// MetricLabelGenAIToolName and MetricLabelErrorType are its labels.
	MetricLabelGenAIToolName = "gen_ai_tool_name"
	MetricLabelErrorType     = "error_type"

	// MaxTracedContentBytes bounds each of the opt-in arguments and result on a span.
	MaxTracedContentBytes = 4096
)

// toolTypeFunction is gen_ai.tool.type of every toolgate tool.
const toolTypeFunction = "function"

// Tracing says how ExecuteTool, ReconcileTool and CompensateTool report to OpenTelemetry
// (TracingInterceptor).
type Tracing struct {
	// Tracer makes the spans. Required.
	Tracer trace.Tracer
	// Content adds the call's arguments and result to each execute_tool span
	// (gen_ai.tool.call.arguments and gen_ai.tool.call.result), secret-looking object members
	// redacted and each cut to MaxTracedContentBytes. They are a model's input and a tool's
	// output: personal data may reach the trace backend. Optional: default false (neither).
	Content bool
}

// TracingInterceptor returns the worker interceptor that traces the attempts of a's activities:
// one INTERNAL span "execute_tool <tool>" per ExecuteTool attempt (GenAI semantic conventions)
// with the tool, the call, the attempt, the principal's subject and the outcome, and the
// gen_ai_execute_tool_duration_seconds histogram; the attributes of the tool and the call on
// the span of each ReconcileTool and CompensateTool (the SDK interceptor's RunActivity span).
// Put it after sdk-go's tracing interceptor, so its spans are children of RunActivity.
// Activities never replay: each attempt is reported once.
func (a *Activities) TracingInterceptor(t Tracing) interceptor.WorkerInterceptor {
	return &toolTracing{acts: a, opts: t}
}

type toolTracing struct {
	interceptor.WorkerInterceptorBase
	acts *Activities
	opts Tracing
}

func (t *toolTracing) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &toolTracingInbound{root: t}
	i.Next = next
	return i
}

type toolTracingInbound struct {
	interceptor.ActivityInboundInterceptorBase
	root *toolTracing
}

func (i *toolTracingInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if len(in.Args) != 1 {
		return i.Next.ExecuteActivity(ctx, in)
	}
	switch arg := in.Args[0].(type) {
	case ExecuteToolInput:
		return i.executeTool(ctx, in, arg)
	case ReconcileToolInput:
		trace.SpanFromContext(ctx).SetAttributes(callAttributes(arg.ToolName, arg.ToolCallID)...)
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(AttrIdempotencyKey, arg.IdempotencyKey))
	case wire.CompensateToolInput:
		trace.SpanFromContext(ctx).SetAttributes(callAttributes(arg.Effect.ToolName, arg.Effect.ToolCallID)...)
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(AttrIdempotencyKey, arg.Key))
	}
	return i.Next.ExecuteActivity(ctx, in)
}

func callAttributes(tool, callID string) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String(AttrToolName, tool), attribute.String(AttrToolCallID, callID)}
}

// executeTool runs one ExecuteTool attempt inside its span; the tool's ctx carries the span, so
// what the tool calls out (http_get's requests) continues the trace.
func (i *toolTracingInbound) executeTool(ctx context.Context, in *interceptor.ExecuteActivityInput, call ExecuteToolInput) (any, error) {
	info := activity.GetInfo(ctx)
	attrs := append(callAttributes(call.ToolName, call.ToolCallID),
		attribute.String(AttrOperationName, SpanExecuteTool),
		attribute.String(AttrToolType, toolTypeFunction),
		attribute.Int(AttrAttempt, call.Resume.spent()+int(info.Attempt)))
	if tool, ok := i.root.acts.Registry.Get(call.ToolName); ok {
		attrs = append(attrs, attribute.String(AttrToolDescription, tool.Description()))
	}
	if call.Principal != nil && call.Principal.Subject != "" {
		attrs = append(attrs, attribute.String(AttrPrincipal, call.Principal.Subject))
	}
	if i.root.opts.Content {
		attrs = append(attrs, attribute.String(AttrToolArguments, tracedArguments(call.Accepted)))
	}
	ctx, span := i.root.opts.Tracer.Start(ctx, SpanExecuteTool+" "+call.ToolName,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	began := time.Now()
	res, err := i.Next.ExecuteActivity(ctx, in)

	var out ExecuteToolOutput
	switch v := res.(type) {
	case ExecuteToolOutput:
		out = v
	case *ExecuteToolOutput:
		out = *v
	}
	outcome, errType := attemptOutcome(out, err)
	activity.GetMetricsHandler(ctx).WithTags(map[string]string{
		MetricLabelGenAIToolName: call.ToolName, MetricLabelErrorType: errType,
	}).Timer(MetricExecuteToolDuration).Record(time.Since(began))
	span.SetAttributes(attribute.String(AttrOutcome, outcome))
	if err == nil && i.root.opts.Content {
		span.SetAttributes(attribute.String(AttrToolResult, cutTraced(out.Content)))
	}
	if errType != "" {
		span.SetAttributes(attribute.String(AttrErrorType, errType))
		span.SetStatus(codes.Error, errType)
	}
	span.End()
	return res, err
}

// attemptOutcome names how an attempt ended: the outcome attribute and error.type ("" for ok).
func attemptOutcome(out ExecuteToolOutput, err error) (outcome, errType string) {
	if err == nil {
		if !out.IsError {
			return wire.OutcomeOK, ""
		}
		return "error", resultErrorCode(out.Content)
	}
	var canceled *temporal.CanceledError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &canceled):
		return wire.OutcomeCanceled, wire.OutcomeCanceled
	case errors.As(err, &app) && app.Type() != "":
		return app.Type(), app.Type()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", "timeout"
	default:
		return "error", "_OTHER"
	}
}

// resultErrorCode reads the code of an error result's content ({"error":{"code":...}}).
func resultErrorCode(content string) string {
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(content), &body) != nil || body.Error.Code == "" {
		return "_OTHER"
	}
	return body.Error.Code
}

// secretLooking are the substrings of an argument member name whose value tracedArguments
// replaces with "[REDACTED]" (case-insensitive).
var secretLooking = []string{"password", "passwd", "secret", "token", "authorization", "api_key", "apikey", "credential", "cookie", "private"}

// tracedArguments is the validated arguments as a span attribute: members with a secret-looking
// name redacted at every depth, cut to MaxTracedContentBytes.
func tracedArguments(accepted json.RawMessage) string {
	var v any
	if json.Unmarshal(accepted, &v) != nil {
		return cutTraced(string(accepted))
	}
	b, err := json.Marshal(redactMembers(v, 0))
	if err != nil {
		return ""
	}
	return cutTraced(string(b))
}

// maxRedactDepth bounds the walk; deeper values are replaced whole.
const maxRedactDepth = 32

func redactMembers(v any, depth int) any {
	if depth > maxRedactDepth {
		return "[TOO DEEP]"
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if secretName(k) {
				x[k] = "[REDACTED]"
				continue
			}
			x[k] = redactMembers(val, depth+1)
		}
	case []any:
		for i, val := range x {
			x[i] = redactMembers(val, depth+1)
		}
	}
	return v
}

func secretName(name string) bool {
	lower := strings.ToLower(name)
	for _, s := range secretLooking {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// cutTraced cuts s to MaxTracedContentBytes on a rune boundary, saying how much was cut.
func cutTraced(s string) string {
	if len(s) <= MaxTracedContentBytes {
		return s
	}
	kept := safetext.Cut(s, MaxTracedContentBytes)
	return kept + "...[" + strconv.Itoa(len(s)-len(kept)) + " bytes cut]"
}
