package wire

import "errors"

// Sentinel errors of a call's outcome, shared by package client (for calls started by a client)
// and package workflows (for calls started as child workflows), so that errors.Is matches either
// side. Each is returned wrapped with the workflow ID.
var (
	// ErrCallConflict: the call ID is already used by a call with a different name or arguments.
	ErrCallConflict = errors.New("tool call ID already used by a different call")
	// ErrCallCanceled: the call was canceled by someone other than the caller.
	ErrCallCanceled = errors.New("tool call canceled")
	// ErrCallTerminated: an operator terminated the workflow; the tool's outcome is unknown.
	ErrCallTerminated = errors.New("tool call terminated")
	// ErrCallTimedOut: the workflow hit its execution timeout.
	ErrCallTimedOut = errors.New("tool call timed out")
	// ErrNotFound: no execution has that workflow ID (never started, or past retention).
	ErrNotFound = errors.New("tool call not found")
)
