package wire

import (
	"encoding/json"
	"time"
)

// Wire names of approvals: a call whose tool requires approval waits, after validation and
// before any effect, for one of these Workflow Updates.
const (
	// UpdateApprove approves the waiting call; its argument is an ApprovalDecision.
	UpdateApprove = "approve"
	// UpdateReject rejects the waiting call (TOOL_APPROVAL_REJECTED with the reason); its
	// argument is an ApprovalDecision.
	UpdateReject = "reject"
	// QueryApproval returns the call's ApprovalState.
	QueryApproval = "approval"
	// OutcomeAwaitingApproval is the ToolOutcome search attribute value while a call waits for a
	// decision; it is unset when the decision arrives.
	OutcomeAwaitingApproval = "awaiting_approval"
	// ChangeApproval is the workflow.GetVersion change ID of the approval step: histories
	// recorded before it replay without waiting.
	ChangeApproval = "toolgate-approval"
)

// Decisions of ApprovalRecord.Decision.
const (
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
)

// ApprovalDecision is the argument of UpdateApprove and UpdateReject. The update validator
// refuses it unless CallHash is the waiting call's hash (toolcore.CallHash), Reviewer is not
// blank, the reviewer (Issuer and Reviewer) may decide the tool's calls (its Options.Reviewers),
// and the call still waits.
type ApprovalDecision struct {
	// CallHash is "sha256:<hex>" of the exact call being decided.
	CallHash string `json:"callHash"`
	// Reviewer names who decided (at most MaxReviewerBytes): the subject of their identity.
	Reviewer string `json:"reviewer"`
	// Issuer is who vouches for Reviewer, as a principal's issuer (the OAuth token's iss): the
	// reviewer's identity is Issuer and Reviewer together, so a Reviewers entry
	// "<issuer>|<subject>" admits only a decision naming both, and a plain entry only one
	// without an Issuer (at most MaxReviewerBytes). toolgate mcp sets it to the caller's token
	// issuer. Optional: default none (an operator's name).
	Issuer string `json:"issuer,omitempty"`
	// Reason is shown to the model on rejection. Optional.
	Reason string `json:"reason,omitempty"`
	// Arguments, on approve only, are the arguments the reviewer approves instead of the call's
	// (an edit): snapshotted and validated like the original, and the tool runs with them; the
	// approval rule is not asked again. Optional: absent, the call runs as it is.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Groups are the reviewer's groups, matched against the tool's Options.Reviewers entries
	// "group:<name>". Asserted by the caller like Reviewer. Optional.
	Groups []string `json:"groups,omitempty"`
}

// Bounds of an ApprovalDecision (bytes); the validator refuses longer values.
const (
	MaxReviewerBytes = 256
	MaxReasonBytes   = 4096
)

// ApprovalRecord is the result of an accepted decision, recorded in history: who, when
// (workflow time), what and the hash of the call decided.
type ApprovalRecord struct {
	Decision string `json:"decision"`
	Reviewer string `json:"reviewer"`
	// Issuer is the decision's Issuer (absent in decisions recorded before it existed, and in
	// those that named none).
	Issuer    string    `json:"issuer,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	CallHash  string    `json:"callHash"`
	DecidedAt time.Time `json:"decidedAt"`
	// Arguments and ApprovedCallHash are set when the reviewer approved edited arguments: the
	// canonical arguments the tool runs with and their call hash. CallHash stays the hash of the
	// call as the model made it (whose arguments are the workflow's input).
	Arguments        json.RawMessage `json:"arguments,omitempty"`
	ApprovedCallHash string          `json:"approvedCallHash,omitempty"`
}

// ApprovalState is the result of QueryApproval: the call a reviewer decides and whether it is
// still waiting.
type ApprovalState struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Arguments  json.RawMessage `json:"arguments"`
	// CallHash is what a decision must name; DefinitionHash is the tool's definition hash.
	CallHash       string `json:"callHash"`
	DefinitionHash string `json:"definitionHash"`
	// Since is when the call started waiting, Deadline when it expires without a decision
	// (workflow time). Since is zero for calls that started waiting before it existed.
	Since    time.Time `json:"since,omitzero"`
	Deadline time.Time `json:"deadline"`
	// Waiting is true until a decision, expiry or cancellation.
	Waiting bool `json:"waiting"`
	// Decision is the accepted decision, if any.
	Decision *ApprovalRecord `json:"decision,omitempty"`
	// Policy is the policy decision that asked for this approval (an @effect("approve") policy),
	// absent when the tool's own approval rule did.
	Policy *PolicyDecision `json:"policy,omitempty"`
}
