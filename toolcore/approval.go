package toolcore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/safetext"
)

// NeedsApproval reports whether the call whose validated value is accepted must wait for a human
// decision: Options.RequireApproval, or the tool's ApprovalRule returning true. It fails safe: a
// rule that panics, or a value that does not decode, requires approval. Deterministic for a pure
// rule, so the durable path runs it in workflow code.
func (t Tool) NeedsApproval(accepted json.RawMessage) (needed bool) {
	if t.d == nil {
		return false
	}
	if t.d.options.RequireApproval {
		return true
	}
	if t.d.approvalRule == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			needed = true
		}
	}()
	needed, err := t.d.approvalRule(accepted)
	return needed || err != nil
}

// CallHash returns "sha256:<hex>" of the canonical call a reviewer approves: the bytes
//
//	{"arguments":<canonical arguments>,"definitionHash":"<t.DefinitionHash()>","name":"<call name>"}
//
// with the arguments as the snapshot holds them (sorted keys, no whitespace; see Arguments). A
// decision names this hash, so it cannot be applied to other arguments or another definition.
func CallHash(t Tool, call ToolCall) string {
	var b strings.Builder
	b.WriteString(`{"arguments":`)
	b.Write(call.Arguments().Raw())
	b.WriteString(`,"definitionHash":`)
	b.Write(appendQuoted(nil, t.DefinitionHash()))
	b.WriteString(`,"name":`)
	b.Write(appendQuoted(nil, call.Name()))
	b.WriteString(`}`)
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// MayDecide reports whether a reviewer with groups, named without an issuer (an operator's
// name), may decide the tool's approvals: MayDecideAs with no issuer.
func (t Tool) MayDecide(reviewer string, groups []string) bool {
	return t.MayDecideAs("", reviewer, groups)
}

// ReviewerIssuerSeparator parts an Options.Reviewers entry "<issuer>|<subject>" (an issuer URL
// never holds it unescaped).
const ReviewerIssuerSeparator = "|"

// MayDecideAs reports whether the reviewer whose identity is issuer and subject, with groups,
// may decide the tool's approvals (Options.Reviewers; true when it names nobody): an entry
// "<issuer>|<subject>" admits exactly that issuer and subject; a plain entry admits that subject
// with no issuer only, so a same-subject identity from another issuer is never admitted; an entry
// "group:<name>" admits any reviewer whose groups carry it.
func (t Tool) MayDecideAs(issuer, subject string, groups []string) bool {
	if t.d == nil || len(t.d.options.Reviewers) == 0 {
		return true
	}
	subject = strings.TrimSpace(subject)
	for _, r := range t.d.options.Reviewers {
		if g, ok := strings.CutPrefix(r, "group:"); ok {
			for _, have := range groups {
				if strings.TrimSpace(have) == g {
					return true
				}
			}
			continue
		}
		wantIssuer, wantSubject, scoped := strings.Cut(r, ReviewerIssuerSeparator)
		if !scoped {
			wantIssuer, wantSubject = "", r
		}
		if wantIssuer == issuer && wantSubject == subject {
			return true
		}
	}
	return false
}

// ApprovalRequest is what a reviewer sees before deciding.
type ApprovalRequest struct {
	Call ToolCall
	// CallHash is CallHash of the call; a decision must name it.
	CallHash string
	// DefinitionHash is the tool's DefinitionHash.
	DefinitionHash string
}

// ApprovalDecision is a reviewer's verdict on one ApprovalRequest.
type ApprovalDecision struct {
	Approved bool
	// Reviewer names who decided. Required.
	Reviewer string
	// Reason is shown to the model on rejection. Optional.
	Reason string
}

// Approver decides an ApprovalRequest in process; it may block until a human answers and should
// return when ctx ends (cancellation then wins). A decision without a reviewer is a rejection.
type Approver func(ctx context.Context, req ApprovalRequest) ApprovalDecision

// ApprovalRejectedResult is the TOOL_APPROVAL_REJECTED result: "rejected by <reviewer>" and,
// when given, ": <reason>"; control and invisible characters in both escaped (safetext), the
// message bounded like every error message.
func ApprovalRejectedResult(call ToolCall, reviewer, reason string) Result {
	who, _ := safetext.Escape(strings.TrimSpace(reviewer))
	msg := "rejected by " + who
	if r := strings.TrimSpace(reason); r != "" {
		r, _ = safetext.Escape(r)
		msg += ": " + r
	}
	return ErrorResult(call, CodeToolApprovalRejected, msg)
}

// ReviewerEditNote is the line a result of an edited approval starts with, so that the model
// reads that a reviewer, not it, chose the arguments the tool ran with:
//
//	reviewer "<reviewer>" approved the call with changed arguments: <canonical arguments>
func ReviewerEditNote(reviewer string, approved json.RawMessage) string {
	return "reviewer " + string(appendQuoted(nil, strings.TrimSpace(reviewer))) + " approved the call with changed arguments: " + string(approved)
}

// ReviewerEditedResult is res of a call a reviewer approved with edited arguments, in the stable
// shape the model reads: a success's content is ReviewerEditNote, a newline, then the tool's
// content; an error result keeps its code and its message starts with ReviewerEditNote and "; ".
func ReviewerEditedResult(call ToolCall, res Result, reviewer string, approved json.RawMessage) Result {
	note := ReviewerEditNote(reviewer, approved)
	if code := res.ErrorCode(); code != 0 {
		return ErrorResult(call, code, note+"; "+res.ErrorMessage())
	}
	if res.IsError() {
		return LinkContent(call, note+"\n"+res.Content(), true)
	}
	return SuccessResult(call, note+"\n"+res.Content())
}

// ApprovalExpiredResult is the TOOL_APPROVAL_EXPIRED result: no decision within timeout.
func ApprovalExpiredResult(call ToolCall, timeout time.Duration) Result {
	return ErrorResult(call, CodeToolApprovalExpired, "no approval decision within "+timeout.String()+"; the tool did not run")
}

// msgNoApprover is the TOOL_APPROVAL_REJECTED message of the in-process executor without an
// Approver: nobody can approve, so the tool does not run.
const msgNoApprover = "approval required and no approver is configured; the tool did not run"

// approveInProcess asks approve about call. done is true when the call must not run: with the
// rejection result, or with ctx's cause when cancellation won while the approver decided.
func approveInProcess(ctx context.Context, approve Approver, t Tool, call ToolCall) (res Result, done bool, err error) {
	if approve == nil {
		return ErrorResult(call, CodeToolApprovalRejected, msgNoApprover), true, nil
	}
	req := ApprovalRequest{Call: call, CallHash: CallHash(t, call), DefinitionHash: t.DefinitionHash()}
	dec := approve(ctx, req)
	if ctx.Err() != nil {
		return Result{}, true, context.Cause(ctx)
	}
	if strings.TrimSpace(dec.Reviewer) == "" {
		return ErrorResult(call, CodeToolApprovalRejected, "the approver returned a decision without a reviewer; the tool did not run"), true, nil
	}
	if !dec.Approved {
		return ApprovalRejectedResult(call, dec.Reviewer, dec.Reason), true, nil
	}
	return Result{}, false, nil
}
