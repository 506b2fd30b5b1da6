package wire

// Policy decisions (docs/policy.md, docs/contract.md "Policy"): a worker configured with a Cedar
// policy set evaluates each call after validation and before approval or scheduling, and records
// the decision in the call's history so replay, and anyone reading the history, sees the decision
// that was made whatever set the replaying worker holds.
const (
	// ChangePolicy is the workflow.GetVersion change ID prefix of the policy step. The change ID
	// of one call is ChangePolicy + "/" + its call ID (unique in a ToolCallWorkflow and among an
	// agent run's calls; the workflow ID is not used, since a replayer may not know it), and so
	// is the ID of the MutableSideEffect marker holding its PolicyDecision: each call of an agent
	// run is pinned on its own, so a run whose worker gained a policy midway replays every call
	// as it was decided.
	ChangePolicy = "toolgate-policy"
)

// Effects of PolicyDecision.Effect.
const (
	// PolicyAllow: the call runs (as it would without a policy).
	PolicyAllow = "allow"
	// PolicyDeny: the call ends POLICY_DENIED and nothing runs.
	PolicyDeny = "deny"
	// PolicyApprove: the call waits for a human decision, as a tool with RequireApproval does.
	PolicyApprove = "approve"
)

// PolicyDecision is what the policy step records for one call (a MutableSideEffect marker whose
// ID is ChangePolicy + "/" + the call ID). It encodes to
// {"hash","effect","policyId"?,"reason"?,"logOnly"?}.
type PolicyDecision struct {
	// Hash identifies the policy set that decided: "sha256:<hex>" of the policy file's bytes.
	Hash string `json:"hash"`
	// Effect is PolicyAllow, PolicyDeny or PolicyApprove: what the set decided, enforced unless
	// LogOnly.
	Effect string `json:"effect"`
	// PolicyID names the deciding policy (its @id annotation, else "policy<n>" by position) of a
	// deny or approve; empty for an allow and for a deny because no policy permits the call.
	PolicyID string `json:"policyId,omitempty"`
	// Reason is the deciding policy's @reason annotation (bounded, shown to the model), or
	// toolgate's own text when no policy gave one.
	Reason string `json:"reason,omitempty"`
	// LogOnly: the worker ran in log-only mode, so the decision was logged and recorded but not
	// enforced (the call ran as allowed).
	LogOnly bool `json:"logOnly,omitempty"`
}

// Enforced returns the effect the call is subject to: Effect, or PolicyAllow when LogOnly.
func (d PolicyDecision) Enforced() string {
	if d.LogOnly || d.Effect == "" {
		return PolicyAllow
	}
	return d.Effect
}
