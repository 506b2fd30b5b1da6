package client

import (
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Sentinel errors. Each is returned wrapped with the workflow ID (and, for ErrCallConflict, what
// differs); test with errors.Is.
var (
	// ErrCallConflict: the call ID is already used by a call with a different name or arguments.
	ErrCallConflict = wire.ErrCallConflict
	// ErrCallCanceled: the call was canceled by someone other than this Execute's ctx.
	ErrCallCanceled = wire.ErrCallCanceled
	// ErrCallTerminated: an operator terminated the workflow; the tool's outcome is unknown.
	ErrCallTerminated = wire.ErrCallTerminated
	// ErrCallTimedOut: the workflow hit its execution timeout.
	ErrCallTimedOut = wire.ErrCallTimedOut
	// ErrCallClosed: Cancel found the call already closed.
	ErrCallClosed = errors.New("tool call already closed")
	// ErrNotFound: no execution has that workflow ID (never started, or past retention).
	ErrNotFound = wire.ErrNotFound
	// ErrNotAwaitingApproval: the call does not wait for an approval decision (its tool needs
	// none, or it was decided, expired or ended).
	ErrNotAwaitingApproval = errors.New("tool call is not awaiting approval")
	// ErrDecisionRefused: the call refused the decision (another call hash, no reviewer, already
	// decided); the message says why.
	ErrDecisionRefused = errors.New("approval decision refused")
)

// outcomeError maps the error of WorkflowRun.Get (a closed workflow that did not complete, or an
// RPC failure) to what the client returns.
func outcomeError(workflowID string, err error) error {
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return fmt.Errorf("get result of %s: %w", workflowID, ErrNotFound)
	}
	var appErr *temporal.ApplicationError
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &appErr) && appErr.Type() == wire.ErrTypeNonRecoverable:
		// The workflow fails with this type only for a genuine NonRecoverableToolError from the
		// activity (look-alikes are normalized there), so minting a genuine one here is sound.
		return toolcore.NewNonRecoverableToolError(appErr.Message())
	case errors.As(err, &appErr) && appErr.Type() == wire.ErrTypeInvalidToolCall:
		return &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: appErr.Message()}
	case errors.As(err, &canceled):
		return fmt.Errorf("%s: %w", workflowID, ErrCallCanceled)
	case errors.As(err, &terminated):
		return fmt.Errorf("%s: %w", workflowID, ErrCallTerminated)
	case errors.As(err, &timeout):
		return fmt.Errorf("%s: %w", workflowID, ErrCallTimedOut)
	default:
		// A failure the workflow does not produce (a panic under FailWorkflow, a foreign
		// workflow), or an RPC error.
		return fmt.Errorf("get result of %s: %w", workflowID, err)
	}
}

// conflictError says how the recorded call differs from the submitted one.
func conflictError(workflowID, detail string) error {
	return fmt.Errorf("%w: %s: %s", ErrCallConflict, workflowID, detail)
}
