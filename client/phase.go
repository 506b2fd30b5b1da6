package client

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
)

// Phase is where a call is, read with one DescribeWorkflowExecution and no history: for a
// frontend deciding how long to hold a request (package mcp's inline window). Status says more.
type Phase struct {
	// Closed: the call's workflow has closed (its result is there to read).
	Closed bool
	// Attempt is the tool's attempt running now, 0 while none runs; RunningSince is when the
	// server started it (the server's clock).
	Attempt      int
	RunningSince time.Time
	// Waiting is what a running call waits for, as Status.Waiting (a WaitWorker's TaskQueue may
	// be empty); nil while its tool runs or a worker handles its workflow task.
	Waiting *Wait
}

// PhaseByWorkflowID is the Phase of the call of workflowID; wire.ErrNotFound when there is none.
func (c *Client) PhaseByWorkflowID(ctx context.Context, workflowID string) (Phase, error) {
	desc, err := c.describe(ctx, workflowID)
	if err != nil {
		return Phase{}, err
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return Phase{Closed: true}, nil
	}
	p := Phase{Waiting: c.waitingFor(desc, attemptFacts{})}
	if act, ok := toolActivity(desc); ok && act.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
		p.Attempt = int(act.GetAttempt())
		if t := act.GetLastStartedTime(); t != nil {
			p.RunningSince = t.AsTime()
		}
	}
	return p, nil
}
