package client

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/wire"
)

// ApprovalEvent is what Options.OnApproval receives when a call Execute waits on starts waiting
// for an approval decision: the call and what a reviewer decides on (hash, arguments, deadline).
type ApprovalEvent struct {
	WorkflowID string
	ToolCallID string
	ToolName   string
	State      wire.ApprovalState
}

// approvalQueryTimeout bounds one query of a call's approval state.
const approvalQueryTimeout = 3 * time.Second

// approvalWaits are the waits an approval watch reads: one per call hash and start of the wait.
var approvalWaits = waitKind[wire.ApprovalState]{
	outcome: wire.OutcomeAwaitingApproval,
	query: func(ctx context.Context, c *Client, workflowID string) (wire.ApprovalState, error) {
		qctx, cancel := context.WithTimeout(ctx, approvalQueryTimeout)
		defer cancel()
		return c.ApprovalByWorkflowID(qctx, workflowID)
	},
	waiting: func(s wire.ApprovalState) bool { return s.Waiting },
	same: func(a, b wire.ApprovalState) bool {
		return a.CallHash == b.CallHash && a.Since.Equal(b.Since) && a.Deadline.Equal(b.Deadline)
	},
	ended:   func(s wire.ApprovalState) wire.ApprovalState { s.Waiting = false; return s },
	unknown: func(waiting bool) wire.ApprovalState { return wire.ApprovalState{Waiting: waiting} },
}

// approvalWatch is Execute's watch for Options.OnApproval; stop must be called (nil: none).
type approvalWatch struct {
	w *waitWatch[wire.ApprovalState]
}

// Stop stops reading and waits for a delivery in flight.
func (a *approvalWatch) Stop() {
	if a != nil {
		a.w.stop()
	}
}

// watchApproval hands each wait of workflowID for an approval to Options.OnApproval, reading the
// call every ConsentInterval (the ToolOutcome search attribute, then the query while it says
// the call waits); without the hook it starts nothing.
func (c *Client) watchApproval(ctx context.Context, workflowID string, ev ApprovalEvent) *approvalWatch {
	if c.opts.OnApproval == nil {
		return nil
	}
	return &approvalWatch{startWaitWatch(ctx, c, workflowID, c.opts.ConsentInterval, approvalWaits, func(_ context.Context, st wire.ApprovalState) error {
		if st.Waiting {
			ev.State = st
			c.opts.OnApproval(ev)
		}
		return nil
	})}
}
