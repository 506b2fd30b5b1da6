package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Sentinel errors of a call's outcome returned by ExecuteToolCall: the same values as package
// client's errors of the same names (both are package wire's). Each is returned wrapped with the
// workflow ID; test with errors.Is.
var (
	// ErrCallConflict: the call ID is already used by a call with a different name or arguments.
	ErrCallConflict = wire.ErrCallConflict
	// ErrCallCanceled: the call was canceled by someone other than the caller.
	ErrCallCanceled = wire.ErrCallCanceled
	// ErrCallTerminated: an operator terminated the workflow; the tool's outcome is unknown.
	ErrCallTerminated = wire.ErrCallTerminated
	// ErrCallTimedOut: the workflow hit its execution timeout.
	ErrCallTimedOut = wire.ErrCallTimedOut
	// ErrNotFound: no execution has that workflow ID (never started, or past retention).
	ErrNotFound = wire.ErrNotFound
)

// callError maps the error a ToolCallWorkflow (a child) or AwaitToolCall ended with to what
// ExecuteToolCall returns: a genuine *toolcore.NonRecoverableToolError, a *toolcore.ContractError,
// a sentinel above wrapped with the workflow ID, or err itself.
func callError(workflowID string, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case ErrTypeNonRecoverable:
			// Only a genuine NonRecoverableToolError fails a call with this type (look-alikes are
			// normalized by the activity), so minting a genuine one here is sound.
			return toolcore.NewNonRecoverableToolError(appErr.Message())
		case ErrTypeInvalidToolCall:
			return &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: appErr.Message()}
		case ErrTypeCallConflict:
			// The message is the client's conflict error text, which names the ID and the sentinel.
			return fmt.Errorf("%w: %s", ErrCallConflict, strings.TrimPrefix(appErr.Message(), ErrCallConflict.Error()+": "))
		case ErrTypeCallCanceled:
			return fmt.Errorf("%s: %w", workflowID, ErrCallCanceled)
		case ErrTypeCallTerminated:
			return fmt.Errorf("%s: %w", workflowID, ErrCallTerminated)
		case ErrTypeCallTimedOut:
			return fmt.Errorf("%s: %w", workflowID, ErrCallTimedOut)
		case ErrTypeCallNotFound:
			return fmt.Errorf("%s: %w", workflowID, ErrNotFound)
		}
	}
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &canceled):
		return fmt.Errorf("%s: %w", workflowID, ErrCallCanceled)
	case errors.As(err, &terminated):
		return fmt.Errorf("%s: %w", workflowID, ErrCallTerminated)
	case errors.As(err, &timeout):
		return fmt.Errorf("%s: %w", workflowID, ErrCallTimedOut)
	}
	return fmt.Errorf("tool call %s: %w", workflowID, err)
}
