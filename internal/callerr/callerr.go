// Package callerr maps how a ToolCallWorkflow ended, as the SDK reports it, to the errors toolgate
// returns. It is the one mapping behind client.Execute and workflows.ExecuteToolCall, so a call
// fails the same way whether a program or an agent workflow made it.
package callerr

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Map maps err, what a ToolCallWorkflow's run ended with (WorkflowRun.Get, a child workflow's
// future, or the AwaitToolCall activity, which reports with wire.ErrTypeCall* types), to one of:
// a genuine *toolcore.NonRecoverableToolError, a *toolcore.ContractError, a wire sentinel
// (ErrCallConflict, ErrCallCanceled, ErrCallTerminated, ErrCallTimedOut, ErrNotFound) wrapped
// with the workflow ID, or err wrapped with it (an RPC failure, a panic under FailWorkflow, a
// foreign workflow). Deterministic: workflow code calls it.
func Map(workflowID string, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case wire.ErrTypeNonRecoverable:
			// Only a genuine NonRecoverableToolError fails a call with this type (look-alikes are
			// normalized by the activity), so minting a genuine one here is sound.
			return toolcore.NewNonRecoverableToolError(appErr.Message())
		case wire.ErrTypeInvalidToolCall:
			return &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: appErr.Message()}
		case wire.ErrTypeCallConflict:
			// The message is the client's conflict error text, which names the ID and the sentinel.
			return fmt.Errorf("%w: %s", wire.ErrCallConflict, strings.TrimPrefix(appErr.Message(), wire.ErrCallConflict.Error()+": "))
		case wire.ErrTypeCallCanceled:
			return sentinel(workflowID, wire.ErrCallCanceled)
		case wire.ErrTypeCallTerminated:
			return sentinel(workflowID, wire.ErrCallTerminated)
		case wire.ErrTypeCallTimedOut:
			return sentinel(workflowID, wire.ErrCallTimedOut)
		case wire.ErrTypeCallNotFound:
			return sentinel(workflowID, wire.ErrNotFound)
		}
	}
	var notFound *serviceerror.NotFound
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &notFound):
		return sentinel(workflowID, wire.ErrNotFound)
	case errors.As(err, &canceled):
		return sentinel(workflowID, wire.ErrCallCanceled)
	case errors.As(err, &terminated):
		return sentinel(workflowID, wire.ErrCallTerminated)
	case errors.As(err, &timeout):
		return sentinel(workflowID, wire.ErrCallTimedOut)
	}
	return fmt.Errorf("tool call %s: %w", workflowID, err)
}

func sentinel(workflowID string, s error) error { return fmt.Errorf("%s: %w", workflowID, s) }
