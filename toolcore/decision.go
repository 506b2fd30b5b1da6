package toolcore

// Decision is a validator's verdict: Accept(value) or Reject(reason). The zero value is malformed
// (TOOL_VALIDATION_FAILED).
type Decision[A any] struct {
	value  A
	reason string
	kind   decisionKind
}

type decisionKind uint8

const (
	decisionMalformed decisionKind = iota
	decisionAccept
	decisionReject
)

// Accept continues with value.
func Accept[A any](value A) Decision[A] { return Decision[A]{value: value, kind: decisionAccept} }

// Reject refuses the arguments; reason reaches the model verbatim as TOOL_ARGUMENTS_INVALID. A
// blank reason is TOOL_VALIDATION_FAILED.
func Reject[A any](reason string) Decision[A] {
	return Decision[A]{reason: reason, kind: decisionReject}
}
