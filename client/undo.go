package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// ErrRunNotClosed: the run whose effects Undo would undo has not closed; its calls could still
// add effects.
var ErrRunNotClosed = errors.New("the run is still running")

// outcomeUnknownPrefix starts the message of an Unsafe call whose only attempt ended without a
// verdict (workflows.OutcomeUnknownMessage; client does not import workflows).
const outcomeUnknownPrefix = "outcome unknown: the tool may or may not have run"

// Undo undoes the effects of the closed run workflowID (an agent workflow): it reads the run's
// history (RunEffects) and starts UndoWorkflow with the ID wire.UndoWorkflowIDPrefix +
// workflowID on the client's task queue, then waits for its result. An undo of the run that
// exists already (running or closed) is attached to instead: its result is returned, and no
// effect is compensated twice. A run that has not closed is ErrRunNotClosed; no such run
// ErrNotFound.
func (c *Client) Undo(ctx context.Context, workflowID string) (wire.UndoResult, error) {
	hist, err := c.History(ctx, workflowID, "")
	if err != nil {
		return wire.UndoResult{}, err
	}
	if n := len(hist.GetEvents()); n == 0 || !closes(hist.GetEvents()[n-1].GetEventType()) {
		return wire.UndoResult{}, fmt.Errorf("undo %s: %w", workflowID, ErrRunNotClosed)
	}
	effects, err := c.effectsOf(hist)
	if err != nil {
		return wire.UndoResult{}, fmt.Errorf("undo %s: %w", workflowID, err)
	}
	id := wire.UndoWorkflowIDPrefix + workflowID
	run, err := c.sdk.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                c.opts.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		StaticSummary:            "undo " + workflowID,
	}, wire.UndoWorkflowName, wire.UndoWorkflowInput{RunID: workflowID, Effects: effects})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		run, err = c.sdk.GetWorkflow(ctx, id, started.RunId), nil
	}
	if err != nil {
		return wire.UndoResult{}, fmt.Errorf("start %s: %w", id, err)
	}
	var res wire.UndoResult
	if err := run.Get(ctx, &res); err != nil {
		return wire.UndoResult{}, fmt.Errorf("undo %s: %w", workflowID, err)
	}
	return res, nil
}

// RunEffects returns the effects of the calls of run workflowID (its latest run), in the order
// they completed: its child ToolCallWorkflows and attached calls (AwaitToolCall) that ended with
// a result that is not an error, and its inline ExecuteTool activities that completed so, each
// under its idempotency key; a call whose only attempt ended without a verdict is included as
// OutcomeUnknown (unless a Reconcile found its effect: then with the reconciled output).
func (c *Client) RunEffects(ctx context.Context, workflowID string) ([]wire.UndoEffect, error) {
	hist, err := c.History(ctx, workflowID, "")
	if err != nil {
		return nil, err
	}
	return c.effectsOf(hist)
}

// executeToolInput holds the fields of ExecuteTool's and ReconcileTool's input that name the call.
type executeToolInput struct {
	ToolCallID     string `json:"toolCallId"`
	ToolName       string `json:"toolName"`
	IdempotencyKey string `json:"idempotencyKey"`
}

// effectsOf reads the effects out of a run's history.
func (c *Client) effectsOf(hist *historypb.History) ([]wire.UndoEffect, error) {
	var effects []wire.UndoEffect
	at := map[string]int{} // idempotency key -> index in effects
	put := func(e wire.UndoEffect) {
		if i, ok := at[e.IdempotencyKey]; ok {
			effects[i] = e
			return
		}
		at[e.IdempotencyKey] = len(effects)
		effects = append(effects, e)
	}
	fromResult := func(key string, payloads *commonpb.Payloads) error {
		var res toolcore.Result
		if err := c.opts.DataConverter.FromPayloads(payloads, &res); err != nil {
			return fmt.Errorf("decode the result of %s: %w", key, err)
		}
		e := wire.UndoEffect{ToolCallID: res.ToolCallID(), ToolName: res.ToolName(), IdempotencyKey: key}
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
		input    *commonpb.Payloads
	}
	activities := map[int64]scheduled{}
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
				activities[ev.GetEventId()] = scheduled{activity: name, input: a.GetInput()}
			}
		case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
			a := ev.GetChildWorkflowExecutionCompletedEventAttributes()
			if a.GetWorkflowType().GetName() != wire.ToolCallWorkflowName {
				continue
			}
			if err := fromResult(a.GetWorkflowExecution().GetWorkflowId(), a.GetResult()); err != nil {
				return nil, err
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
					return nil, fmt.Errorf("decode the input of AwaitToolCall: %w", err)
				}
				if err := fromResult(in.WorkflowID, a.GetResult()); err != nil {
					return nil, err
				}
				continue
			}
			in, _, err := inputOf(a.GetScheduledEventId())
			if err != nil {
				return nil, err
			}
			var out struct {
				Found   bool   `json:"found"`
				Content string `json:"content"`
				IsError bool   `json:"isError"`
			}
			if err := c.opts.DataConverter.FromPayloads(a.GetResult(), &out); err != nil {
				return nil, fmt.Errorf("decode the output of %s for %s: %w", s.activity, in.IdempotencyKey, err)
			}
			if (s.activity == wire.ExecuteToolName || out.Found) && !out.IsError {
				put(wire.UndoEffect{ToolCallID: in.ToolCallID, ToolName: in.ToolName, IdempotencyKey: in.IdempotencyKey, Output: out.Content})
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
				return nil, err
			}
			if name != wire.ExecuteToolName || !mayHaveRun(failure) {
				continue
			}
			if _, known := at[in.IdempotencyKey]; !known {
				put(wire.UndoEffect{ToolCallID: in.ToolCallID, ToolName: in.ToolName, IdempotencyKey: in.IdempotencyKey, OutcomeUnknown: true})
			}
		}
	}
	return effects, nil
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
