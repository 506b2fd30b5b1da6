package client

import (
	"context"
	"time"
)

// CallSummary is a call as the visibility store lists it.
type CallSummary struct {
	WorkflowID string
	RunID      string
	State      State
	// Started is when the call's workflow started; Closed when it closed (zero while running).
	Started, Closed time.Time
	// Outcome is the ToolOutcome search attribute (wire.OutcomeOK, a result error code, a wait,
	// ...), or wire.OutcomeOK for a completed call that has ToolName but no ToolOutcome (an ok
	// call closes without the upsert); empty while running without a wait or when the namespace
	// lacks the attributes.
	Outcome string
	// ToolName and ToolCallID are the call's ToolName and ToolCallId search attributes (empty
	// until its close when its start did not set them, or when the namespace lacks them).
	ToolName, ToolCallID string
	// Principal is the subject whom the call runs for (ToolSubject), when set.
	Principal string
	// TaskQueue is the task queue of the call's workflow.
	TaskQueue string
	// AgentRun is the workflow ID of the agent run that started the call as a child, if any.
	AgentRun string
}

// ListCalls returns one page of the calls on this client's task queue (ToolCallWorkflow
// executions; with Options.Principal set, only those whose ToolPrincipal is it), newest first: at
// most pageSize of them, and the token of the next page (nil after the last). Pass nil for the
// first page. Visibility lags history by a moment: a call that has just started may be missing
// from a page. FindCalls selects by more.
func (c *Client) ListCalls(ctx context.Context, pageSize int, token []byte) ([]CallSummary, []byte, error) {
	return c.FindCalls(ctx, CallFilter{TaskQueue: c.opts.TaskQueue, Owner: c.opts.Principal}, pageSize, token)
}
