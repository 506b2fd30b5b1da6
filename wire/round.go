package wire

// Names of tool calls started from workflow code (workflows.ExecuteToolCall and
// workflows.ExecuteRound).
const (
	// AwaitToolCallName is the activity a parent workflow runs when the ToolCallWorkflow it wanted
	// to start as a child already exists (started by a client or an earlier parent): it checks
	// that the existing run holds the same call and waits for its outcome. Its input is
	// {"workflowId":"...","call":"<tool-call JSON>"}, its result the tool-result message.
	AwaitToolCallName = "AwaitToolCall"
	// ErrTypeCallConflict is the non-retryable ApplicationError type AwaitToolCall fails with
	// when the existing run holds a different call (same ID, other name or arguments).
	ErrTypeCallConflict = "ToolCallConflict"
	// ErrTypeCallCanceled, ErrTypeCallTerminated and ErrTypeCallTimedOut are the non-retryable
	// ApplicationError types AwaitToolCall fails with when the existing run ended that way.
	ErrTypeCallCanceled   = "ToolCallCanceled"
	ErrTypeCallTerminated = "ToolCallTerminated"
	ErrTypeCallTimedOut   = "ToolCallTimedOut"
	// ErrTypeCallNotFound: the existing run is gone (past retention) by the time it is read.
	ErrTypeCallNotFound = "ToolCallNotFound"
)

// AwaitToolCallInput is the input of the AwaitToolCall activity.
type AwaitToolCallInput struct {
	// WorkflowID of the existing call.
	WorkflowID string `json:"workflowId"`
	// Call is the canonical tool-call JSON the parent wanted to start.
	Call string `json:"call"`
}
