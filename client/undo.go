package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// ErrRunNotClosed: the run whose effects Undo would undo has not closed; its calls could still
// add effects.
var ErrRunNotClosed = errors.New("the run is still running")

// outcomeUnknownPrefix starts the message of an Unsafe call whose only attempt ended without a
// verdict (workflows.OutcomeUnknownMessage; client does not import workflows).
const outcomeUnknownPrefix = "outcome unknown: the tool may or may not have run"

// maxUndoAttempts bounds the undo attempts of one run that Undo reads and starts.
const maxUndoAttempts = 100

// UndoOptions configure UndoWith. They work at their zero value.
type UndoOptions struct {
	// TaskQueue the UndoWorkflow runs on; a toolgate worker must poll it. Each compensation
	// runs on its effect's own queue (wire.UndoEffect.TaskQueue) whatever this says. Optional:
	// default the run's: the queue of its last completed call that ran as a ToolCallWorkflow
	// (a toolgate worker's main queue), else the run's own queue.
	TaskQueue string
}

// Undo is UndoWith with the zero UndoOptions: the undo runs where the run's calls ran.
func (c *Client) Undo(ctx context.Context, workflowID string) (wire.UndoResult, error) {
	return c.UndoWith(ctx, workflowID, UndoOptions{})
}

// UndoWith undoes the effects of the closed run workflowID (an agent workflow): it reads the
// run's history (RunEffects: each effect with the task queue its tool ran on) and the earlier
// undo attempts of the run (wire.UndoWorkflowID 1, 2, ...), then undoes what they left:
//
//   - an attempt still running is attached to (its result is awaited), never run beside;
//   - otherwise the effects no earlier attempt compensated, skipped or found absent (failed,
//     remaining and unresolved ones, and those an ended attempt did not reach) go to a new
//     attempt, the next UndoWorkflow ID; a concurrent start of the same attempt attaches to it;
//   - when none is left, nothing starts;
//   - when no worker polls the queue the attempt would run (or runs) on, it returns at once an
//     ErrNoWorker error naming that queue, and starts nothing.
//
// So no effect is compensated twice, as long as the namespace keeps the attempts' histories
// (retention). A compensation an attempt had started when it was terminated runs again in the
// next one under the same key (a Compensate applies at most once per key).
//
// The result has one step per effect of the run, in undo order, each as its last attempt left it.
// A run that has not closed is ErrRunNotClosed; no such run ErrNotFound.
func (c *Client) UndoWith(ctx context.Context, workflowID string, opts UndoOptions) (wire.UndoResult, error) {
	hist, err := c.History(ctx, workflowID, "")
	if err != nil {
		return wire.UndoResult{}, err
	}
	if n := len(hist.GetEvents()); n == 0 || !closes(hist.GetEvents()[n-1].GetEventType()) {
		return wire.UndoResult{}, fmt.Errorf("undo %s: %w", workflowID, ErrRunNotClosed)
	}
	run, err := c.runEffectsOf(ctx, hist)
	if err != nil {
		return wire.UndoResult{}, fmt.Errorf("undo %s: %w", workflowID, err)
	}
	attempts, next, err := c.undoAttempts(ctx, workflowID)
	if err != nil {
		return wire.UndoResult{}, fmt.Errorf("undo %s: %w", workflowID, err)
	}
	plan := planUndo(run.effects, attempts)
	switch {
	case plan.running != "":
		if err := c.checkPollers(ctx, plan.runningQueue); err != nil {
			return wire.UndoResult{}, fmt.Errorf("undo %s: %s waits: %w", workflowID, plan.running, err)
		}
		res, err := c.undoResult(ctx, c.sdk.GetWorkflow(ctx, plan.running, ""))
		if err != nil {
			return wire.UndoResult{}, fmt.Errorf("undo %s: %w", workflowID, err)
		}
		return plan.merge(run.effects, res), nil
	case len(attempts) > 0 && len(plan.todo) == 0:
		return plan.merge(run.effects, wire.UndoResult{}), nil
	}
	if next > maxUndoAttempts {
		return wire.UndoResult{}, fmt.Errorf("undo %s: the run has had %d undo attempts, the most Undo starts", workflowID, maxUndoAttempts)
	}
	queue := opts.TaskQueue
	if queue == "" {
		queue = run.undoQueue
	}
	if err := c.checkPollers(ctx, queue); err != nil {
		// Started there, the attempt would wait, and a rerun would attach to it.
		return wire.UndoResult{}, fmt.Errorf("undo %s: nothing started: %w", workflowID, err)
	}
	id := wire.UndoWorkflowID(workflowID, next)
	summary := "undo " + safetext.CodeSpan(workflowID)
	if next > 1 {
		summary += " (attempt " + strconv.Itoa(next) + ")"
	}
	started, err := c.sdk.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                queue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		StaticSummary:            summary,
	}, wire.UndoWorkflowName, wire.UndoWorkflowInput{RunID: workflowID, Effects: plan.todo})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		// Another undo started this attempt from the same earlier ones, and it has closed.
		started, err = c.sdk.GetWorkflow(ctx, id, already.RunId), nil
	}
	if err != nil {
		return wire.UndoResult{}, fmt.Errorf("start %s: %w", id, err)
	}
	res, err := c.undoResult(ctx, started)
	if err != nil {
		return wire.UndoResult{}, fmt.Errorf("undo %s: %w", workflowID, err)
	}
	return plan.merge(run.effects, res), nil
}

// undoResult waits for the result of an UndoWorkflow run.
func (c *Client) undoResult(ctx context.Context, run client.WorkflowRun) (wire.UndoResult, error) {
	var res wire.UndoResult
	if err := run.Get(ctx, &res); err != nil {
		return wire.UndoResult{}, fmt.Errorf("%s: %w", run.GetID(), err)
	}
	return res, nil
}

// undoAttempt is what one earlier UndoWorkflow of a run did.
type undoAttempt struct {
	workflowID string
	taskQueue  string
	closed     bool
	// done holds, by idempotency key, the effects it compensated, skipped or found absent
	// (read from its completed CompensateTool activities, so also of an attempt that was
	// terminated or failed).
	done map[string]wire.UndoStep
}

// undoAttempts reads the undo attempts of run in order, and returns the number of the next one.
// An ID of the sequence that holds another run's undo (a run whose ID ends like an attempt's) is
// passed over.
func (c *Client) undoAttempts(ctx context.Context, run string) ([]undoAttempt, int, error) {
	var attempts []undoAttempt
	for n := 1; n <= maxUndoAttempts; n++ {
		id := wire.UndoWorkflowID(run, n)
		hist, err := c.History(ctx, id, "")
		if errors.Is(err, wire.ErrNotFound) || (err == nil && len(hist.GetEvents()) == 0) {
			return attempts, n, nil
		}
		if err != nil {
			return nil, 0, err
		}
		a, ours, err := c.readUndoAttempt(id, run, hist)
		if err != nil {
			return nil, 0, err
		}
		if ours {
			attempts = append(attempts, a)
		}
	}
	return attempts, maxUndoAttempts + 1, nil
}

// readUndoAttempt reads the history of the UndoWorkflow id; ours is false when it undoes another
// run than run.
func (c *Client) readUndoAttempt(id, run string, hist *historypb.History) (a undoAttempt, ours bool, err error) {
	events := hist.GetEvents()
	started := events[0].GetWorkflowExecutionStartedEventAttributes()
	if started.GetWorkflowType().GetName() != wire.UndoWorkflowName {
		return undoAttempt{}, false, nil
	}
	var in wire.UndoWorkflowInput
	if err := c.opts.DataConverter.FromPayloads(started.GetInput(), &in); err != nil {
		return undoAttempt{}, false, fmt.Errorf("decode the input of %s: %w", id, err)
	}
	if in.RunID != run {
		return undoAttempt{}, false, nil
	}
	a = undoAttempt{workflowID: id, taskQueue: started.GetTaskQueue().GetName(), closed: closes(events[len(events)-1].GetEventType()), done: map[string]wire.UndoStep{}}
	scheduled := map[int64]wire.UndoEffect{}
	for _, ev := range events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			attrs := ev.GetActivityTaskScheduledEventAttributes()
			if attrs.GetActivityType().GetName() != wire.CompensateToolName {
				continue
			}
			var ci wire.CompensateToolInput
			if err := c.opts.DataConverter.FromPayloads(attrs.GetInput(), &ci); err != nil {
				return undoAttempt{}, false, fmt.Errorf("decode a CompensateTool input of %s: %w", id, err)
			}
			scheduled[ev.GetEventId()] = ci.Effect
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			attrs := ev.GetActivityTaskCompletedEventAttributes()
			e, ok := scheduled[attrs.GetScheduledEventId()]
			if !ok {
				continue
			}
			var out wire.CompensateToolOutput
			if err := c.opts.DataConverter.FromPayloads(attrs.GetResult(), &out); err != nil {
				return undoAttempt{}, false, fmt.Errorf("decode a CompensateTool result of %s: %w", id, err)
			}
			switch out.Status {
			case wire.UndoCompensated, wire.UndoSkipped, wire.UndoNotFound:
				a.done[e.IdempotencyKey] = wire.UndoStep{Effect: e, Status: out.Status}
			}
		}
	}
	return a, true, nil
}

// undoPlan is what an undo does next, given the earlier attempts.
type undoPlan struct {
	// running is the workflow ID of an attempt that has not closed: attach to it; it waits on
	// runningQueue.
	running, runningQueue string
	// done holds the steps earlier attempts finished (not the running one's), by key.
	done map[string]wire.UndoStep
	// todo are the effects left for a new attempt, in completion order.
	todo []wire.UndoEffect
}

// planUndo decides from the run's effects (completion order) and its earlier undo attempts.
func planUndo(effects []wire.UndoEffect, attempts []undoAttempt) undoPlan {
	p := undoPlan{done: map[string]wire.UndoStep{}}
	for i, a := range attempts {
		if !a.closed && i == len(attempts)-1 {
			p.running, p.runningQueue = a.workflowID, a.taskQueue
			break
		}
		maps.Copy(p.done, a.done)
	}
	p.todo = []wire.UndoEffect{}
	for _, e := range effects {
		if _, ok := p.done[e.IdempotencyKey]; !ok {
			p.todo = append(p.todo, e)
		}
	}
	return p
}

// merge returns one step per effect in undo order: the latest attempt's (last), else what an
// earlier attempt finished, else remaining (no attempt reached it yet).
func (p undoPlan) merge(effects []wire.UndoEffect, last wire.UndoResult) wire.UndoResult {
	latest := map[string]wire.UndoStep{}
	for _, s := range last.Steps {
		latest[s.Effect.IdempotencyKey] = s
	}
	res := wire.UndoResult{Steps: make([]wire.UndoStep, 0, len(effects))}
	for i := len(effects) - 1; i >= 0; i-- {
		e := effects[i]
		step, ok := latest[e.IdempotencyKey]
		if !ok {
			step, ok = p.done[e.IdempotencyKey]
		}
		if !ok {
			step = wire.UndoStep{Status: wire.UndoRemaining}
		}
		step.Effect = e
		res.Steps = append(res.Steps, step)
	}
	return res
}

// RunEffects returns the effects of the calls of run workflowID (its latest run), in the order
// they completed: its child ToolCallWorkflows and attached calls (AwaitToolCall) that ended with
// a result that is not an error, and its inline ExecuteTool activities that completed so, each
// under its idempotency key and with the task queue its tool ran on (a call workflow's queue, an
// inline activity's queue); a call whose only attempt ended without a verdict is included as
// OutcomeUnknown (unless a Reconcile found its effect: then with the reconciled output).
func (c *Client) RunEffects(ctx context.Context, workflowID string) ([]wire.UndoEffect, error) {
	hist, err := c.History(ctx, workflowID, "")
	if err != nil {
		return nil, err
	}
	run, err := c.runEffectsOf(ctx, hist)
	return run.effects, err
}

// runEffects are a run's effects and the queue an undo of them runs on by default.
type runEffects struct {
	effects []wire.UndoEffect
	// undoQueue is the queue of the last effect that ran as a ToolCallWorkflow (a toolgate
	// worker's main queue, where UndoWorkflow is registered), else the run's own queue.
	undoQueue string
}

// runEffectsOf reads a run's effects out of its history; the queue of an attached call is asked
// of the server (one DescribeWorkflowExecution each; unknown if the call is gone).
func (c *Client) runEffectsOf(ctx context.Context, hist *historypb.History) (runEffects, error) {
	effects, workflowCalls, err := c.effectsOf(hist)
	if err != nil {
		return runEffects{}, err
	}
	for i, e := range effects {
		if e.TaskQueue != "" || !workflowCalls[e.IdempotencyKey] {
			continue
		}
		if d, err := c.sdk.DescribeWorkflowExecution(ctx, e.IdempotencyKey, ""); err == nil {
			effects[i].TaskQueue = d.GetExecutionConfig().GetTaskQueue().GetName()
		}
	}
	run := runEffects{effects: effects}
	if events := hist.GetEvents(); len(events) > 0 {
		run.undoQueue = events[0].GetWorkflowExecutionStartedEventAttributes().GetTaskQueue().GetName()
	}
	for i := len(effects) - 1; i >= 0; i-- {
		if effects[i].TaskQueue != "" && workflowCalls[effects[i].IdempotencyKey] {
			run.undoQueue = effects[i].TaskQueue
			break
		}
	}
	return run, nil
}

// executeToolInput holds the fields of ExecuteTool's and ReconcileTool's input that name the call.
type executeToolInput struct {
	ToolCallID     string `json:"toolCallId"`
	ToolName       string `json:"toolName"`
	IdempotencyKey string `json:"idempotencyKey"`
}

// effectsOf reads the effects out of a run's history, each with the queue its tool ran on when
// the history says it (not for an attached call); workflowCalls holds the keys of those that ran
// as ToolCallWorkflows (children and attached calls).
func (c *Client) effectsOf(hist *historypb.History) (effects []wire.UndoEffect, workflowCalls map[string]bool, err error) {
	workflowCalls = map[string]bool{}
	at := map[string]int{} // idempotency key -> index in effects
	put := func(e wire.UndoEffect) {
		if i, ok := at[e.IdempotencyKey]; ok {
			effects[i] = e
			return
		}
		at[e.IdempotencyKey] = len(effects)
		effects = append(effects, e)
	}
	fromResult := func(key, queue string, payloads *commonpb.Payloads) error {
		var res toolcore.Result
		if err := c.opts.DataConverter.FromPayloads(payloads, &res); err != nil {
			return fmt.Errorf("decode the result of %s: %w", key, err)
		}
		workflowCalls[key] = true
		e := wire.UndoEffect{ToolCallID: res.ToolCallID(), ToolName: res.ToolName(), IdempotencyKey: key, TaskQueue: queue}
		switch {
		case !res.IsError():
			e.Output = res.Content()
		case res.ErrorCode() == toolcore.CodeToolExecutionFailed && strings.HasPrefix(res.ErrorMessage(), outcomeUnknownPrefix):
			e.OutcomeUnknown = true
		default:
			return nil
		}
		put(e)
		return nil
	}
	type scheduled struct {
		activity string
		queue    string
		input    *commonpb.Payloads
	}
	activities := map[int64]scheduled{}
	childQueues := map[int64]string{} // initiated event ID -> the child's task queue
	inputOf := func(id int64) (executeToolInput, string, error) {
		s := activities[id]
		var in executeToolInput
		if s.input == nil {
			return in, s.activity, nil
		}
		if err := c.opts.DataConverter.FromPayloads(s.input, &in); err != nil {
			return in, s.activity, fmt.Errorf("decode the input of %s %d: %w", s.activity, id, err)
		}
		return in, s.activity, nil
	}
	for _, ev := range hist.GetEvents() {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := ev.GetActivityTaskScheduledEventAttributes()
			switch name := a.GetActivityType().GetName(); name {
			case wire.ExecuteToolName, wire.ReconcileToolName, wire.AwaitToolCallName:
				activities[ev.GetEventId()] = scheduled{activity: name, queue: a.GetTaskQueue().GetName(), input: a.GetInput()}
			}
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			childQueues[ev.GetEventId()] = ev.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetTaskQueue().GetName()
		case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
			a := ev.GetChildWorkflowExecutionCompletedEventAttributes()
			if a.GetWorkflowType().GetName() != wire.ToolCallWorkflowName {
				continue
			}
			if err := fromResult(a.GetWorkflowExecution().GetWorkflowId(), childQueues[a.GetInitiatedEventId()], a.GetResult()); err != nil {
				return nil, nil, err
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			s, ok := activities[a.GetScheduledEventId()]
			if !ok {
				continue
			}
			if s.activity == wire.AwaitToolCallName {
				var in wire.AwaitToolCallInput
				if err := c.opts.DataConverter.FromPayloads(s.input, &in); err != nil {
					return nil, nil, fmt.Errorf("decode the input of AwaitToolCall: %w", err)
				}
				if err := fromResult(in.WorkflowID, "", a.GetResult()); err != nil {
					return nil, nil, err
				}
				continue
			}
			in, _, err := inputOf(a.GetScheduledEventId())
			if err != nil {
				return nil, nil, err
			}
			var out struct {
				Found   bool   `json:"found"`
				Content string `json:"content"`
				IsError bool   `json:"isError"`
			}
			if err := c.opts.DataConverter.FromPayloads(a.GetResult(), &out); err != nil {
				return nil, nil, fmt.Errorf("decode the output of %s for %s: %w", s.activity, in.IdempotencyKey, err)
			}
			if (s.activity == wire.ExecuteToolName || out.Found) && !out.IsError {
				put(wire.UndoEffect{ToolCallID: in.ToolCallID, ToolName: in.ToolName, IdempotencyKey: in.IdempotencyKey, Output: out.Content, TaskQueue: s.queue})
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			var id int64
			var failure *failurepb.Failure
			if a := ev.GetActivityTaskFailedEventAttributes(); a != nil {
				id, failure = a.GetScheduledEventId(), a.GetFailure()
			} else {
				a := ev.GetActivityTaskTimedOutEventAttributes()
				id, failure = a.GetScheduledEventId(), a.GetFailure()
			}
			in, name, err := inputOf(id)
			if err != nil {
				return nil, nil, err
			}
			if name != wire.ExecuteToolName || !mayHaveRun(failure) {
				continue
			}
			if _, known := at[in.IdempotencyKey]; !known {
				put(wire.UndoEffect{ToolCallID: in.ToolCallID, ToolName: in.ToolName, IdempotencyKey: in.IdempotencyKey, OutcomeUnknown: true, TaskQueue: activities[id].queue})
			}
		}
	}
	return effects, workflowCalls, nil
}

// mayHaveRun reports whether an ExecuteTool that ended with failure may have had its effect:
// every failure but those that prove the tool did not run or returned a fatal error.
func mayHaveRun(f *failurepb.Failure) bool {
	for ; f != nil; f = f.GetCause() {
		switch f.GetApplicationFailureInfo().GetType() {
		case wire.ErrTypeToolNotRegistered, wire.ErrTypeInvalidInput, wire.ErrTypeNonRecoverable:
			return false
		}
		if f.GetCanceledFailureInfo() != nil {
			return false
		}
	}
	return true
}

// closes reports whether t is the event that closes a workflow run.
func closes(t enumspb.EventType) bool {
	switch t {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return true
	}
	return false
}
