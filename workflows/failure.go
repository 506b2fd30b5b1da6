package workflows

import (
	"errors"
	"strconv"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// OutcomeUnknownMessage prefixes the TOOL_EXECUTION_FAILED message of an Unsafe call whose only
// attempt ended without a verdict from the tool (timeout, lost worker, worker stop).
const OutcomeUnknownMessage = "outcome unknown: the tool may or may not have run"

// FatalErrorMessage is the message of the error ExecuteToolCall, ExecuteRound and Inline return
// for a fatal tool error: a non-retryable *temporal.ApplicationError of type
// wire.ErrTypeNonRecoverable whose cause is the genuine *toolcore.NonRecoverableToolError
// (errors.As and toolcore.AsNonRecoverable find it). An agent workflow that returns it as it is
// ends failed, not retryable: the failure converter reads only the top-level error, and a plain
// Go error would be recorded retryable.
const FatalErrorMessage = "fatal tool error: the agent run stops"

// fatalError returns err in the shape workflow code may return as it is: when err holds a
// genuine NonRecoverableToolError (and is not that shape already), the non-retryable
// ApplicationError of FatalErrorMessage caused by err; else err unchanged.
func fatalError(err error) error {
	if _, ok := toolcore.AsNonRecoverable(err); !ok {
		return err
	}
	if appErr, ok := err.(*temporal.ApplicationError); ok && appErr.Type() == wire.ErrTypeNonRecoverable && appErr.NonRetryable() {
		return err
	}
	return temporal.NewApplicationErrorWithOptions(FatalErrorMessage, wire.ErrTypeNonRecoverable,
		temporal.ApplicationErrorOptions{NonRetryable: true, Cause: err})
}

// failureMessage is the model-visible message of a TOOL_EXECUTION_FAILED result for an activity
// that ended without returning a result. It depends only on the failure recorded in history and
// the tool's options, so it is the same on every replay.
//
// Failures that prove the tool did not run (ToolNotRegistered, InvalidExecuteToolInput) carry
// their own message. For an Unsafe tool anything else means the single attempt may have had its
// effect: the message says the outcome is unknown and that it was not retried. For a retried tool
// the message names the number of attempts and what ended the last one.
func failureMessage(opts toolcore.Options, err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case wire.ErrTypeToolNotRegistered, wire.ErrTypeInvalidInput:
			return appErr.Message()
		}
	}
	last := lastFailure(opts, err)
	if opts.SideEffect == toolcore.Unsafe {
		return OutcomeUnknownMessage + " (" + last + "); unsafe calls are not retried"
	}
	return "gave up after " + plural(max(opts.MaxAttempts, 1), "attempt") + "; last attempt: " + last
}

// lastFailure describes what ended the last attempt.
func lastFailure(opts toolcore.Options, err error) string {
	var timeoutErr *temporal.TimeoutError
	var appErr *temporal.ApplicationError
	var panicErr *temporal.PanicError
	var canceledErr *temporal.CanceledError
	switch {
	case errors.As(err, &timeoutErr):
		switch timeoutErr.TimeoutType() {
		case enumspb.TIMEOUT_TYPE_HEARTBEAT:
			return "no heartbeat within " + opts.HeartbeatTimeout.String() + ": worker lost or stalled"
		case enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
			return "timed out after " + opts.Timeout.String()
		default:
			return "timed out (" + timeoutErr.TimeoutType().String() + ")"
		}
	case errors.As(err, &appErr):
		switch appErr.Type() {
		case wire.ErrTypeInterrupted, wire.ErrTypeDrained:
			return "interrupted: " + appErr.Message()
		default:
			// Transient errors end here only when the activity could not tell its last attempt.
			return appErr.Message()
		}
	case errors.As(err, &panicErr):
		return "the activity panicked: " + panicErr.Error()
	case errors.As(err, &canceledErr):
		return "the attempt was canceled without a cancellation request"
	default:
		return toolcore.ErrorText(err)
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
