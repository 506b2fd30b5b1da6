package wire

// Names of the ExecuteTool activity, the contract between the workflow and the activity worker.
const (
	// ExecuteToolName is the activity type that runs one tool call's attempt.
	ExecuteToolName = "ExecuteTool"
	// ErrTypeTransient is the retryable ApplicationError type of an error the tool marked with
	// toolcore.Transient (ReadOnly and Idempotent tools only, never on the last attempt).
	ErrTypeTransient = "TransientToolError"
	// ErrTypeInterrupted is the retryable ApplicationError type of an attempt stopped by the
	// worker (shutdown) rather than by a cancellation request; the tool may have had effects.
	ErrTypeInterrupted = "ToolInterrupted"
	// ErrTypeToolNotRegistered is the non-retryable ApplicationError type of an activity worker
	// whose registry lacks the tool the workflow accepted (a deployment error; the tool did not run).
	ErrTypeToolNotRegistered = "ToolNotRegistered"
	// ErrTypeInvalidInput is the non-retryable ApplicationError type of a malformed
	// ExecuteTool input (the tool did not run).
	ErrTypeInvalidInput = "InvalidExecuteToolInput"
)
