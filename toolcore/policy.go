package toolcore

import (
	"strings"
	"unicode/utf8"
)

// Policy results. A worker with a policy set (package policy) evaluates each call after validation
// and before approval or scheduling; a call it denies ends with the POLICY_DENIED result below and
// nothing runs.

// MaxPolicyReasonBytes bounds the reason a POLICY_DENIED result quotes (a policy's @reason): the
// reason is shown to the model and to humans.
const MaxPolicyReasonBytes = 512

// PolicyDeniedMessage is the POLICY_DENIED message of a call policy policyID denied for reason:
//
//	denied by policy "guests-no-write": guests may not write files; the tool did not run
//	no policy permits this call; the tool did not run
//
// An empty policyID is Cedar's default deny (no permit matched). The ID is cut to MaxNameBytes
// and the reason to MaxPolicyReasonBytes (invalid UTF-8 replaced), so the message is bounded
// whatever the set says; the same inputs always give the same text.
func PolicyDeniedMessage(policyID, reason string) string {
	msg := "no policy permits this call"
	if policyID != "" {
		msg = `denied by policy "` + cutName(policyID) + `"`
	}
	if reason = cutText(reason, MaxPolicyReasonBytes); reason != "" {
		msg += ": " + reason
	}
	return msg + "; the tool did not run"
}

// PolicyDeniedResult is the POLICY_DENIED result of call: PolicyDeniedMessage(policyID, reason).
func PolicyDeniedResult(call ToolCall, policyID, reason string) Result {
	return ErrorResult(call, CodePolicyDenied, PolicyDeniedMessage(policyID, reason))
}

// cutText makes s valid UTF-8 of at most limit bytes; a longer s ends with ErrorTextEllipsis.
func cutText(s string, limit int) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	if len(s) <= limit {
		return s
	}
	end := limit - len(ErrorTextEllipsis)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + ErrorTextEllipsis
}
