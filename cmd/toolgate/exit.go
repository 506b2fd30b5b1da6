package main

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Exit codes, documented in the root --help. Scripts and agents branch on them.
const (
	ExitOK          = 0 // success; for call and result: the result has isError false
	ExitErrorResult = 1 // an error result (isError true); replay: a history failed; drift: a call drifted
	ExitUsage       = 2 // bad input: flags, arguments, a malformed call, an unknown or conflicting ID
	ExitFatal       = 3 // the tool failed with a NonRecoverableToolError
	ExitCanceled    = 4 // the call was canceled
	ExitFailure     = 5 // anything else: connection, server, timeout, termination
)

// exitError ends a command with an explicit code. A nil err means the command already reported
// the outcome (a printed error result, replay's FAIL lines) and nothing more is logged.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// badInput marks err as the caller's mistake (exit 2).
func badInput(err error) error { return &exitError{code: ExitUsage, err: err} }

// callError attaches a call's identity to err so the final log line carries it.
type callError struct {
	ids callIDs
	err error
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// callIDs identify one tool call in every log line about it.
type callIDs struct {
	WorkflowID string
	ToolCallID string
	ToolName   string
}

// fields are the zap fields every line about a call carries (empty values included, so a reader
// can rely on the keys).
func (ids callIDs) fields() []zap.Field {
	return []zap.Field{
		zap.String("toolCallId", ids.ToolCallID),
		zap.String("toolName", ids.ToolName),
		zap.String("workflowId", ids.WorkflowID),
	}
}

// aboutCall wraps a non-nil err with ids.
func aboutCall(ids callIDs, err error) error {
	if err == nil {
		return nil
	}
	return &callError{ids: ids, err: err}
}

// classify maps a command's error to its exit code and the message of the one log line that
// reports it ("" when the command reported it already).
func classify(err error) (code int, msg string) {
	var exit *exitError
	if errors.As(err, &exit) {
		if exit.err == nil {
			return exit.code, ""
		}
		return exit.code, messageFor(exit.code)
	}
	if _, ok := toolcore.AsNonRecoverable(err); ok {
		return ExitFatal, messageFor(ExitFatal)
	}
	if errors.Is(err, wire.ErrCallCanceled) || errors.Is(err, context.Canceled) {
		return ExitCanceled, messageFor(ExitCanceled)
	}
	var contract *toolcore.ContractError
	if errors.As(err, &contract) || errors.Is(err, wire.ErrNotFound) ||
		errors.Is(err, wire.ErrCallConflict) {
		return ExitUsage, messageFor(ExitUsage)
	}
	return ExitFailure, messageFor(ExitFailure)
}

func messageFor(code int) string {
	switch code {
	case ExitErrorResult:
		return "error result"
	case ExitUsage:
		return "bad input"
	case ExitFatal:
		return "fatal tool error: stop the agent run"
	case ExitCanceled:
		return "call canceled"
	default:
		return "command failed"
	}
}

// errorFields are the fields of the final log line: the call, if known, and with withError the
// error as a field of its own (for JSON logs; console lines carry its text in the message, where
// quotes stay unescaped).
func errorFields(err error, withError bool) []zap.Field {
	var fields []zap.Field
	if withError {
		fields = append(fields, zap.Error(err))
	}
	var ce *callError
	if errors.As(err, &ce) {
		fields = append(fields, ce.ids.fields()...)
	}
	return fields
}
