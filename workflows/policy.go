package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Policy in workflow code (docs/policy.md). The decision of a call is made once, by the set the
// worker holds when the call is validated, and recorded: a version marker (change ID
// wire.ChangePolicy + "/" + the call ID) gates a MutableSideEffect marker of the same ID holding the
// wire.PolicyDecision. Replay reads the recorded decision and never evaluates, whatever set (or
// none) the replaying worker holds:
//
//   - The SDK leaves version and mutable-side-effect markers out of its determinism check, so a
//     history with the markers replays on a worker without a policy, and one without them on a
//     worker with one.
//   - A worker without a policy adds nothing to a new call's history; while replaying it still
//     asks GetVersion, which answers from the history: version 1 where a decision was recorded
//     (its marker is then read back), DefaultVersion where none was (histories recorded before
//     a policy existed, or by a worker without one: the call was allowed). So MutableSideEffect
//     is never asked where its marker is missing.
//   - The change ID is per call, not per workflow: an agent run whose worker gained a policy
//     midway has its earlier inline calls unrecorded and its later ones recorded, and a single
//     change ID would answer DefaultVersion for all of them on replay once the first one had.
//     It names the call by its ID (unique in a ToolCallWorkflow and among an agent run's
//     calls), not by the workflow ID, which a replayer may not know.

type policyKey struct{}

// WithPolicy returns ctx carrying src: the calls an agent workflow runs inline with ctx
// (Inline.ExecuteToolCall, Inline.ExecuteRound) are decided by it as a ToolCallWorkflow's are
// by Workflows.Policy, and their decisions recorded in the agent run's history. Give it the
// same Source as the worker's (worker.Options.Policy). Calls that run as child ToolCallWorkflows
// (ExecuteToolCall, ExecuteRound, approval-gated inline calls) are decided by their worker's
// policy instead: an inline call src holds for approval runs as such a child, and waits only if
// that worker's policy (or its tool) requires approval too, so src must be the worker's own
// Source. A nil src decides nothing.
func WithPolicy(ctx workflow.Context, src *policy.Source) workflow.Context {
	return workflow.WithValue(ctx, policyKey{}, src)
}

// policySource is the Source that decides the calls of ctx: w.Policy, else WithPolicy's.
func (w *Workflows) policySource(ctx workflow.Context) *policy.Source {
	if w.Policy != nil {
		return w.Policy
	}
	src, _ := ctx.Value(policyKey{}).(*policy.Source)
	return src
}

// decidePolicy returns the policy decision of the validated call (accepted) of tool, recorded
// in history; the zero decision (allow) when the worker has no
// policy and the history recorded none.
func (w *Workflows) decidePolicy(ctx workflow.Context, call toolcore.ToolCall, tool toolcore.Tool, accepted json.RawMessage) wire.PolicyDecision {
	src := w.policySource(ctx)
	if src.Current() == nil && !workflow.IsReplaying(ctx) {
		return wire.PolicyDecision{}
	}
	id := wire.ChangePolicy + "/" + call.ID()
	if workflow.GetVersion(ctx, id, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return wire.PolicyDecision{}
	}
	principal := principalFrom(ctx)
	var calls *policy.CallCounts
	if budgetFrom(ctx) != nil {
		// An agent run's call counts, this call included (it was charged before validation).
		total, perTool := RunCallCounts(ctx)
		calls = &policy.CallCounts{Total: int64(total), Tool: int64(perTool[call.Name()])}
	}
	var d wire.PolicyDecision
	// The function runs once, when the call is first decided: its value is recorded, and replay
	// reads it back without calling it. Evaluation is pure (package policy); the atomic read of
	// the set in force is what MutableSideEffect is for.
	err := workflow.MutableSideEffect(ctx, id, func(workflow.Context) any {
		//workflowcheck:ignore
		d, _ := src.Decide(policy.Request{Principal: principal, Tool: policy.ToolOf(tool), Arguments: accepted, Calls: calls})
		return d
	}, func(a, b any) bool {
		x, _ := a.(wire.PolicyDecision)
		y, _ := b.(wire.PolicyDecision)
		return x == y
	}).Get(&d)
	if err != nil {
		// A recorded value that does not decode: the call must not run unchecked.
		workflow.GetLogger(ctx).Error("Policy decision does not decode", "toolCallId", call.ID(), "error", err)
		return wire.PolicyDecision{Effect: wire.PolicyDeny, Reason: "the recorded policy decision does not decode"}
	}
	if d.Effect != wire.PolicyAllow {
		workflow.GetLogger(ctx).Info("Policy decision", "toolCallId", call.ID(), "toolName", call.Name(),
			"effect", d.Effect, "enforced", d.Enforced(), "policyId", d.PolicyID, "policyHash", d.Hash, "logOnly", d.LogOnly,
			"principal", logKey(principal))
	}
	return d
}

// logKey is p's Key for a log line, "" for none.
func logKey(p *toolcore.Principal) string {
	if p == nil {
		return ""
	}
	return p.Key()
}
