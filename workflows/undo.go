package workflows

import (
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Effects records, in the order they complete, the calls of an agent run whose effects the run
// may want to undo: every call that ended with a result that is not an error, and every call of
// an Unsafe tool that ended outcome unknown (OutcomeUnknownMessage). Give it to the calls in
// CallOptions.Effects: ExecuteToolCall, ExecuteRound and Inline record into it (Inline only the
// calls of tools that declare a Compensate: it knows the tool set). Undo compensates them.
//
// It is workflow state: use it from one workflow's code only, where its order is the order of
// completion in history, the same on every replay. The zero value is an empty record.
type Effects struct {
	list []wire.UndoEffect
}

// Mark returns the current length of the record: Undo with UndoOptions.After set to it undoes
// only the effects recorded from now on.
func (e *Effects) Mark() int { return len(e.list) }

// List returns a copy of the recorded effects in completion order.
func (e *Effects) List() []wire.UndoEffect { return append([]wire.UndoEffect(nil), e.list...) }

// Undo undoes the effects recorded after opts.After (see Undo) and keeps in the record, in their
// place, only those that may remain (wire.UndoResult.Remaining): a later Undo tries them again
// under the same compensation keys.
func (e *Effects) Undo(ctx workflow.Context, opts UndoOptions) (wire.UndoResult, error) {
	after := min(max(opts.After, 0), len(e.list))
	res, err := Undo(ctx, e.list[after:], opts)
	remain := map[string]bool{}
	for _, r := range res.Remaining() {
		remain[r.IdempotencyKey] = true
	}
	kept := e.list[:after:after]
	for i, ef := range e.list[after:] {
		// An effect Undo did not reach (canceled before it) stays too.
		if remain[ef.IdempotencyKey] || len(res.Steps) < len(e.list)-after-i {
			kept = append(kept, ef)
		}
	}
	e.list = kept
	return res, err
}

// record adds the outcome of call (idempotency key key, its tool run on task queue queue) when it
// may have had an effect.
func (e *Effects) record(call toolcore.ToolCall, key, queue string, res toolcore.Result) {
	if e == nil || res.IsZero() {
		return
	}
	ef := wire.UndoEffect{ToolCallID: call.ID(), ToolName: call.Name(), IdempotencyKey: key, TaskQueue: queue}
	switch {
	case !res.IsError():
		ef.Output = res.Content()
	case res.ErrorCode() == toolcore.CodeToolExecutionFailed && strings.HasPrefix(res.ErrorMessage(), OutcomeUnknownMessage):
		ef.OutcomeUnknown = true
	default:
		return
	}
	e.list = append(e.list, ef)
}

// childKeySlot is the context key of the *string an Inline call reads the key of a call it ran as
// a child (an approval-gated one) from: that call is recorded once, by Inline.
type childKeySlot struct{}

// recordChild records the outcome of a call ExecuteToolCall ran as a child (or attached to) on
// opts.TaskQueue.
func recordChild(ctx workflow.Context, opts CallOptions, call toolcore.ToolCall, key string, res toolcore.Result) {
	if slot, ok := ctx.Value(childKeySlot{}).(*string); ok {
		*slot = key
		return
	}
	opts.Effects.record(call, key, opts.TaskQueue, res)
}

// UndoOptions configure Undo. They work at their zero value.
type UndoOptions struct {
	// After skips the first After effects of an Effects record (Effects.Mark): only those
	// recorded after it are undone. Effects.Undo only. Optional: default 0, all.
	After int
	// TaskQueue where the CompensateTool activities of effects without a recorded queue run
	// (wire.UndoEffect.TaskQueue: Effects records it, so does client.RunEffects); a toolgate
	// worker with the tools must poll it. Optional: default wire.DefaultTaskQueue.
	TaskQueue string
	// HeartbeatTimeout of each compensation: a lost worker is noticed within it and the
	// compensation runs again (same key) on another. Optional: default
	// toolcore.DefaultHeartbeatTimeout.
	HeartbeatTimeout time.Duration
	// Timeout bounds one attempt of a compensation. Optional: default toolcore.DefaultTimeout.
	Timeout time.Duration
}

// Undo undoes effects (in completion order) from workflow code, last completed first. Each is one
// CompensateTool activity on the effect's task queue (else opts.TaskQueue): heartbeat-linked,
// with the idempotency key
// toolcore.CompensationKey(effect key), retried with backoff up to wire.CompensateMaxAttempts
// attempts like a call of an Idempotent tool, summarized in the UI as "undo <tool> · <call ID>".
// A tool without a Compensate is skipped; an effect whose outcome was unknown is reconciled
// first and compensated only when found. The first compensation that fails for good stops the
// undo: it is wire.UndoFailed with the reason, every effect before it in completion order
// wire.UndoRemaining. A failure's message names the task queue.
//
// The error is nil, whatever the compensations did (read the result), except when ctx is
// canceled: then the steps so far and a *temporal.CanceledError.
func Undo(ctx workflow.Context, effects []wire.UndoEffect, opts UndoOptions) (wire.UndoResult, error) {
	if opts.TaskQueue == "" {
		opts.TaskQueue = wire.DefaultTaskQueue
	}
	if opts.HeartbeatTimeout <= 0 {
		opts.HeartbeatTimeout = toolcore.DefaultHeartbeatTimeout
	}
	if opts.Timeout <= 0 {
		opts.Timeout = toolcore.DefaultTimeout
	}
	res := wire.UndoResult{Steps: make([]wire.UndoStep, 0, len(effects))}
	failed := false
	for i := len(effects) - 1; i >= 0; i-- {
		e := effects[i]
		if failed {
			res.Steps = append(res.Steps, wire.UndoStep{Effect: e, Status: wire.UndoRemaining})
			continue
		}
		if ctx.Err() != nil {
			return res, temporal.NewCanceledError()
		}
		step := compensate(ctx, e, opts)
		if ctx.Err() != nil {
			return res, temporal.NewCanceledError()
		}
		countCompensation(ctx, step)
		failed = step.Status == wire.UndoFailed
		res.Steps = append(res.Steps, step)
	}
	return res, nil
}

// compensate runs the CompensateTool activity of e on its task queue (else opts.TaskQueue).
func compensate(ctx workflow.Context, e wire.UndoEffect, opts UndoOptions) wire.UndoStep {
	summary := "undo " + safetext.CallSummary(e.ToolName, e.ToolCallID)
	if e.OutcomeUnknown {
		summary = "reconcile and undo " + e.ToolName + " · " + e.ToolCallID
	}
	queue := e.TaskQueue
	if queue == "" {
		queue = opts.TaskQueue
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: opts.Timeout,
		HeartbeatTimeout:    opts.HeartbeatTimeout,
		WaitForCancellation: true,
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    RetryInitialInterval,
			BackoffCoefficient: RetryBackoffCoefficient,
			MaximumInterval:    RetryMaximumInterval,
			MaximumAttempts:    wire.CompensateMaxAttempts,
			NonRetryableErrorTypes: []string{
				wire.ErrTypeNonRecoverable, wire.ErrTypeToolNotRegistered, wire.ErrTypeInvalidInput,
			},
		},
	})
	var out wire.CompensateToolOutput
	err := workflow.ExecuteActivity(actx, wire.CompensateToolName, wire.CompensateToolInput{
		Effect: e, Key: toolcore.CompensationKey(e.IdempotencyKey),
	}).Get(actx, &out)
	switch {
	case err != nil:
		msg := lastFailure(toolcore.Options{SideEffect: toolcore.Idempotent, Timeout: opts.Timeout, HeartbeatTimeout: opts.HeartbeatTimeout}, err)
		return wire.UndoStep{Effect: e, Status: wire.UndoFailed, Message: withQueue(msg, queue)}
	case out.Status == wire.UndoCompensated, out.Status == wire.UndoSkipped, out.Status == wire.UndoNotFound, out.Status == wire.UndoUnresolved:
		return wire.UndoStep{Effect: e, Status: out.Status}
	default:
		return wire.UndoStep{Effect: e, Status: wire.UndoFailed, Message: "CompensateTool returned the unknown status " + string(out.Status)}
	}
}

// withQueue returns msg naming task queue queue, unless it does already (CompensateTool names its
// own queue when the tool is not registered there).
func withQueue(msg, queue string) string {
	named := "task queue " + strconv.Quote(queue)
	if strings.Contains(msg, named) {
		return msg
	}
	return msg + " (on " + named + ")"
}

// UndoWorkflow undoes in.Effects with Undo, each compensation on the effect's task queue, else
// on the Workflows' TaskQueue (default its own): what `toolgate undo` starts, with the IDs
// wire.UndoWorkflowID gives (client.Undo). Every toolgate worker registers it under
// wire.UndoWorkflowName.
func (w *Workflows) UndoWorkflow(ctx workflow.Context, in wire.UndoWorkflowInput) (wire.UndoResult, error) {
	queue := w.TaskQueue
	if queue == "" {
		queue = workflow.GetInfo(ctx).TaskQueueName
	}
	workflow.SetCurrentDetails(ctx, "undoing "+plural(len(in.Effects), "effect")+" of "+in.RunID+", last completed first")
	res, err := Undo(ctx, in.Effects, UndoOptions{TaskQueue: queue, HeartbeatTimeout: in.HeartbeatTimeout, Timeout: in.Timeout})
	if err == nil {
		details := "undone: " + plural(res.Count(wire.UndoCompensated), "compensation")
		if n := len(res.Remaining()); n > 0 {
			details += "; " + plural(n, "effect") + " may remain"
		}
		workflow.SetCurrentDetails(ctx, details)
	}
	return res, err
}

// countCompensation records one step of an undo in MetricCompensations.
func countCompensation(ctx workflow.Context, step wire.UndoStep) {
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{
		MetricLabelTool: step.Effect.ToolName, MetricLabelOutcome: string(step.Status),
	}).Counter(MetricCompensations).Inc(1)
}
