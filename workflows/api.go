package workflows

import (
	"go.temporal.io/sdk/converter"
)

// Names of the wire contract. Changing any of them breaks running callers and recorded histories.
const (
	// ToolCallWorkflowName is the workflow type every caller starts, in any SDK or the CLI.
	ToolCallWorkflowName = "ToolCallWorkflow"
	// DefaultTaskQueue is the task queue workers poll and clients start on unless configured.
	DefaultTaskQueue = "toolgate"
	// ErrTypeInvalidToolCall is the ApplicationError type of a workflow failed by malformed input.
	ErrTypeInvalidToolCall = "INVALID_TOOL_CALL"
	// ErrTypeNonRecoverable is the ApplicationError type of a workflow failed by a genuine
	// toolcore.NonRecoverableToolError (message = its text). It is the same string the activity
	// uses (activities.ErrTypeNonRecoverable).
	ErrTypeNonRecoverable = "NonRecoverableToolError"
)

// Input is the workflow's single argument: one payload holding the tool-call wire JSON
// {"type":"toolCall","id":"...","name":"...","arguments":{...}}. It is a converter.RawValue so
// that decoding the payload can never fail the workflow task: the workflow reads the bytes and
// snapshots them with toolcore.ParseToolCall itself. Go callers may pass a toolcore.ToolCall or
// a json.RawMessage of the call to ExecuteWorkflow instead; both encode to the same payload.
type Input = converter.RawValue

// The workflow's result is a toolcore.Result, which encodes to the tool-result message wire JSON
// {"id":"tool-result-...","role":"toolResult","toolCallId":"...","toolName":"...","content":"...","isError":false}.
