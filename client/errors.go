package client

import (
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/wire"
)

// Sentinel errors of package client; a call's outcome errors are package wire's
// ([wire.ErrCallConflict], [wire.ErrCallCanceled], [wire.ErrCallTerminated], [wire.ErrCallTimedOut],
// [wire.ErrNotFound]), returned wrapped with the workflow ID; test with errors.Is.
var (
	// ErrCallClosed: Cancel found the call already closed.
	ErrCallClosed = errors.New("tool call already closed")
	// ErrNotAwaitingApproval: the call does not wait for an approval decision (its tool needs
	// none, or it was decided, expired or ended).
	ErrNotAwaitingApproval = errors.New("tool call is not awaiting approval")
	// ErrDecisionRefused: the call refused the decision (another call hash, no reviewer, already
	// decided); the message says why.
	ErrDecisionRefused = errors.New("approval decision refused")
	// ErrNoBudget: the workflow answers no budget query (an agent run without
	// workflows.WithBudget, or a tool call's own workflow).
	ErrNoBudget = errors.New("workflow has no budget")
	// ErrNotAwaitingInput: the call does not wait for input (its tool never asked, the round
	// was answered or timed out, or the call ended).
	ErrNotAwaitingInput = errors.New("tool call is not awaiting input")
	// ErrInputRefused: the call refused an answer (another round, an unknown or answered key,
	// not a JSON object, too large, a callback's key); the message says why.
	ErrInputRefused = errors.New("answer refused")
	// ErrOtherQueue: a submission attached to a running call with the same ID that waits on
	// another task queue (Options.OtherQueue).
	ErrOtherQueue = errors.New("the call runs on another task queue")
)

// conflictError says how the recorded call differs from the submitted one.
func conflictError(workflowID, detail string) error {
	return fmt.Errorf("%w: %s: %s", wire.ErrCallConflict, workflowID, detail)
}
