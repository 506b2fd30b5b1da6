package workflows

import (
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
