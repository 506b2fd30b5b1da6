package faults

import (
	"encoding/json"
	"errors"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Terminal is the kind of a call's outcome as the agent sees it.
type Terminal string

// Terminal kinds. Exactly one per call is what the fault tests assert.
const (
	// TerminalResult: a linked tool-result message (success or error result).
	TerminalResult Terminal = "result"
	// TerminalFatal: a genuine NonRecoverableToolError (the workflow failed).
	TerminalFatal Terminal = "fatal"
	// TerminalCanceled: the call was canceled (no result).
	TerminalCanceled Terminal = "canceled"
	// TerminalError: anything else (an RPC failure, a termination, a contract error): never
	// expected in a fault test.
	TerminalError Terminal = "error"
)

// Classify returns the terminal kind of what client.Execute or client.Result returned.
func Classify(res toolcore.Result, err error) Terminal {
	if _, fatal := toolcore.AsNonRecoverable(err); fatal {
		return TerminalFatal
	}
	switch {
	case err == nil && !res.IsZero():
		return TerminalResult
	case errors.Is(err, wire.ErrCallCanceled):
		return TerminalCanceled
	default:
		return TerminalError
	}
}

// AgentLine is what the faultworker agent prints for one call: its terminal kind and the result
// message (wire JSON) or the error text.
type AgentLine struct {
	Call   string          `json:"call"`
	Kind   Terminal        `json:"kind"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// NewAgentLine describes the outcome of the call with id.
func NewAgentLine(id string, res toolcore.Result, err error) AgentLine {
	line := AgentLine{Call: id, Kind: Classify(res, err)}
	if err != nil {
		line.Error = err.Error()
	}
	if !res.IsZero() {
		if data, merr := res.MarshalJSON(); merr == nil {
			line.Result = data
		}
	}
	return line
}
