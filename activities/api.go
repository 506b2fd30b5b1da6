package activities

import (
	"encoding/json"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// ExecuteToolInput is the activity's single argument. It carries the validated value only (not
// the raw arguments again), so a call's arguments appear in history at most twice: in the workflow
// input and, as validated, here.
type ExecuteToolInput struct {
	// ToolCallID links the result to its call.
	ToolCallID string `json:"toolCallId"`
	// ToolName selects the tool in the activity worker's registry.
	ToolName string `json:"toolName"`
	// Accepted is the value the validator accepted, as JSON (toolcore.Tool.Validate's output).
	Accepted json.RawMessage `json:"accepted"`
	// IdempotencyKey is stable across attempts of the call (the workflow ID).
	IdempotencyKey string `json:"idempotencyKey"`
	// MaxAttempts is the attempt count the workflow's retry policy allows, so the activity knows
	// its last attempt (a transient error there is the final result). Optional: default the
	// retry policy in the activity info; without either, every attempt is the last.
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// DefinitionHash is the toolcore.Tool.DefinitionHash of the tool the workflow validated with,
	// recorded so an operator sees in history which definition ran (and toolgate drift can
	// compare it with a build). Optional: absent in histories recorded before it existed.
	DefinitionHash string `json:"definitionHash,omitempty"`
	// Resume is set when the workflow schedules the call again after a drained attempt
	// (wire.ErrTypeDrained): the attempts already spent, so attempt numbers and the last attempt
	// continue, and the drained attempt's checkpoint and progress sequence. Optional: nil on
	// the call's first ExecuteTool.
	Resume *DrainedAttempt `json:"resume,omitempty"`
	// Input is set when the workflow schedules the tool again after it asked for input
	// (wire.ErrTypeInputRequired): every answer so far and the asking attempt's checkpoint.
	// Optional: nil until the tool first asks.
	Input *InputResumption `json:"input,omitempty"`
	// Principal is whom the call runs for (toolcore.CallPrincipal in the tool). Optional: nil
	// for a call without one, and in histories recorded before principals.
	Principal *toolcore.Principal `json:"principal,omitempty"`
	// Run names the agent run the call belongs to (toolcore.CallRun in the tool): the agent
	// workflow's ID for its inline and child calls, the scope of a scoped call, else the call's
	// own workflow ID. Optional: absent in histories recorded before it existed (then the
	// activity's workflow ID).
	Run string `json:"run,omitempty"`
}

// InputResumption is what an ExecuteTool after a round of questions carries: the answers of all
// rounds so far, by key (toolcore.Ask returns them), and the checkpoint of the attempt that asked
// last (toolcore.LastCheckpoint returns it when no later attempt recorded one).
type InputResumption struct {
	Responses  map[string]json.RawMessage `json:"responses"`
	Checkpoint json.RawMessage            `json:"checkpoint,omitempty"`
}

// ExecuteToolOutput is the activity's result: the bounded content of the tool-result message
// (at most toolcore.MaxContentCodePoints code points) and whether it is an error result. The
// workflow links it to the call with toolcore.LinkContent.
type ExecuteToolOutput struct {
	Content string `json:"content"`
	IsError bool   `json:"isError"`
	// Progress is the progress window of the attempt that returned the result when its tool
	// returned, or nil (no report, or a local activity). Heartbeat details vanish with the
	// attempt and are throttled, so the reports a tool makes just before returning reach a
	// caller only here, in history: wire.FinalProgress.
	Progress *wire.ProgressWindow `json:"progress,omitempty"`
	// Logs is the log window of the attempt that returned the result when its tool returned, or
	// nil (no message, or a local activity): wire.FinalProgress.
	Logs *wire.LogWindow `json:"logs,omitempty"`
	// Parts are the claims of a Rich output's parts, stored in the worker's part store (the
	// bytes never enter history); the workflow records them in the result with
	// toolcore.LinkResult. Optional: absent for a result without parts, and in histories
	// recorded before parts.
	Parts []toolcore.PartClaim `json:"parts,omitempty"`
}
