package client

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// RegisterAwaitToolCall registers the AwaitToolCall activity (wire.AwaitToolCallName) on r,
// bound to c. Register it on every worker that runs parent workflows using
// workflows.ExecuteToolCall or workflows.ExecuteRound: they run it when the call they start
// already exists.
func (c *Client) RegisterAwaitToolCall(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(c.AwaitToolCall, activity.RegisterOptions{Name: wire.AwaitToolCallName})
}

// AwaitToolCall is the AwaitToolCall activity: it checks that the run with in.WorkflowID holds
// in.Call and waits for its outcome, heartbeating. Outcomes that are not a result are
// non-retryable ApplicationErrors of the wire.ErrType* types; failed reads are retryable.
// When the activity is canceled (the parent was canceled), it cancels the call and waits for it
// to close, as Execute does when its ctx ends.
func (c *Client) AwaitToolCall(ctx context.Context, in wire.AwaitToolCallInput) (toolcore.Result, error) {
	call, err := toolcore.ParseToolCall([]byte(in.Call))
	if err != nil {
		return toolcore.Result{}, temporal.NewNonRetryableApplicationError(err.Error(), wire.ErrTypeInvalidToolCall, nil)
	}
	canonical, err := call.MarshalJSON()
	if err != nil {
		return toolcore.Result{}, err
	}
	queue, err := c.sameCallQueue(ctx, in.WorkflowID, "", canonical)
	if err != nil {
		return toolcore.Result{}, awaitError(err)
	}
	run := c.sdk.GetWorkflow(ctx, in.WorkflowID, "")
	type outcome struct {
		result toolcore.Result
		err    error
	}
	done := make(chan outcome, 1)
	wctx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	go func() {
		r, err := c.wait(wctx, run)
		done <- outcome{r, err}
	}()
	interval := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if interval <= 0 {
		interval = time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case o := <-done:
			if ctx.Err() != nil {
				return toolcore.Result{}, c.cancelAndWait(ctx, in.WorkflowID, run.GetRunID(), queue)
			}
			if o.err != nil {
				return toolcore.Result{}, awaitError(o.err)
			}
			return o.result, nil
		case <-ticker.C:
			activity.RecordHeartbeat(ctx)
		}
	}
}

// awaitError turns what the client returns for a call into the activity's error.
func awaitError(err error) error {
	nonRetryable := func(errType string) error {
		return temporal.NewNonRetryableApplicationError(err.Error(), errType, nil)
	}
	var contractErr *toolcore.ContractError
	if fatal, ok := toolcore.AsNonRecoverable(err); ok {
		return temporal.NewNonRetryableApplicationError(fatal.Error(), wire.ErrTypeNonRecoverable, nil)
	}
	switch {
	case errors.As(err, &contractErr):
		return temporal.NewNonRetryableApplicationError(contractErr.Message, wire.ErrTypeInvalidToolCall, nil)
	case errors.Is(err, wire.ErrCallConflict):
		return nonRetryable(wire.ErrTypeCallConflict)
	case errors.Is(err, wire.ErrCallCanceled):
		return nonRetryable(wire.ErrTypeCallCanceled)
	case errors.Is(err, wire.ErrCallTerminated):
		return nonRetryable(wire.ErrTypeCallTerminated)
	case errors.Is(err, wire.ErrCallTimedOut):
		return nonRetryable(wire.ErrTypeCallTimedOut)
	case errors.Is(err, wire.ErrNotFound):
		return nonRetryable(wire.ErrTypeCallNotFound)
	}
	return err
}
