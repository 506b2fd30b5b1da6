package workflows

import (
	"errors"
	"github.com/toolgate/toolgate/wire"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
)

// ExecuteRound runs the calls of one model turn from workflow code, each with ExecuteToolCall
// (one child workflow per call), and returns one outcome per call in source order. Order and
// what one call does to the others are those of client.(*Client).ExecuteRound: calls run in
// parallel except sequential ones, which run alone; a malformed call is OutcomeContractError and
// starts nothing; a fatal error lets the calls running beside it finish, starts none after it,
// and is returned (the first in source order) beside the outcomes; when ctx is canceled the
// running children are canceled and awaited (wire.OutcomeCanceled), the rest OutcomeNotStarted, and
// the cancellation is returned.
//
// Determinism: the children of one step are started in source order, in one workflow task;
// outcomes are written by index, so completion order changes nothing the workflow returns.
func ExecuteRound(ctx workflow.Context, calls []toolcore.ToolCall, opts toolcore.RoundOptions) ([]toolcore.Outcome, error) {
	return executeRound(ctx, calls, opts, ExecuteToolCall)
}

// executeRound runs a round with exec running each call (ExecuteToolCall or Inline's).
func executeRound(ctx workflow.Context, calls []toolcore.ToolCall, opts toolcore.RoundOptions,
	exec func(workflow.Context, toolcore.ToolCall) (toolcore.Result, error)) ([]toolcore.Outcome, error) {
	plan := toolcore.PlanRound(calls, opts.Tools, opts.Sequential)
	ctx = withRoundTools(ctx, opts.Tools) // a budget's costs of the round's child calls
	outcomes := make([]toolcore.Outcome, len(calls))
	for _, o := range plan.Invalid {
		outcomes[o.Index] = o
	}
	var stop error
	for _, step := range plan.Steps {
		if stop == nil && ctx.Err() != nil {
			stop = ctx.Err()
		}
		if stop != nil {
			for _, i := range step {
				outcomes[i] = toolcore.NotStartedOutcome(i, calls[i], stop)
			}
			continue
		}
		wg := workflow.NewWaitGroup(ctx)
		for _, i := range step {
			wg.Go(ctx, func(ctx workflow.Context) {
				result, err := exec(ctx, calls[i])
				outcomes[i] = outcomeOf(ctx, i, calls[i], result, err)
			})
		}
		wg.Wait(ctx)
		stop = toolcore.FatalStop(outcomes)
	}
	var ended error
	if ctx.Err() != nil {
		ended = temporal.NewCanceledError()
	}
	return outcomes, fatalError(toolcore.RoundError(outcomes, ended))
}

// outcomeOf maps what ExecuteToolCall returned for call i to its outcome.
func outcomeOf(ctx workflow.Context, i int, call toolcore.ToolCall, result toolcore.Result, err error) toolcore.Outcome {
	o := toolcore.Outcome{Index: i, CallID: call.ID(), ToolName: call.Name(), Err: err}
	var contractErr *toolcore.ContractError
	_, fatal := toolcore.AsNonRecoverable(err)
	switch {
	case err == nil:
		o.Kind, o.Result = toolcore.OutcomeResult, result
	case fatal:
		o.Kind = toolcore.OutcomeFatal
	case errors.As(err, &contractErr):
		o.Kind = toolcore.OutcomeContractError
	case errors.Is(err, wire.ErrCallCanceled), ctx.Err() != nil && temporal.IsCanceledError(err):
		o.Kind = toolcore.OutcomeCanceled
	default:
		o.Kind = toolcore.OutcomeFailed
	}
	return o
}
