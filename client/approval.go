package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/wire"
)

// PendingApproval is a call the visibility store lists as waiting for a decision.
type PendingApproval struct {
	WorkflowID string
	RunID      string
	ToolCallID string
	ToolName   string
	StartTime  time.Time
}

// pendingApprovalsQuery lists running calls whose ToolOutcome says they wait for a decision.
var pendingApprovalsQuery = fmt.Sprintf("%s = %q AND ExecutionStatus = 'Running'", wire.SearchAttributeToolOutcome, wire.OutcomeAwaitingApproval)

// PendingApprovals lists the calls waiting for an approval decision, newest first, through the
// visibility store (the ToolOutcome search attribute is awaiting_approval). Visibility lags
// history by a moment: a call that has just started waiting may be missing, one just decided may
// still be listed (deciding it then fails with ErrNotAwaitingApproval).
func (c *Client) PendingApprovals(ctx context.Context) ([]PendingApproval, error) {
	var out []PendingApproval
	var token []byte
	for {
		resp, err := c.sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace:     c.opts.Namespace,
			Query:         pendingApprovalsQuery,
			NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list calls awaiting approval: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			p := PendingApproval{
				WorkflowID: e.GetExecution().GetWorkflowId(),
				RunID:      e.GetExecution().GetRunId(),
				StartTime:  e.GetStartTime().AsTime(),
			}
			fields := e.GetSearchAttributes().GetIndexedFields()
			p.ToolName = c.keyword(fields[wire.SearchAttributeToolName])
			p.ToolCallID = c.keyword(fields[wire.SearchAttributeToolCallID])
			out = append(out, p)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// keyword decodes a Keyword search attribute payload; "" when absent or not a string.
func (c *Client) keyword(p *commonpb.Payload) string {
	if p == nil {
		return ""
	}
	var s string
	if err := c.opts.DataConverter.FromPayload(p, &s); err != nil {
		return ""
	}
	return s
}

// Approval returns what the reviewer of the call with callID decides: the call, its hash and
// whether it still waits. ErrNotAwaitingApproval when its tool needs no approval or it has ended.
func (c *Client) Approval(ctx context.Context, callID string) (wire.ApprovalState, error) {
	return c.ApprovalByWorkflowID(ctx, c.WorkflowID(callID))
}

// ApprovalByWorkflowID is Approval for a workflow ID. It queries the workflow, so a worker must
// be running.
func (c *Client) ApprovalByWorkflowID(ctx context.Context, workflowID string) (wire.ApprovalState, error) {
	v, err := c.sdk.QueryWorkflow(ctx, workflowID, "", wire.QueryApproval)
	if err != nil {
		var queryFailed *serviceerror.QueryFailed
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			return wire.ApprovalState{}, fmt.Errorf("query %s: %w", workflowID, wire.ErrNotFound)
		case errors.As(err, &queryFailed) && strings.Contains(queryFailed.Error(), "unknown queryType"):
			return wire.ApprovalState{}, fmt.Errorf("query %s: %w", workflowID, ErrNotAwaitingApproval)
		}
		return wire.ApprovalState{}, fmt.Errorf("query %s: %w", workflowID, err)
	}
	var st wire.ApprovalState
	if err := v.Get(&st); err != nil {
		return wire.ApprovalState{}, fmt.Errorf("decode approval state of %s: %w", workflowID, err)
	}
	return st, nil
}

// Decide sends a reviewer's decision to the call with callID and waits until the call has
// recorded it: approve true runs the tool, false ends the call TOOL_APPROVAL_REJECTED with
// d.Reason. d.CallHash must be the waiting call's hash (from Approval): a decision for another
// call, another definition, or a call already decided is ErrDecisionRefused.
func (c *Client) Decide(ctx context.Context, callID string, approve bool, d wire.ApprovalDecision) (wire.ApprovalRecord, error) {
	return c.DecideByWorkflowID(ctx, c.WorkflowID(callID), approve, d)
}

// DecideByWorkflowID is Decide for a workflow ID.
func (c *Client) DecideByWorkflowID(ctx context.Context, workflowID string, approve bool, d wire.ApprovalDecision) (wire.ApprovalRecord, error) {
	name := wire.UpdateReject
	if approve {
		name = wire.UpdateApprove
	}
	handle, err := c.sdk.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   name,
		Args:         []any{d},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var rec wire.ApprovalRecord
	if err == nil {
		err = handle.Get(ctx, &rec)
	}
	if err != nil {
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			// An update to a closed workflow is NotFound too: the call exists but no longer waits.
			if _, derr := c.describe(ctx, workflowID); derr == nil {
				return wire.ApprovalRecord{}, fmt.Errorf("%s %s: %w", name, workflowID, ErrNotAwaitingApproval)
			}
		}
		return wire.ApprovalRecord{}, c.decisionError(workflowID, name, err)
	}
	return rec, nil
}

// decisionError maps what UpdateWorkflow returned to the client's errors.
func (c *Client) decisionError(workflowID, update string, err error) error {
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &notFound) && strings.Contains(err.Error(), "completed"):
		return fmt.Errorf("%s %s: %w", update, workflowID, ErrNotAwaitingApproval)
	case errors.As(err, &notFound):
		return fmt.Errorf("%s %s: %w", update, workflowID, wire.ErrNotFound)
	case errors.As(err, &appErr) && strings.Contains(appErr.Message(), "unknown update"):
		return fmt.Errorf("%s %s: %w", update, workflowID, ErrNotAwaitingApproval)
	case errors.As(err, &appErr) && strings.Contains(appErr.Message(), "not waiting for approval"):
		return fmt.Errorf("%s %s: %w", update, workflowID, ErrNotAwaitingApproval)
	case errors.As(err, &appErr):
		return fmt.Errorf("%s %s: %w: %s", update, workflowID, ErrDecisionRefused, appErr.Message())
	}
	return fmt.Errorf("%s %s: %w", update, workflowID, err)
}
