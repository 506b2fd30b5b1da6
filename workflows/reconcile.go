package workflows

import (
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// reconcileLost handles an Unsafe call with a Reconcile whose only ExecuteTool attempt ended
// without a verdict (execErr: a timeout, a lost worker, an interrupted attempt). It keeps the
// one-attempt rule of Unsafe tools: instead of a second ExecuteTool attempt, it schedules
// ReconcileTool (retried with backoff, at most wire.ReconcileMaxAttempts attempts), which asks
// the tool whether the effect happened under the call's idempotency key.
//
//   - found: the reconciled output is the result; the tool does not run again;
//   - not found: TOOL_EXECUTION_FAILED outcome unknown, or, when the tool declares
//     RerunWhenNotReconciled, exactly one more ExecuteTool attempt whose outcome is final;
//   - Reconcile keeps failing: TOOL_EXECUTION_FAILED outcome unknown, naming its last failure.
//
// handled is false when nothing applies (the caller maps execErr as before); histories recorded
// before reconcile existed take the DefaultVersion branch and are not reconciled.
func (w *Workflows) reconcileLost(ctx workflow.Context, call toolcore.ToolCall, tool toolcore.Tool, in activities.ExecuteToolInput,
	ao workflow.ActivityOptions, execErr error) (handled bool, res toolcore.Result, err error) {
	opts := tool.Options()
	if !tool.CanReconcile() || opts.SideEffect != toolcore.Unsafe || !outcomeUnknown(execErr) {
		return false, toolcore.Result{}, nil
	}
	if workflow.GetVersion(ctx, wire.ChangeReconcile, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false, toolcore.Result{}, nil
	}
	lost := lastFailure(opts, execErr)
	workflow.GetLogger(ctx).Warn("ExecuteTool ended without a verdict; reconciling", "toolCallId", call.ID(), "toolName", call.Name(), "error", execErr)
	w.setDetails(ctx, "reconciling "+call.Name()+": its only attempt ended without a verdict ("+lost+"); asking Reconcile whether its effect happened")

	rao := ao
	rao.Summary = "reconcile " + call.Name()
	rao.RetryPolicy = &temporal.RetryPolicy{
		InitialInterval:    RetryInitialInterval,
		BackoffCoefficient: RetryBackoffCoefficient,
		MaximumInterval:    RetryMaximumInterval,
		MaximumAttempts:    wire.ReconcileMaxAttempts,
		NonRetryableErrorTypes: []string{
			wire.ErrTypeNonRecoverable, wire.ErrTypeToolNotRegistered, wire.ErrTypeInvalidInput,
		},
	}
	rin := activities.ReconcileToolInput{ToolCallID: in.ToolCallID, ToolName: in.ToolName, IdempotencyKey: in.IdempotencyKey, Run: in.Run}
	// Asked only when there is a checkpoint: the inputs and markers of every other reconcile
	// stay those recorded before it existed.
	if cp := lostCheckpoint(execErr); cp != nil &&
		workflow.GetVersion(ctx, wire.ChangeReconcileCheckpoint, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		rin.LastCheckpoint = cp
	}
	var out activities.ReconcileToolOutput
	rerr := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, rao), wire.ReconcileToolName, rin).Get(ctx, &out)
	var fatal *temporal.ApplicationError
	switch {
	case ctx.Err() != nil:
		res, err := w.canceled(ctx, call)
		return true, res, err
	case errors.As(rerr, &fatal) && fatal.Type() == wire.ErrTypeNonRecoverable:
		// Reconcile found the effect failed with a NonRecoverableToolError: as from ExecuteTool.
		res, err := w.activityFailed(ctx, call, opts, rerr)
		return true, res, err
	case rerr != nil:
		msg := OutcomeUnknownMessage + " (" + lost + "); Reconcile failed after " + plural(wire.ReconcileMaxAttempts, "attempt") +
			" (last: " + lastFailure(opts, rerr) + "); unsafe calls are not retried"
		res, err := w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed, msg))
		return true, res, err
	case out.Found:
		res, err := w.complete(ctx, call, toolcore.LinkContent(call, out.Content, out.IsError))
		return true, res, err
	case !opts.RerunWhenNotReconciled:
		msg := OutcomeUnknownMessage + " (" + lost + "); Reconcile found no sign of its effect; unsafe calls are not retried"
		res, err := w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed, msg))
		return true, res, err
	}

	// The tool declared a second run safe after a negative reconcile: one more attempt, final.
	w.setDetails(ctx, "running "+call.Name()+" again: Reconcile found no effect of the lost attempt ("+lost+")")
	var again activities.ExecuteToolOutput
	err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), wire.ExecuteToolName, in).Get(ctx, &again)
	switch {
	case ctx.Err() != nil:
		res, err = w.canceled(ctx, call)
	case err != nil:
		res, err = w.activityFailed(ctx, call, opts, err)
	default:
		res, err = w.complete(ctx, call, toolcore.LinkContent(call, again.Content, again.IsError))
	}
	return true, res, err
}

// outcomeUnknown reports whether a failed ExecuteTool may have had its effect: everything but
// the failures that prove the tool did not run, a fatal error the tool returned, and a
// cancellation.
func outcomeUnknown(err error) bool {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case wire.ErrTypeToolNotRegistered, wire.ErrTypeInvalidInput, wire.ErrTypeNonRecoverable:
			return false
		}
	}
	var canceled *temporal.CanceledError
	return !errors.As(err, &canceled)
}

// lostCheckpoint is the checkpoint of the attempt that ended with err, or nil: of a timeout (a
// lost worker), what its last heartbeat carried (wire.CheckpointDetailsIndex of the last
// heartbeat details); of an attempt the worker cut off (wire.ErrTypeInterrupted), the error's
// details. It reads history only: the same on every replay.
func lostCheckpoint(err error) json.RawMessage {
	var progress, cp json.RawMessage
	var timeoutErr *temporal.TimeoutError
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &timeoutErr):
		if !timeoutErr.HasLastHeartbeatDetails() || timeoutErr.LastHeartbeatDetails(&progress, &cp) != nil {
			return nil
		}
	case errors.As(err, &appErr) && appErr.Type() == wire.ErrTypeInterrupted:
		if !appErr.HasDetails() || appErr.Details(&cp) != nil {
			return nil
		}
	}
	if len(cp) == 0 || string(cp) == "null" {
		return nil
	}
	return cp
}
