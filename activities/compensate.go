package activities

import (
	"context"
	"strconv"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// CompensateTool undoes one effect: it runs the tool's Compensate with the call as recorded and
// the compensation's own idempotency key (in.Key, also the ctx's IdempotencyKey), heartbeating
// like ExecuteTool so a lost worker is noticed within the heartbeat timeout and a cancellation
// reaches the tool.
//
// A tool without a Compensate is wire.UndoSkipped (nothing runs). When the effect's outcome is
// unknown, the tool's Reconcile is asked first: not found, or found failed
// (toolcore.EffectFailed: like an error result, nothing to undo), is wire.UndoNotFound, no
// Reconcile wire.UndoUnresolved (neither compensates), found compensates with the reconciled
// output. The effect records no checkpoint: toolcore.LastCheckpoint finds none in that Reconcile.
//
// Errors, mapped like ExecuteTool's: a cancellation requested by the server is returned as
// cancellation; a genuine NonRecoverableToolError is a non-retryable ApplicationError of type
// wire.ErrTypeNonRecoverable (failed for good); any other error or panic of Compensate a
// retryable wire.ErrTypeCompensateFailed (of Reconcile, wire.ErrTypeReconcileFailed); an attempt
// cut off by the worker a retryable wire.ErrTypeInterrupted. A tool the worker does not have is
// a non-retryable wire.ErrTypeToolNotRegistered.
func (a *Activities) CompensateTool(ctx context.Context, in wire.CompensateToolInput) (wire.CompensateToolOutput, error) {
	ctx, endDrain := a.Drain.track(ctx) // a graceful stop interrupts it as ToolInterrupted, reported at once
	defer endDrain()
	if err := stopped(ctx, false); err != nil {
		return wire.CompensateToolOutput{}, err
	}
	e := in.Effect
	call, err := toolcore.NewToolCall(e.ToolCallID, e.ToolName, []byte("{}"))
	if err != nil || in.Key == "" {
		msg := "compensation key is empty"
		if err != nil {
			msg = toolcore.ErrorText(err)
		}
		return wire.CompensateToolOutput{}, temporal.NewNonRetryableApplicationError(
			"invalid CompensateTool input: "+msg, wire.ErrTypeInvalidInput, nil)
	}
	tool, ok := a.Registry.Get(e.ToolName)
	if !ok {
		return wire.CompensateToolOutput{}, temporal.NewNonRetryableApplicationError(
			"tool "+quote(e.ToolName)+" is not registered on the worker of task queue "+strconv.Quote(activity.GetInfo(ctx).TaskQueue)+"; its effect was not compensated",
			wire.ErrTypeToolNotRegistered, nil)
	}
	if !tool.HasCompensation() {
		return wire.CompensateToolOutput{Status: wire.UndoSkipped}, nil
	}
	sec, err := a.attemptSecrets(ctx, tool, nil, "", false)
	if err != nil {
		return wire.CompensateToolOutput{}, temporal.NewApplicationError("compensate: "+toolcore.ErrorText(err), wire.ErrTypeCompensateFailed)
	}
	info := activity.GetInfo(ctx)
	exec := toolcore.WithExecution(ctx, toolcore.Execution{
		ToolCallID:     e.ToolCallID,
		ToolName:       e.ToolName,
		Attempt:        int(info.Attempt),
		IdempotencyKey: in.Key,
		Secrets:        sec,
	})
	hb := a.startHeartbeats(ctx, info, tool.Options().IdleHeartbeat)
	defer hb.stop()
	output := e.Output
	if e.OutcomeUnknown {
		if !tool.CanReconcile() {
			return wire.CompensateToolOutput{Status: wire.UndoUnresolved}, nil
		}
		reconciled, found, recErr := tool.Reconcile(exec, e.IdempotencyKey)
		_, effectFailed := toolcore.EffectFailure(recErr)
		if err := stopped(ctx, recErr == nil || effectFailed); err != nil {
			return wire.CompensateToolOutput{}, err
		}
		if effectFailed {
			// The effect ended in an error: like an error result, nothing to compensate.
			return wire.CompensateToolOutput{Status: wire.UndoNotFound}, nil
		}
		if recErr != nil {
			return wire.CompensateToolOutput{}, temporal.NewApplicationError("reconcile: "+sec.RedactErrorText(recErr), wire.ErrTypeReconcileFailed)
		}
		if !found {
			return wire.CompensateToolOutput{Status: wire.UndoNotFound}, nil
		}
		result, err := toolcore.Complete(call, reconciled, nil)
		if err != nil { // unreachable: Complete lets only a tool's fatal error escape
			return wire.CompensateToolOutput{}, temporal.NewNonRetryableApplicationError(toolcore.ErrorText(err), wire.ErrTypeNonRecoverable, nil)
		}
		output = sec.RedactResult(call, result).Content()
	}
	compErr := tool.Compensate(exec, toolcore.Compensation{
		ToolCallID: e.ToolCallID, ToolName: e.ToolName, IdempotencyKey: e.IdempotencyKey, Key: in.Key, Output: output,
	})
	// Cancellation first, as in ExecuteTool: an error caused by the canceled context is a
	// cancellation, not a failure of the compensation.
	if err := stopped(ctx, compErr == nil); err != nil {
		return wire.CompensateToolOutput{}, err
	}
	// A type assertion, not errors.As, for the reason given in ExecuteTool.
	if panicErr, ok := compErr.(*toolcore.PanicError); ok {
		activity.GetLogger(ctx).Error("Compensate panicked", "toolCallId", e.ToolCallID, "toolName", e.ToolName,
			"panic", sec.Redact(panicErr.Error()), "stack", string(panicErr.Stack()))
	}
	if compErr != nil {
		if fatal, ok := toolcore.AsNonRecoverable(compErr); ok {
			return wire.CompensateToolOutput{}, temporal.NewApplicationErrorWithOptions(sec.RedactErrorText(fatal), wire.ErrTypeNonRecoverable,
				temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign})
		}
		return wire.CompensateToolOutput{}, temporal.NewApplicationError("compensate: "+sec.RedactErrorText(compErr), wire.ErrTypeCompensateFailed)
	}
	return wire.CompensateToolOutput{Status: wire.UndoCompensated}, nil
}
