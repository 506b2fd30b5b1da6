package wire

import (
	"encoding/json"
	"time"
)

// ErrTypeInputRequired is the non-retryable ApplicationError type of an ExecuteTool attempt whose
// tool asked questions (toolcore.Ask) and returned toolcore.ErrInputRequired. Its one detail is an
// [InputRequired]. The workflow then waits for the answers (UpdateInput, or the tool's
// InputTimeout) and schedules the tool again with every answer so far and the asking attempt's
// checkpoint: the tool runs again from its start.
const ErrTypeInputRequired = "InputRequired"

// InputRequired is what an attempt asked: the questions by key, and the last checkpoint the
// attempt recorded (the next attempt's toolcore.LastCheckpoint), or none.
type InputRequired struct {
	Requests   map[string]InputRequest `json:"requests"`
	Checkpoint json.RawMessage         `json:"checkpoint,omitempty"`
}

// InputRequest is one question a running tool asks whoever called it, in MCP's shape: Method is
// "elicitation/create", "sampling/createMessage", "roots/list" or toolgate's own
// "toolgate/callback", and Params that request's params. toolcore.InputRequest is this type.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Names of a call's wait for input.
const (
	// UpdateInput answers the questions of the call's current round: its one argument is an
	// [InputAnswer], its result an [InputAccepted]. The validator refuses an answer for another
	// round, an unknown or already answered key, an answer too large, and a callback's answer
	// without its URL's token; refused answers leave no trace in history.
	UpdateInput = "toolgate.input"
	// QueryInput returns the call's [InputState].
	QueryInput = "toolgate.input"
	// OutcomeAwaitingInput is ToolOutcome while a call waits for answers to its tool's
	// questions.
	OutcomeAwaitingInput = "awaiting_input"
	// MaxInputRounds bounds how often one call asks: past it the call ends TOOL_EXECUTION_FAILED,
	// so a tool that asks forever cannot grow a history without end.
	MaxInputRounds = 16
)

// InputAnswer is the argument of UpdateInput: answers by key (each the JSON result of the MCP
// request asked: an ElicitResult, CreateMessageResult, ListRootsResult, or for a callback a
// toolcore.CallbackResult). Round is the round answered (InputState.Round): an answer for a
// round that has ended is refused, so a late answer never reaches a later question with the
// same key. CallbackToken is the token of the callback URL a callback's answer arrived at.
type InputAnswer struct {
	Round         int                        `json:"round"`
	Responses     map[string]json.RawMessage `json:"responses"`
	CallbackToken string                     `json:"callbackToken,omitempty"`
	// By names who answered (a principal's key, "callback", an operator), for the log.
	By string `json:"by,omitempty"`
}

// InputAccepted is the result of an accepted UpdateInput: the keys of the round still
// unanswered (the tool runs again once none is).
type InputAccepted struct {
	Round     int      `json:"round"`
	Remaining []string `json:"remaining,omitempty"`
}

// InputState is a call's wait for input: Waiting while it waits, its Round (from 1), the
// questions still unanswered (a callback's params hold only when it expires and its token's hash),
// since and until when.
type InputState struct {
	Waiting  bool                    `json:"waiting"`
	Round    int                     `json:"round"`
	Requests map[string]InputRequest `json:"requests,omitempty"`
	Since    time.Time               `json:"since"`
	Deadline time.Time               `json:"deadline"`
}
