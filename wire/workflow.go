package wire

// Names of ToolCallWorkflow, the one workflow every caller starts (in any SDK or the CLI).
const (
	// ToolCallWorkflowName is the workflow type of a tool call.
	ToolCallWorkflowName = "ToolCallWorkflow"
	// DefaultTaskQueue is the task queue workers poll and clients start on unless configured.
	DefaultTaskQueue = "toolgate"
	// ErrTypeInvalidToolCall is the non-retryable ApplicationError type of a workflow failed by
	// malformed input (the input was not a tool call; the message says why).
	ErrTypeInvalidToolCall = "INVALID_TOOL_CALL"
	// ErrTypeNonRecoverable is the non-retryable ApplicationError type of a genuine
	// toolcore.NonRecoverableToolError (message = its text). The activity returns it and the
	// workflow fails with the same type and message; the agent run must stop.
	ErrTypeNonRecoverable = "NonRecoverableToolError"
)
