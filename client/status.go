package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/internal/principalmemo"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// State is the state of a call's workflow. The zero value is invalid.
type State uint8

const (
	_ State = iota
	Running
	Completed
	Failed
	Canceled
	Terminated
	TimedOut
)

// String returns the lowercase name: "running", "completed", "failed", "canceled",
// "terminated", "timedOut"; "unknown" for an invalid State.
func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Completed:
		return "completed"
	case Failed:
		return "failed"
	case Canceled:
		return "canceled"
	case Terminated:
		return "terminated"
	case TimedOut:
		return "timedOut"
	default:
		return "unknown"
	}
}

// MarshalText encodes the String form (for JSON output).
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Status describes a call's latest run.
type Status struct {
	WorkflowID string
	RunID      string
	// ToolCallID and ToolName come from the recorded call; empty if its input is not a call.
	ToolCallID string
	ToolName   string
	State      State
	// Attempt is the attempt number of the running tool (from 1); 0 when no tool is running.
	Attempt int
	// RetryAt is when the tool's next attempt is scheduled while it waits between attempts (the
	// retry policy's backoff, or the delay a toolcore.RetryAfter asked for); zero otherwise.
	// LastFailure is the message of the attempt that failed before it.
	RetryAt     time.Time
	LastFailure string
	// Progress is the latest progress the running tool reported, or nil.
	Progress *toolcore.Progress
	// Checkpoint is the latest checkpoint (toolcore.Checkpoint) the running tool's heartbeats
	// carry, the tool's own JSON, or nil.
	Checkpoint json.RawMessage
	// Logs are the latest log messages (toolcore.Log) the running tool's heartbeats carry, oldest
	// first (at most wire.MaxLogWindowMessages), or nil.
	Logs []toolcore.LogMessage
	// Result is the linked result of a Completed call, or nil.
	Result *toolcore.Result
	// Err is the outcome error of a Failed, Canceled, Terminated or TimedOut call, as Execute
	// would return it, or nil.
	Err error
	// Started is when the call's workflow started; Closed when it closed (zero while running).
	Started, Closed time.Time
	// Priority is the priority and fairness key the call was started with (WithPriority); zero
	// when unset.
	Priority wire.Priority
	// Principal is whom the call runs for (its start's memo wire.MemoPrincipal, see
	// WithPrincipal), nil when it has none or the memo does not decode with the client's data
	// converter.
	Principal *toolcore.Principal
	// Consent is the running call's wait for its principal's consent (see Client.Consent) while
	// its ToolOutcome search attribute says it waits (wire.OutcomeAwaitingConsent), else nil: the
	// request with its authorization URL, read with one query bounded by ConsentQueryTimeout.
	// When no worker answers the query, Consent says Waiting with a zero Request. Always nil on a
	// namespace without toolgate's search attributes (query with Client.Consent there).
	Consent *wire.ConsentState
	// Input is the running call's wait for answers to its tool's questions (see Client.Input)
	// while its ToolOutcome search attribute says it waits (wire.OutcomeAwaitingInput), else
	// nil: the round, the questions still unanswered (a toolcore.Callback's params hold only
	// when its URL expires), since and until when, read with one query bounded by
	// InputQueryTimeout. When no worker answers the query, Input says Waiting with no
	// questions. Always nil on a namespace without toolgate's search attributes (query with
	// Client.Input there).
	Input *wire.InputState
}

// Status describes the call with callID.
func (c *Client) Status(ctx context.Context, callID string) (Status, error) {
	return c.StatusByWorkflowID(ctx, c.WorkflowID(callID))
}

// StatusByWorkflowID is Status for a workflow ID.
func (c *Client) StatusByWorkflowID(ctx context.Context, workflowID string) (Status, error) {
	desc, err := c.describe(ctx, workflowID)
	if err != nil {
		return Status{}, err
	}
	info := desc.GetWorkflowExecutionInfo()
	st := Status{
		WorkflowID: workflowID,
		RunID:      info.GetExecution().GetRunId(),
		State:      stateOf(info.GetStatus()),
		Started:    info.GetStartTime().AsTime(),
		Priority: wire.Priority{Level: int(info.GetPriority().GetPriorityKey()),
			FairnessKey: info.GetPriority().GetFairnessKey(), FairnessWeight: info.GetPriority().GetFairnessWeight()},
	}
	if info.GetCloseTime() != nil {
		st.Closed = info.GetCloseTime().AsTime()
	}
	st.Principal, _ = principalmemo.Read(info.GetMemo(), c.opts.DataConverter) // unreadable: shown as none
	rec, err := c.recordedCall(ctx, workflowID, st.RunID)
	if err != nil {
		return Status{}, err
	}
	if rec.err == nil {
		st.ToolCallID, st.ToolName = rec.call.ID(), rec.call.Name()
	}
	if st.State == Running {
		st.Consent = waitOf(ctx, c, workflowID, desc, consentWaits)
		st.Input = waitOf(ctx, c, workflowID, desc, inputWaits)
		if act, ok := toolActivity(desc); ok {
			st.Attempt = int(act.GetAttempt())
			if act.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED && act.GetNextAttemptScheduleTime() != nil {
				st.RetryAt = act.GetNextAttemptScheduleTime().AsTime()
				st.LastFailure = act.GetLastFailure().GetMessage()
			}
			if p, ok, err := c.decodeProgress(act.GetHeartbeatDetails()); err == nil && ok {
				st.Progress = &p
			}
			if cp, err := c.decodeCheckpoint(act.GetHeartbeatDetails()); err == nil {
				st.Checkpoint = cp
			}
			if w, err := c.decodeLogWindow(act.GetHeartbeatDetails()); err == nil && w != nil {
				st.Logs = logMessages(*w)
			}
		}
		return st, nil
	}
	result, err := c.wait(ctx, c.sdk.GetWorkflow(ctx, workflowID, st.RunID))
	switch {
	case err == nil:
		st.Result = &result
	case ctx.Err() != nil:
		return Status{}, err
	default:
		st.Err = err
	}
	return st, nil
}

// Progress returns the latest progress the call's running tool reported; ok is false when the
// call is not running a tool or its tool has reported none.
func (c *Client) Progress(ctx context.Context, callID string) (p toolcore.Progress, ok bool, err error) {
	return c.ProgressByWorkflowID(ctx, c.WorkflowID(callID))
}

// ProgressByWorkflowID is Progress for a workflow ID.
func (c *Client) ProgressByWorkflowID(ctx context.Context, workflowID string) (toolcore.Progress, bool, error) {
	desc, err := c.describe(ctx, workflowID)
	if err != nil {
		return toolcore.Progress{}, false, err
	}
	act, ok := toolActivity(desc)
	if !ok {
		return toolcore.Progress{}, false, nil
	}
	p, ok, err := c.decodeProgress(act.GetHeartbeatDetails())
	if err != nil {
		return toolcore.Progress{}, false, fmt.Errorf("decode progress of %s: %w", workflowID, err)
	}
	return p, ok, nil
}

// Cancel requests cancellation of the call with callID and returns without waiting: the workflow
// cancels the running tool, waits for it to stop and closes as canceled. ErrCallClosed if it had
// already closed, wire.ErrNotFound if there is no such call. Requesting twice is harmless.
func (c *Client) Cancel(ctx context.Context, callID string) error {
	return c.CancelByWorkflowID(ctx, c.WorkflowID(callID))
}

// CancelByWorkflowID is Cancel for a workflow ID.
func (c *Client) CancelByWorkflowID(ctx context.Context, workflowID string) error {
	// The server accepts a cancel request for a closed workflow as a no-op, so look first.
	desc, err := c.describe(ctx, workflowID)
	if err != nil {
		return err
	}
	if stateOf(desc.GetWorkflowExecutionInfo().GetStatus()) != Running {
		return fmt.Errorf("cancel %s: %w", workflowID, ErrCallClosed)
	}
	runID := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	if err := c.sdk.CancelWorkflow(ctx, workflowID, runID); err != nil {
		if isNotFound(err) {
			return fmt.Errorf("cancel %s: %w", workflowID, wire.ErrNotFound)
		}
		return fmt.Errorf("cancel %s: %w", workflowID, err)
	}
	return nil
}

// describe is DescribeWorkflowExecution of the latest run, NotFound mapped to wire.ErrNotFound.
func (c *Client) describe(ctx context.Context, workflowID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	desc, err := c.sdk.DescribeWorkflowExecution(ctx, workflowID, "")
	if isNotFound(err) {
		return nil, fmt.Errorf("describe %s: %w", workflowID, wire.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", workflowID, err)
	}
	return desc, nil
}

// toolActivity returns the pending ExecuteTool activity, if any.
func toolActivity(desc *workflowservice.DescribeWorkflowExecutionResponse) (pendingActivity, bool) {
	for _, act := range desc.GetPendingActivities() {
		if act.GetActivityType().GetName() == executeToolName {
			return act, true
		}
	}
	return nil, false
}

// stateOf maps a workflow execution status to a State.
func stateOf(s enumspb.WorkflowExecutionStatus) State {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return Running
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return Completed
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return Failed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return Canceled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return Terminated
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return TimedOut
	default:
		// CONTINUED_AS_NEW does not happen to a ToolCallWorkflow; describe returns the latest run.
		return 0
	}
}
