package mcp

import (
	"context"
	"errors"

	"github.com/toolgate/toolgate/toolcore"
)

// reconcileTask is the Reconcile of an Unsafe remote tool called as a task (Definition.Reconcile,
// run by ReconcileTool after the tool's only attempt ended without a verdict). The lost
// attempt's checkpoint (toolcore.LastCheckpoint) names the remote task it created: the task is
// polled like the attempt would have (awaitTask: the same intervals, and a canceled call sends
// tasks/cancel) to its end, and nothing is called again.
//
//   - no checkpoint (the attempt was lost before the task existed: the tools/call may or may not
//     have created one), or a remote that no longer knows the task: not found;
//   - the task completed: found, with the output its result makes (Remote.output);
//   - it failed, was cancelled, ended isError, or the remote answered a poll with another
//     JSON-RPC error: found failed (toolcore.EffectFailed), the error result the attempt would
//     have returned;
//   - no answer (transport failures), an undecodable checkpoint: an error, which ReconcileTool
//     retries.
func (r *Remote) reconcileTask(ctx context.Context) (output any, found bool, err error) {
	var cp remoteTaskCheckpoint
	if ok, err := toolcore.LastCheckpoint(ctx, &cp); err != nil || !ok || cp.RemoteTaskID == "" {
		return nil, false, err
	}
	res, err := r.awaitTask(ctx, cp.RemoteTaskID, nil)
	var gone remoteTaskGone
	switch {
	case errors.As(err, &gone):
		return nil, false, nil
	case err != nil && (ctx.Err() != nil || toolcore.IsTransient(err)):
		return nil, false, err
	case err != nil:
		return nil, true, toolcore.EffectFailed(err)
	}
	output, err = r.output(res)
	if err != nil {
		return nil, true, toolcore.EffectFailed(err)
	}
	return output, true, nil
}
