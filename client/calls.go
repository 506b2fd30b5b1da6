package client

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/wire"
)

// CallSummary is a call as the visibility store lists it.
type CallSummary struct {
	WorkflowID string
	RunID      string
	State      State
	// Started is when the call's workflow started; Closed when it closed (zero while running).
	Started, Closed time.Time
	// Outcome is the ToolOutcome search attribute (wire.OutcomeOK, a result error code, ...), or
	// wire.OutcomeOK for a completed call that has ToolName but no ToolOutcome (an ok call closes
	// without the upsert); empty while running or when the namespace lacks the attributes.
	Outcome string
}

// ListCalls returns one page of the calls on this client's task queue (ToolCallWorkflow
// executions; with Options.Principal set, only those whose ToolPrincipal is it), newest first: at most pageSize of them, and the token of the next page (nil after
// the last). Pass nil for the first page. Visibility lags history by a moment: a call that has
// just started may be missing from a page.
func (c *Client) ListCalls(ctx context.Context, pageSize int, token []byte) ([]CallSummary, []byte, error) {
	query := fmt.Sprintf("WorkflowType = %q AND TaskQueue = %q", wire.ToolCallWorkflowName, c.opts.TaskQueue)
	if c.opts.Principal != "" {
		query += fmt.Sprintf(" AND %s = %q", wire.SearchAttributeToolPrincipal, c.opts.Principal)
	}
	resp, err := c.sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace:     c.opts.Namespace,
		PageSize:      int32(pageSize),
		NextPageToken: token,
		Query:         query,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list calls: %w", err)
	}
	calls := make([]CallSummary, 0, len(resp.GetExecutions()))
	for _, e := range resp.GetExecutions() {
		s := CallSummary{
			WorkflowID: e.GetExecution().GetWorkflowId(),
			RunID:      e.GetExecution().GetRunId(),
			State:      stateOf(e.GetStatus()),
			Started:    e.GetStartTime().AsTime(),
			Outcome:    c.keyword(e.GetSearchAttributes().GetIndexedFields()[wire.SearchAttributeToolOutcome]),
		}
		if _, searchable := e.GetSearchAttributes().GetIndexedFields()[wire.SearchAttributeToolName]; searchable &&
			s.Outcome == "" && s.State == Completed {
			s.Outcome = wire.OutcomeOK // closed ok at bare cost, ToolOutcome unset (wire.QueryOKCalls)
		}
		if e.GetCloseTime() != nil {
			s.Closed = e.GetCloseTime().AsTime()
		}
		calls = append(calls, s)
	}
	next := resp.GetNextPageToken()
	if len(next) == 0 {
		next = nil
	}
	return calls, next, nil
}
