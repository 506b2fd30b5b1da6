package client

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	otelcontrib "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// TracerName is the instrumentation scope of the client's spans.
const TracerName = "github.com/toolgate/toolgate/client"

// SpanCall prefixes the span of one Execute: "call <tool name>" (kind CLIENT), from the start
// (or attach) to the result, with gen_ai.tool.name, gen_ai.tool.call.id, toolgate.outcome and,
// for an error result or a failure, error.type. The worker's spans of the call are its
// descendants when the Temporal client carries TracingInterceptor.
const SpanCall = "call"

// Attribute names of the call span (the same as the worker's execute_tool spans).
const (
	attrToolName   = "gen_ai.tool.name"
	attrToolCallID = "gen_ai.tool.call.id"
	attrErrorType  = "error.type"
	attrOutcome    = "toolgate.outcome"
)

// TracingInterceptor returns sdk-go's OpenTelemetry tracing interceptor for the client side
// only, for client.Options.Interceptors when dialing the Temporal client: each workflow start,
// update, signal and query gets a span, a child of the span in its ctx, written into the Temporal
// headers, where a toolgate worker's spans continue the trace (worker.Options.TracerProvider).
// It is client-only on purpose: sdk-go hands a client's interceptors to the workers built on it,
// and the worker installs its own (replay-safe) tracing. tp nil is OpenTelemetry's global
// provider.
//
//	c, err := sdkclient.Dial(sdkclient.Options{
//		Interceptors: []interceptor.ClientInterceptor{client.TracingInterceptor(tp)},
//	})
func TracingInterceptor(tp trace.TracerProvider) interceptor.ClientInterceptor {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	in, err := otelcontrib.NewTracingInterceptor(otelcontrib.TracerOptions{Tracer: tp.Tracer("temporal-sdk-go")})
	if err != nil {
		// NewTracingInterceptor fails on no option set here.
		panic("toolgate client: sdk-go tracing interceptor: " + err.Error())
	}
	return clientOnly{in}
}

// clientOnly hides the worker side of an interceptor.
type clientOnly struct{ interceptor.ClientInterceptor }

// tracer returns the tracer of Options.TracerProvider (the global provider when nil).
func (c *Client) tracer() trace.Tracer {
	tp := c.opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(TracerName)
}

// startCallSpan starts the span of an Execute of call; end records how it ended.
func (c *Client) startCallSpan(ctx context.Context, call toolcore.ToolCall) (context.Context, func(toolcore.Result, error)) {
	ctx, span := c.tracer().Start(ctx, SpanCall+" "+call.Name(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(attrToolName, call.Name()), attribute.String(attrToolCallID, call.ID())))
	return ctx, func(r toolcore.Result, err error) {
		outcome, errType := callOutcome(r, err)
		span.SetAttributes(attribute.String(attrOutcome, outcome))
		if errType != "" {
			span.SetAttributes(attribute.String(attrErrorType, errType))
			span.SetStatus(codes.Error, errType)
		}
		span.End()
	}
}

// callOutcome names an Execute's outcome and its error.type ("" for ok).
func callOutcome(r toolcore.Result, err error) (outcome, errType string) {
	var fatal *toolcore.NonRecoverableToolError
	switch {
	case err == nil && !r.IsError():
		return wire.OutcomeOK, ""
	case err == nil:
		return r.ErrorCode().String(), r.ErrorCode().String()
	case errors.As(err, &fatal):
		return wire.OutcomeFatal, wire.OutcomeFatal
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, wire.ErrCallCanceled):
		return wire.OutcomeCanceled, wire.OutcomeCanceled
	default:
		return "error", "_OTHER"
	}
}
