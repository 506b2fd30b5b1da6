package activities

import (
	"context"
	"encoding/json"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// ReconcileToolInput is the argument of ReconcileTool.
type ReconcileToolInput struct {
	ToolCallID     string `json:"toolCallId"`
	ToolName       string `json:"toolName"`
	IdempotencyKey string `json:"idempotencyKey"`
	// LastCheckpoint is the checkpoint the lost ExecuteTool attempt's last heartbeat carried,
	// which toolcore.LastCheckpoint returns in Reconcile. Optional: absent when there was none,
	// and in histories recorded before it existed.
	LastCheckpoint json.RawMessage `json:"lastCheckpoint,omitempty"`
	// Run is the lost attempt's ExecuteToolInput.Run. Optional: absent in histories recorded
	// before it existed.
	Run string `json:"run,omitempty"`
}

// ReconcileToolOutput is ReconcileTool's result: whether the effect was found and, if so, the
// bounded content of the result the reconciled output becomes (as ExecuteToolOutput).
type ReconcileToolOutput struct {
	Found   bool   `json:"found"`
	Content string `json:"content,omitempty"`
	IsError bool   `json:"isError,omitempty"`
}

// ReconcileTool asks the tool's Reconcile whether the effect of the call with in.IdempotencyKey
// happened; toolcore.LastCheckpoint there returns in.LastCheckpoint. Found: the output is
// serialized like Execute's output. An effect Reconcile found failed (toolcore.EffectFailed) is
// found with the result Execute's error would have made (an error result; a genuine
// NonRecoverableToolError is a non-retryable wire.ErrTypeNonRecoverable, as from ExecuteTool). An
// error or a panic of Reconcile is a retryable ApplicationError of type
// wire.ErrTypeReconcileFailed (the workflow's retry policy bounds the attempts); a cancellation
// is returned as cancellation.
func (a *Activities) ReconcileTool(ctx context.Context, in ReconcileToolInput) (ReconcileToolOutput, error) {
	ctx, endDrain := a.Drain.track(ctx) // a graceful stop interrupts it as ToolInterrupted, reported at once
	defer endDrain()
	call, err := toolcore.NewToolCall(in.ToolCallID, in.ToolName, []byte("{}"))
	if err != nil {
		return ReconcileToolOutput{}, temporal.NewNonRetryableApplicationError(
			"invalid ReconcileTool input: "+toolcore.ErrorText(err), wire.ErrTypeInvalidInput, nil)
	}
	tool, ok := a.Registry.Get(in.ToolName)
	if !ok || !tool.CanReconcile() {
		return ReconcileToolOutput{}, temporal.NewNonRetryableApplicationError(
			"tool "+quote(in.ToolName)+" with a Reconcile is not registered on the worker of this task queue",
			wire.ErrTypeToolNotRegistered, nil)
	}
	sec, err := a.attemptSecrets(ctx, tool, nil, "", false)
	if err != nil {
		return ReconcileToolOutput{}, temporal.NewApplicationError("reconcile: "+toolcore.ErrorText(err), wire.ErrTypeReconcileFailed)
	}
	info := activity.GetInfo(ctx)
	hb := a.startHeartbeats(ctx, info, tool.Options().IdleHeartbeat)
	output, found, recErr := tool.Reconcile(toolcore.WithExecution(ctx, toolcore.Execution{
		ToolCallID:     in.ToolCallID,
		ToolName:       in.ToolName,
		Attempt:        int(info.Attempt),
		IdempotencyKey: in.IdempotencyKey,
		LastCheckpoint: in.LastCheckpoint,
		Run:            runOf(info, in.Run),
		Secrets:        sec,
	}), in.IdempotencyKey)
	hb.stop()
	effectErr, effectFailed := toolcore.EffectFailure(recErr)
	if err := stopped(ctx, recErr == nil || effectFailed); err != nil {
		return ReconcileToolOutput{}, err
	}
	switch {
	case effectFailed:
		output, found = nil, true
	case recErr != nil:
		return ReconcileToolOutput{}, temporal.NewApplicationError("reconcile: "+sec.RedactErrorText(recErr), wire.ErrTypeReconcileFailed)
	case !found:
		return ReconcileToolOutput{}, nil
	}
	result, err := toolcore.Complete(call, output, effectErr)
	if err != nil {
		// Only a genuine NonRecoverableToolError the effect failed with escapes Complete: the
		// call fails as if ExecuteTool had returned it.
		return ReconcileToolOutput{}, temporal.NewApplicationErrorWithOptions(sec.RedactErrorText(err), wire.ErrTypeNonRecoverable,
			temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign})
	}
	result = sec.RedactResult(call, result)
	return ReconcileToolOutput{Found: true, Content: result.Content(), IsError: result.IsError()}, nil
}
