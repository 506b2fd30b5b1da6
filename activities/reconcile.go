package activities

import (
	"context"

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
}

// ReconcileToolOutput is ReconcileTool's result: whether the effect was found and, if so, the
// bounded content of the result the reconciled output becomes (as ExecuteToolOutput).
type ReconcileToolOutput struct {
	Found   bool   `json:"found"`
	Content string `json:"content,omitempty"`
	IsError bool   `json:"isError,omitempty"`
}

// ReconcileTool asks the tool's Reconcile whether the effect of the call with in.IdempotencyKey
// happened. Found: the output is serialized like Execute's output. An error or a panic of
// Reconcile is a retryable ApplicationError of type wire.ErrTypeReconcileFailed (the workflow's
// retry policy bounds the attempts); a cancellation is returned as cancellation.
func (a *Activities) ReconcileTool(ctx context.Context, in ReconcileToolInput) (ReconcileToolOutput, error) {
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
	info := activity.GetInfo(ctx)
	hb := a.startHeartbeats(ctx, info, tool.Options().IdleHeartbeat)
	output, found, recErr := tool.Reconcile(toolcore.WithExecution(ctx, toolcore.Execution{
		ToolCallID:     in.ToolCallID,
		ToolName:       in.ToolName,
		Attempt:        int(info.Attempt),
		IdempotencyKey: in.IdempotencyKey,
	}), in.IdempotencyKey)
	hb.stop()
	if err := stopped(ctx, recErr == nil); err != nil {
		return ReconcileToolOutput{}, err
	}
	if recErr != nil {
		return ReconcileToolOutput{}, temporal.NewApplicationError("reconcile: "+toolcore.ErrorText(recErr), wire.ErrTypeReconcileFailed)
	}
	if !found {
		return ReconcileToolOutput{}, nil
	}
	result, err := toolcore.Complete(call, output, nil)
	if err != nil { // unreachable: Complete lets only a tool's fatal error escape
		return ReconcileToolOutput{}, temporal.NewNonRetryableApplicationError(toolcore.ErrorText(err), wire.ErrTypeNonRecoverable, nil)
	}
	return ReconcileToolOutput{Found: true, Content: result.Content(), IsError: result.IsError()}, nil
}
