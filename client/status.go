package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/internal/principalmemo"
	"github.com/toolgate/toolgate/internal/safetext"
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
	// WorkflowType is the workflow's type: wire.ToolCallWorkflowName for a call; for another (an
	// agent run) Calls lists its tool calls and ToolCallID, ToolName and the tool's fields stay
	// empty.
	WorkflowType string
	// TaskQueue is the task queue of the workflow (its tool may run on another: Waiting names it).
	TaskQueue string
	// Attempt is the attempt number of the running tool (from 1); 0 when no tool is running.
	Attempt int
	// Attempts is how many attempts of the tool have started so far, across retries, drained
	// attempts resumed and questions answered, running or closed: the closed activities' in
	// history, and the pending one's. 0 when the tool never started.
	Attempts int
	// RetryAt is when the tool's next attempt is scheduled while it waits between attempts (the
	// retry policy's backoff, or the delay a toolcore.RetryAfter asked for); zero otherwise.
	RetryAt time.Time
	// LastFailure is the message of the tool's last failed attempt (the one before RetryAt while
	// it waits; a timeout, a drained attempt, a transient error), running or closed, or "".
	LastFailure string
	// Waiting is what the running call waits for, nil when its tool runs or it has closed.
	Waiting *Wait
	// Calls are an agent run's tool calls (a workflow that is not a ToolCallWorkflow), in the
	// order it started them, read from its history: the ToolCallWorkflows it started as children,
	// its inline calls (workflows.Inline: the ExecuteTool activities in its own history; a Local
	// tool's once its marker is recorded, named by the marker's summary; older histories'
	// markers name the tool only and are not listed), and the calls it attached to (started by
	// someone else, awaited with AwaitToolCall). Nil for a call.
	Calls []RunCall
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

// WaitKind names what a running call waits for.
type WaitKind string

// What a running call waits for (Status.Waiting).
const (
	// WaitApproval: a reviewer's decision (toolgate approve, Client.Approve).
	WaitApproval WaitKind = "approval"
	// WaitConsent: its principal's consent to a provider (Status.Consent).
	WaitConsent WaitKind = "consent"
	// WaitInput: answers to its tool's questions (Status.Input).
	WaitInput WaitKind = "input"
	// WaitRetry: the retry timer before the tool's next attempt (Status.RetryAt).
	WaitRetry WaitKind = "retry"
	// WaitWorker: a worker polling Wait.TaskQueue to pick up the tool's attempt or the call's
	// next workflow task (none has yet; a worker may be busy, or none polls that queue).
	WaitWorker WaitKind = "worker"
)

// Wait is what a running call waits for.
type Wait struct {
	Kind WaitKind `json:"kind"`
	// TaskQueue is the queue a WaitWorker wait needs a worker on.
	TaskQueue string `json:"taskQueue,omitempty"`
	// Since is when the wait began, when known; Until when a WaitRetry's timer fires.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// How an agent run made a call (RunCall.Kind).
const (
	// RunCallChild: a ToolCallWorkflow the run started as a child.
	RunCallChild = "child"
	// RunCallInline: an ExecuteTool activity in the run's own history (workflows.Inline).
	RunCallInline = "inline"
	// RunCallAttached: a call started by someone else that the run awaited (AwaitToolCall).
	RunCallAttached = "attached"
)

// RunCall is one tool call of an agent run, as its history records it.
type RunCall struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	// Kind is RunCallChild, RunCallInline or RunCallAttached.
	Kind string `json:"kind"`
	// WorkflowID is the call's own workflow (children and attached calls), else "".
	WorkflowID string `json:"workflowId,omitempty"`
	// Outcome is "running" until the run has its outcome, then wire.OutcomeOK, a result error
	// code, wire.OutcomeCanceled, wire.OutcomeFatal, OutcomeFailed, OutcomeTerminated or
	// OutcomeTimedOut; "error" for an inline error result, whose code the run's own result holds.
	Outcome string `json:"outcome"`
	// Message is the failure's message of a call that did not end with a result, else "".
	Message string `json:"message,omitempty"`
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
		WorkflowID:   workflowID,
		RunID:        info.GetExecution().GetRunId(),
		WorkflowType: info.GetType().GetName(),
		TaskQueue:    info.GetTaskQueue(),
		State:        stateOf(info.GetStatus()),
		Started:      info.GetStartTime().AsTime(),
		Priority: wire.Priority{Level: int(info.GetPriority().GetPriorityKey()),
			FairnessKey: info.GetPriority().GetFairnessKey(), FairnessWeight: info.GetPriority().GetFairnessWeight()},
	}
	if info.GetCloseTime() != nil {
		st.Closed = info.GetCloseTime().AsTime()
	}
	st.Principal, _ = principalmemo.Read(info.GetMemo(), c.opts.DataConverter) // unreadable: shown as none
	if st.WorkflowType != wire.ToolCallWorkflowName {
		return c.runStatus(ctx, st)
	}
	rec, facts, err := c.readCall(ctx, workflowID, st.RunID)
	if err != nil {
		return Status{}, err
	}
	if rec.err == nil {
		st.ToolCallID, st.ToolName = rec.call.ID(), rec.call.Name()
	}
	st.Attempts, st.LastFailure = facts.attempts, facts.lastFailure
	if st.State == Running {
		st.Consent = waitOf(ctx, c, workflowID, desc, consentWaits)
		st.Input = waitOf(ctx, c, workflowID, desc, inputWaits)
		st.Waiting = c.waitingFor(desc, facts)
		if act, ok := toolActivity(desc); ok {
			st.Attempt = int(act.GetAttempt())
			st.Attempts += pendingAttempts(act)
			if msg := act.GetLastFailure().GetMessage(); msg != "" {
				st.LastFailure = msg // newer than any closed attempt's
			}
			if act.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED && act.GetNextAttemptScheduleTime() != nil {
				st.RetryAt = act.GetNextAttemptScheduleTime().AsTime()
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

// attemptFacts is what a call's history says of its tool's attempts.
type attemptFacts struct {
	// attempts counts the started attempts of the closed ExecuteTool activities (and local
	// activity markers); lastFailure is the message of the last one that failed.
	attempts    int
	lastFailure string
	// queues maps each ExecuteTool activity's ID to the task queue it was scheduled on.
	queues map[string]string
}

// localActivityMarker is the part of the SDK's local activity marker data ("data" detail of a
// MarkerRecorded event named "LocalActivity") that counts attempts.
type localActivityMarker struct {
	ActivityType string
	Attempt      int32 // the last attempt, from 1
}

// executeToolMarker reads a local activity marker's data; ok is false unless it is ExecuteTool's.
func (c *Client) executeToolMarker(m *historypb.MarkerRecordedEventAttributes) (data localActivityMarker, ok bool) {
	p := m.GetDetails()["data"].GetPayloads()
	if len(p) != 1 || c.opts.DataConverter.FromPayload(p[0], &data) != nil {
		return data, false
	}
	return data, data.ActivityType == executeToolName
}

// readCall reads a call's history, once: the call its first event records, and its tool's
// attempts. An activity's started event is written when it closes, with its last attempt's
// number; the pending one is Describe's.
func (c *Client) readCall(ctx context.Context, workflowID, runID string) (recorded, attemptFacts, error) {
	facts := attemptFacts{queues: map[string]string{}}
	scheduled := map[int64]bool{} // event IDs of ExecuteTool's scheduled events
	it := c.sdk.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	first, err := firstEvent(it, workflowID)
	if err != nil {
		return recorded{}, attemptFacts{}, err
	}
	rec := c.recordedOf(first)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return recorded{}, attemptFacts{}, fmt.Errorf("read attempts of %s: %w", workflowID, err)
		}
		switch {
		case e.GetActivityTaskScheduledEventAttributes() != nil:
			a := e.GetActivityTaskScheduledEventAttributes()
			if a.GetActivityType().GetName() == executeToolName {
				scheduled[e.GetEventId()] = true
				facts.queues[a.GetActivityId()] = a.GetTaskQueue().GetName()
			}
		case e.GetActivityTaskStartedEventAttributes() != nil:
			if a := e.GetActivityTaskStartedEventAttributes(); scheduled[a.GetScheduledEventId()] {
				facts.attempts += int(a.GetAttempt())
				if f := a.GetLastFailure(); f != nil { // an earlier attempt's, retried
					facts.lastFailure = failureMessage(f)
				}
			}
		case e.GetActivityTaskFailedEventAttributes() != nil:
			if a := e.GetActivityTaskFailedEventAttributes(); scheduled[a.GetScheduledEventId()] {
				facts.lastFailure = failureMessage(a.GetFailure())
			}
		case e.GetActivityTaskTimedOutEventAttributes() != nil:
			if a := e.GetActivityTaskTimedOutEventAttributes(); scheduled[a.GetScheduledEventId()] {
				facts.lastFailure = failureMessage(a.GetFailure())
			}
		case e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity":
			m := e.GetMarkerRecordedEventAttributes()
			data, ok := c.executeToolMarker(m)
			if !ok {
				continue
			}
			facts.attempts += int(data.Attempt)
			if m.GetFailure() != nil {
				facts.lastFailure = failureMessage(m.GetFailure())
			}
		}
	}
	return rec, facts, nil
}

// failureMessage is a failure's message, or its first cause's with one (a timeout's message may
// be empty while its cause, the last heartbeat's failure, says more).
func failureMessage(f *failurepb.Failure) string {
	for ; f != nil; f = f.GetCause() {
		if f.GetMessage() != "" {
			return f.GetMessage()
		}
	}
	return ""
}

// pendingAttempts counts the started attempts of a pending activity: the running one included,
// or only those before the one scheduled.
func pendingAttempts(act pendingActivity) int {
	n := int(act.GetAttempt())
	if act.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
		n--
	}
	return max(n, 0)
}

// waitingFor is what a running call waits for: the wait its ToolOutcome names, else its pending
// tool attempt's retry timer or worker, else a worker for its scheduled workflow task.
func (c *Client) waitingFor(desc *workflowservice.DescribeWorkflowExecutionResponse, facts attemptFacts) *Wait {
	info := desc.GetWorkflowExecutionInfo()
	switch c.keyword(info.GetSearchAttributes().GetIndexedFields()[wire.SearchAttributeToolOutcome]) {
	case wire.OutcomeAwaitingApproval:
		return &Wait{Kind: WaitApproval}
	case wire.OutcomeAwaitingConsent:
		return &Wait{Kind: WaitConsent}
	case wire.OutcomeAwaitingInput:
		return &Wait{Kind: WaitInput}
	}
	if act, ok := toolActivity(desc); ok {
		if act.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
			return nil // the tool runs
		}
		if next := act.GetNextAttemptScheduleTime(); next != nil {
			return &Wait{Kind: WaitRetry, Until: next.AsTime()}
		}
		queue := act.GetActivityOptions().GetTaskQueue().GetName()
		if queue == "" {
			queue = facts.queues[act.GetActivityId()]
		}
		w := &Wait{Kind: WaitWorker, TaskQueue: queue}
		if t := act.GetScheduledTime(); t != nil {
			w.Since = t.AsTime()
		}
		return w
	}
	if wt := desc.GetPendingWorkflowTask(); wt != nil && wt.GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED {
		w := &Wait{Kind: WaitWorker, TaskQueue: info.GetTaskQueue()}
		if t := wt.GetOriginalScheduledTime(); t != nil {
			w.Since = t.AsTime()
		}
		return w
	}
	return nil
}

// runStatus completes the Status of an agent run (a workflow that is not a ToolCallWorkflow):
// its calls from its history and, closed other than completed, its error.
func (c *Client) runStatus(ctx context.Context, st Status) (Status, error) {
	calls, err := c.readRunCalls(ctx, st.WorkflowID, st.RunID)
	if err != nil {
		return Status{}, err
	}
	st.Calls = calls
	if st.State != Running && st.State != Completed {
		err := c.sdk.GetWorkflow(ctx, st.WorkflowID, st.RunID).Get(ctx, nil)
		if ctx.Err() != nil {
			return Status{}, context.Cause(ctx)
		}
		st.Err = err
	}
	return st, nil
}

// executeToolCallFields are the fields of ExecuteTool's input that name the call.
type executeToolCallFields struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
}

// executeToolOutcome is the field of ExecuteTool's output that says ok or error.
type executeToolOutcome struct {
	IsError bool `json:"isError"`
}

// readRunCalls reads an agent run's calls from its history (Status.Calls).
func (c *Client) readRunCalls(ctx context.Context, workflowID, runID string) ([]RunCall, error) {
	var calls []RunCall
	children := map[int64]int{}   // initiated event ID -> index in calls
	activities := map[int64]int{} // scheduled event ID -> index in calls
	inline := map[string]int{}    // call ID -> index: a drained attempt is scheduled again
	byWorkflow := map[string]int{}
	it := c.sdk.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("read calls of %s: %w", workflowID, err)
		}
		id := e.GetEventId()
		switch {
		case e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil:
			a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
			if a.GetWorkflowType().GetName() != wire.ToolCallWorkflowName {
				continue
			}
			rc := RunCall{Kind: RunCallChild, WorkflowID: a.GetWorkflowId(), Outcome: OutcomeRunning}
			if p := a.GetInput().GetPayloads(); len(p) == 1 {
				rc.ToolCallID, rc.ToolName = c.callNames(p[0])
			}
			children[id] = len(calls)
			byWorkflow[rc.WorkflowID] = len(calls)
			calls = append(calls, rc)
		case e.GetStartChildWorkflowExecutionFailedEventAttributes() != nil:
			if i, ok := children[e.GetStartChildWorkflowExecutionFailedEventAttributes().GetInitiatedEventId()]; ok {
				calls[i].Kind = RunCallAttached // it exists: the run awaits it (AwaitToolCall)
			}
		case e.GetChildWorkflowExecutionCompletedEventAttributes() != nil:
			a := e.GetChildWorkflowExecutionCompletedEventAttributes()
			if i, ok := children[a.GetInitiatedEventId()]; ok {
				calls[i].Outcome = c.resultOutcome(a.GetResult().GetPayloads())
			}
		case e.GetChildWorkflowExecutionFailedEventAttributes() != nil:
			a := e.GetChildWorkflowExecutionFailedEventAttributes()
			if i, ok := children[a.GetInitiatedEventId()]; ok {
				calls[i].Outcome, calls[i].Message = failedOutcome(a.GetFailure()), failureMessage(a.GetFailure())
			}
		case e.GetChildWorkflowExecutionCanceledEventAttributes() != nil:
			if i, ok := children[e.GetChildWorkflowExecutionCanceledEventAttributes().GetInitiatedEventId()]; ok {
				calls[i].Outcome = wire.OutcomeCanceled
			}
		case e.GetChildWorkflowExecutionTerminatedEventAttributes() != nil:
			if i, ok := children[e.GetChildWorkflowExecutionTerminatedEventAttributes().GetInitiatedEventId()]; ok {
				calls[i].Outcome = OutcomeTerminated
			}
		case e.GetChildWorkflowExecutionTimedOutEventAttributes() != nil:
			if i, ok := children[e.GetChildWorkflowExecutionTimedOutEventAttributes().GetInitiatedEventId()]; ok {
				calls[i].Outcome = OutcomeTimedOut
			}
		case e.GetActivityTaskScheduledEventAttributes() != nil:
			a := e.GetActivityTaskScheduledEventAttributes()
			p := a.GetInput().GetPayloads()
			if len(p) != 1 {
				continue
			}
			switch a.GetActivityType().GetName() {
			case executeToolName:
				var in executeToolCallFields
				if c.opts.DataConverter.FromPayload(p[0], &in) != nil {
					continue
				}
				i, seen := inline[in.ToolCallID]
				if !seen {
					i = len(calls)
					inline[in.ToolCallID] = i
					calls = append(calls, RunCall{Kind: RunCallInline, ToolCallID: in.ToolCallID, ToolName: in.ToolName})
				}
				calls[i].Outcome, calls[i].Message = OutcomeRunning, ""
				activities[id] = i
			case wire.AwaitToolCallName:
				var in wire.AwaitToolCallInput
				if c.opts.DataConverter.FromPayload(p[0], &in) != nil {
					continue
				}
				i, seen := byWorkflow[in.WorkflowID]
				if !seen {
					i = len(calls)
					byWorkflow[in.WorkflowID] = i
					rc := RunCall{WorkflowID: in.WorkflowID}
					if call, err := toolcore.ParseToolCall([]byte(in.Call)); err == nil {
						rc.ToolCallID, rc.ToolName = call.ID(), call.Name()
					}
					calls = append(calls, rc)
				}
				calls[i].Kind, calls[i].Outcome = RunCallAttached, OutcomeRunning
				activities[id] = i
			}
		case e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity":
			// An inline Local call: one marker once its attempts are over, naming the call in its
			// summary (histories before it named the tool only, and are skipped).
			m := e.GetMarkerRecordedEventAttributes()
			var summary string
			if _, ok := c.executeToolMarker(m); !ok || c.opts.DataConverter.FromPayload(e.GetUserMetadata().GetSummary(), &summary) != nil {
				continue
			}
			name, id, ok := safetext.ParseCallSummary(summary)
			if !ok {
				continue
			}
			rc := RunCall{Kind: RunCallInline, ToolCallID: id, ToolName: name, Outcome: wire.OutcomeOK}
			var out executeToolOutcome
			if f := m.GetFailure(); f != nil {
				rc.Outcome, rc.Message = failedOutcome(f), failureMessage(f)
			} else if r := m.GetDetails()["result"].GetPayloads(); len(r) == 1 && c.opts.DataConverter.FromPayload(r[0], &out) == nil && out.IsError {
				rc.Outcome = OutcomeError
			}
			calls = append(calls, rc)
		case e.GetActivityTaskCompletedEventAttributes() != nil:
			a := e.GetActivityTaskCompletedEventAttributes()
			i, ok := activities[a.GetScheduledEventId()]
			if !ok {
				continue
			}
			if calls[i].Kind == RunCallAttached {
				calls[i].Outcome = c.resultOutcome(a.GetResult().GetPayloads())
				continue
			}
			var out executeToolOutcome
			if p := a.GetResult().GetPayloads(); len(p) == 1 && c.opts.DataConverter.FromPayload(p[0], &out) == nil {
				calls[i].Outcome = wire.OutcomeOK
				if out.IsError {
					calls[i].Outcome = OutcomeError
				}
			}
		case e.GetActivityTaskFailedEventAttributes() != nil:
			a := e.GetActivityTaskFailedEventAttributes()
			if i, ok := activities[a.GetScheduledEventId()]; ok {
				calls[i].Outcome, calls[i].Message = failedOutcome(a.GetFailure()), failureMessage(a.GetFailure())
			}
		case e.GetActivityTaskTimedOutEventAttributes() != nil:
			a := e.GetActivityTaskTimedOutEventAttributes()
			if i, ok := activities[a.GetScheduledEventId()]; ok {
				calls[i].Outcome, calls[i].Message = OutcomeFailed, failureMessage(a.GetFailure())
			}
		case e.GetActivityTaskCanceledEventAttributes() != nil:
			if i, ok := activities[e.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()]; ok {
				calls[i].Outcome = wire.OutcomeCanceled
			}
		}
	}
	return calls, nil
}

// callNames are the ID and name of the call a ToolCallWorkflow's input payload holds ("" when it
// holds none).
func (c *Client) callNames(p *commonpb.Payload) (id, name string) {
	var raw converter.RawValue
	if err := c.opts.DataConverter.FromPayload(p, &raw); err != nil {
		return "", ""
	}
	call, err := toolcore.ParseToolCall(raw.Payload().GetData())
	if err != nil {
		return "", ""
	}
	return call.ID(), call.Name()
}

// resultOutcome is the outcome a tool-result message says: wire.OutcomeOK or its error code.
func (c *Client) resultOutcome(payloads []*commonpb.Payload) string {
	var r toolcore.Result
	if len(payloads) != 1 || c.opts.DataConverter.FromPayload(payloads[0], &r) != nil {
		return OutcomeError
	}
	if !r.IsError() {
		return wire.OutcomeOK
	}
	if code := r.ErrorCode(); code != 0 {
		return code.String()
	}
	return OutcomeError
}

// failedOutcome is the outcome of a call that failed with f: wire.OutcomeFatal for a genuine
// NonRecoverableToolError, wire.OutcomeInvalidToolCall, or OutcomeFailed.
func failedOutcome(f *failurepb.Failure) string {
	for ; f != nil; f = f.GetCause() {
		switch f.GetApplicationFailureInfo().GetType() {
		case wire.ErrTypeNonRecoverable:
			return wire.OutcomeFatal
		case wire.ErrTypeInvalidToolCall:
			return wire.OutcomeInvalidToolCall
		}
	}
	return OutcomeFailed
}
