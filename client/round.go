package client

import (
	"context"
	"errors"
	"github.com/toolgate/toolgate/wire"
	"sync"

	"github.com/toolgate/toolgate/toolcore"
)

// ExecuteRound runs the calls of one model turn durably, each as [Client.Execute] runs a call, and
// returns one outcome per call, in source order whatever the completion order (outcome i is call
// i's, linked by Index and CallID).
//
// Order (toolcore.PlanRound): calls run in parallel, except that a sequential call (all of them
// with toolcore.RoundOptions.Sequential, or the calls of a tool with toolcore.Options.Sequential) runs
// alone: the calls before it have finished before it starts, and the calls after it start once
// it has finished.
//
// What one call does to the others:
//   - A malformed call (the zero ToolCall, or an ID repeated within the round) is
//     OutcomeContractError, starts nothing, and changes nothing for the other calls.
//   - A fatal error (a genuine NonRecoverableToolError) stops the round: the calls running beside
//     it are left to finish and their outcomes returned (canceling them could leave an Unsafe
//     tool's effect unknown), the calls after it are not started (OutcomeNotStarted), and
//     ExecuteRound returns the fatal error (the first in source order) beside the outcomes: stop
//     the agent run.
//   - A call canceled by someone else is OutcomeCanceled; the others go on.
//   - A conflicting, terminated or timed-out call, or one the server could not be reached for, is
//     OutcomeFailed; the others go on.
//   - When ctx ends, the running calls are canceled and awaited like Execute does
//     (OutcomeCanceled, or their result if it came first), the calls not yet started are
//     OutcomeNotStarted, and ExecuteRound returns context.Cause(ctx) beside the outcomes.
//
// The returned slice always has len(calls) outcomes, even with an error.
func (c *Client) ExecuteRound(ctx context.Context, calls []toolcore.ToolCall, opts toolcore.RoundOptions) ([]toolcore.Outcome, error) {
	plan := toolcore.PlanRound(calls, opts.Tools, opts.Sequential)
	outcomes := make([]toolcore.Outcome, len(calls))
	for _, o := range plan.Invalid {
		outcomes[o.Index] = o
	}
	var stop error
	for _, step := range plan.Steps {
		if stop == nil && ctx.Err() != nil {
			stop = context.Cause(ctx)
		}
		if stop != nil {
			for _, i := range step {
				outcomes[i] = toolcore.NotStartedOutcome(i, calls[i], stop)
			}
			continue
		}
		var wg sync.WaitGroup
		for _, i := range step {
			wg.Go(func() {
				result, err := c.Execute(ctx, calls[i])
				outcomes[i] = outcomeOf(ctx, i, calls[i], result, err)
			})
		}
		wg.Wait()
		stop = toolcore.FatalStop(outcomes)
	}
	var ended error
	if ctx.Err() != nil {
		ended = context.Cause(ctx)
	}
	return outcomes, toolcore.RoundError(outcomes, ended)
}

// outcomeOf maps what Execute returned for call i to its outcome.
func outcomeOf(ctx context.Context, i int, call toolcore.ToolCall, result toolcore.Result, err error) toolcore.Outcome {
	o := toolcore.Outcome{Index: i, CallID: call.ID(), ToolName: call.Name(), Err: err}
	var contractErr *toolcore.ContractError
	switch {
	case err == nil:
		o.Kind, o.Result = toolcore.OutcomeResult, result
	case isFatal(err):
		o.Kind = toolcore.OutcomeFatal
	case errors.As(err, &contractErr):
		o.Kind = toolcore.OutcomeContractError
	case errors.Is(err, wire.ErrCallCanceled), ctx.Err() != nil && errors.Is(err, context.Cause(ctx)):
		o.Kind = toolcore.OutcomeCanceled
	default:
		o.Kind = toolcore.OutcomeFailed
	}
	return o
}

func isFatal(err error) bool {
	_, ok := toolcore.AsNonRecoverable(err)
	return ok
}
