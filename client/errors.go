package client

import (
	"errors"
	"fmt"

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

// conflictError says how the recorded call differs from the submitted one.
func conflictError(workflowID, detail string) error {
	return fmt.Errorf("%w: %s: %s", ErrCallConflict, workflowID, detail)
}
