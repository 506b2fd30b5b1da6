package toolcore

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ContractErrorCode says which rule of the contract a caller broke. The zero value is invalid.
type ContractErrorCode uint8

const (
	_ ContractErrorCode = iota
	// CodeInvalidToolDefinition: a definition with a blank or malformed name or description, a nil
	// function, or options out of range.
	CodeInvalidToolDefinition
	// CodeInvalidToolBatch: a batch holding a zero (nil) Tool.
	CodeInvalidToolBatch
	// CodeDuplicateToolName: a name already registered, or twice in one batch.
	CodeDuplicateToolName
	// CodeInvalidToolCall: a tool call that is not the wire shape, or beyond the documented bounds.
	CodeInvalidToolCall
)

var contractErrorCodeNames = [...]string{
	CodeInvalidToolDefinition: "INVALID_TOOL_DEFINITION",
	CodeInvalidToolBatch:      "INVALID_TOOL_BATCH",
	CodeDuplicateToolName:     "DUPLICATE_TOOL_NAME",
	CodeInvalidToolCall:       "INVALID_TOOL_CALL",
}

// String returns the wire name, e.g. "INVALID_TOOL_CALL"; an invalid code is
// "ContractErrorCode(<n>)".
func (c ContractErrorCode) String() string {
	if int(c) < len(contractErrorCodeNames) && contractErrorCodeNames[c] != "" {
		return contractErrorCodeNames[c]
	}
	return fmt.Sprintf("ContractErrorCode(%d)", uint8(c))
}

// ContractError is a broken contract rule, returned as a Go error (never as a result). Only
// toolcore mints them; one returned by tool code is an ordinary, recoverable tool error.
type ContractError struct {
	Code    ContractErrorCode
	Message string
}

// Error returns "<CODE>: <message>", e.g. `INVALID_TOOL_CALL: "id" must be a non-blank string`.
func (e *ContractError) Error() string {
	if e == nil {
		return "<nil ContractError>"
	}
	if e.Message == "" {
		return e.Code.String()
	}
	return e.Code.String() + ": " + e.Message
}

// contractErrorf mints a *ContractError.
func contractErrorf(code ContractErrorCode, format string, args ...any) *ContractError {
	return &ContractError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode is a model-visible, recoverable result error code. The zero value is invalid.
type ErrorCode uint8

const (
	_                                 ErrorCode = iota
	CodeToolNotFound                            // TOOL_NOT_FOUND
	CodeToolArgumentsInvalid                    // TOOL_ARGUMENTS_INVALID
	CodeToolValidationFailed                    // TOOL_VALIDATION_FAILED
	CodeToolExecutionFailed                     // TOOL_EXECUTION_FAILED
	CodeToolOutputSerializationFailed           // TOOL_OUTPUT_SERIALIZATION_FAILED
	CodeToolApprovalRejected                    // TOOL_APPROVAL_REJECTED: a reviewer rejected the call
	CodeToolApprovalExpired                     // TOOL_APPROVAL_EXPIRED: no decision within the approval timeout
	CodeBudgetExceeded                          // BUDGET_EXCEEDED: the run's or session's budget refused the call; nothing ran
	CodePolicyDenied                            // POLICY_DENIED: a policy forbids the call (policy.go); nothing ran
)

var errorCodeNames = [...]string{
	CodeToolNotFound:                  "TOOL_NOT_FOUND",
	CodeToolArgumentsInvalid:          "TOOL_ARGUMENTS_INVALID",
	CodeToolValidationFailed:          "TOOL_VALIDATION_FAILED",
	CodeToolExecutionFailed:           "TOOL_EXECUTION_FAILED",
	CodeToolOutputSerializationFailed: "TOOL_OUTPUT_SERIALIZATION_FAILED",
	CodeToolApprovalRejected:          "TOOL_APPROVAL_REJECTED",
	CodeToolApprovalExpired:           "TOOL_APPROVAL_EXPIRED",
	CodeBudgetExceeded:                "BUDGET_EXCEEDED",
	CodePolicyDenied:                  "POLICY_DENIED",
}

// String returns the wire name, e.g. "TOOL_NOT_FOUND"; an invalid code is "ErrorCode(<n>)".
func (c ErrorCode) String() string {
	if c.valid() {
		return errorCodeNames[c]
	}
	return fmt.Sprintf("ErrorCode(%d)", uint8(c))
}

func (c ErrorCode) valid() bool { return int(c) < len(errorCodeNames) && errorCodeNames[c] != "" }

// parseErrorCode is the inverse of ErrorCode.String for valid codes; 0 otherwise.
func parseErrorCode(s string) ErrorCode {
	for c, name := range errorCodeNames {
		if name != "" && name == s {
			return ErrorCode(c)
		}
	}
	return 0
}

// NonRecoverableToolError is an authenticated invariant or programmer failure that must stop the
// agent run. Only its constructors mint a genuine one; a struct literal of this type, or any
// look-alike, is an ordinary recoverable error. The brand is a safety rail against accidents, not a
// security boundary: any code in the process can call the constructor.
type NonRecoverableToolError struct {
	message string
	cause   error
	genuine bool
}

// defaultNonRecoverableText is the text of a fatal error minted with a blank message.
const defaultNonRecoverableText = "non-recoverable tool error"

// NewNonRecoverableToolError mints a genuine fatal error with message.
func NewNonRecoverableToolError(message string) *NonRecoverableToolError {
	return &NonRecoverableToolError{message: message, genuine: true}
}

// WrapNonRecoverable mints a genuine fatal error with message that wraps cause.
func WrapNonRecoverable(cause error, message string) *NonRecoverableToolError {
	return &NonRecoverableToolError{message: message, cause: cause, genuine: true}
}

// Error returns the message, followed by ": " and the cause's text when there is a cause. A blank
// message reads "non-recoverable tool error". A panic in the cause's Error is recovered.
func (e *NonRecoverableToolError) Error() string {
	if e == nil {
		return defaultNonRecoverableText
	}
	msg := e.message
	if strings.TrimSpace(msg) == "" {
		msg = defaultNonRecoverableText
	}
	if e.cause == nil {
		return msg
	}
	return msg + ": " + ErrorText(e.cause)
}

// Unwrap returns the cause, or nil.
func (e *NonRecoverableToolError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.cause
}

// maxChainErrors bounds the errors AsNonRecoverable and IsTransient visit, so a cyclic or endless
// Unwrap chain cannot hang the executor.
const maxChainErrors = 1024

// AsNonRecoverable finds a genuine *NonRecoverableToolError anywhere in err's chain (errors.As
// semantics, including joined errors). Look-alikes are not found.
//
// The walk is pre-order depth-first like errors.As, so a look-alike in front of a genuine error
// does not hide it. It honours As(any) bool methods, recovers panics in Unwrap and As methods
// (a panicking branch is skipped), and visits at most 1024 errors.
func AsNonRecoverable(err error) (*NonRecoverableToolError, bool) {
	var found *NonRecoverableToolError
	walkChain(err, func(e error) bool {
		if f, ok := e.(*NonRecoverableToolError); ok && f != nil && f.genuine {
			found = f
			return true
		}
		if f := callAs(e); f != nil && f.genuine {
			found = f
			return true
		}
		return false
	})
	return found, found != nil
}

// callAs asks e's As method (if any) for a *NonRecoverableToolError, recovering a panic.
func callAs(e error) (found *NonRecoverableToolError) {
	a, ok := e.(interface{ As(any) bool })
	if !ok {
		return nil
	}
	defer func() {
		if recover() != nil {
			found = nil
		}
	}()
	var target *NonRecoverableToolError
	if a.As(&target) {
		return target
	}
	return nil
}

// walkChain visits err and everything it wraps in pre-order, until visit returns true. It recovers
// panics in Unwrap methods and stops after maxChainErrors errors.
func walkChain(err error, visit func(error) bool) bool {
	budget := maxChainErrors
	var walk func(error) bool
	walk = func(e error) bool {
		for e != nil {
			if budget <= 0 {
				return false
			}
			budget--
			if visit(e) {
				return true
			}
			many, single := safeUnwrap(e)
			for _, m := range many {
				if walk(m) {
					return true
				}
			}
			e = single
		}
		return false
	}
	return walk(err)
}

// safeUnwrap calls e's Unwrap method (either form), recovering a panic as "wraps nothing".
func safeUnwrap(e error) (many []error, single error) {
	defer func() {
		if recover() != nil {
			many, single = nil, nil
		}
	}()
	switch u := e.(type) {
	case interface{ Unwrap() error }:
		return nil, u.Unwrap()
	case interface{ Unwrap() []error }:
		return u.Unwrap(), nil
	}
	return nil, nil
}

// transientError marks an error as transient (see Transient); delay > 0 is a RetryAfter request.
type transientError struct {
	err   error
	delay time.Duration
}

func (e *transientError) Error() string { return ErrorText(e.err) }
func (e *transientError) Unwrap() error { return e.err }

// Transient marks err as transient: the durable path retries it for ReadOnly and Idempotent tools
// (bounded by MaxAttempts); for Unsafe tools, and in process, it is an ordinary error. The text
// is err's; Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err}
}

// MaxRetryAfter bounds the delay RetryAfter asks for: a longer one is cut to it.
const MaxRetryAfter = 10 * time.Minute

// RetryAfter marks err as transient, as Transient does, and asks that the next attempt start no
// sooner than d after this one failed (an API that answered "429, retry after 30 s"). The durable
// path schedules the next attempt after d, cut to MaxRetryAfter, instead of the backoff; as with
// Transient, only for ReadOnly and Idempotent tools with an attempt left: for an Unsafe tool (whose
// effect may have happened) and on the last attempt it is an ordinary failure, and in process it
// is an ordinary error. d <= 0 is Transient(err); RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err, delay: min(max(d, 0), MaxRetryAfter)}
}

// RetryDelay returns the delay of the first RetryAfter mark in err's chain (same walk as
// AsNonRecoverable), and false when the chain holds none.
func RetryDelay(err error) (time.Duration, bool) {
	var delay time.Duration
	found := walkChain(err, func(e error) bool {
		if t, ok := e.(*transientError); ok && t.delay > 0 {
			delay = t.delay
			return true
		}
		return false
	})
	return delay, found
}

// IsTransient reports whether err's chain holds an error marked by Transient (same walk as
// AsNonRecoverable).
func IsTransient(err error) bool {
	return walkChain(err, func(e error) bool {
		_, ok := e.(*transientError)
		return ok
	})
}

// MaxErrorTextCodePoints bounds a model-visible error message (ErrorText, rejection reasons,
// panic texts) in Unicode code points, including the ErrorTextEllipsis that marks a cut. It is a
// quarter of MaxContentCodePoints, so the message fits the error content even after JSON
// escaping of ordinary text.
const MaxErrorTextCodePoints = 1024

// ErrorTextEllipsis ends a message cut at MaxErrorTextCodePoints.
const ErrorTextEllipsis = "…"

// DefaultErrorText replaces a blank error message.
const DefaultErrorText = "tool failed without a message"

// errorTextPanicked is the text of an error whose Error method panicked.
const errorTextPanicked = "tool failed; its error message could not be read (Error panicked)"

// ErrorText returns err.Error() safely for a model-visible message: a panic in Error() is
// recovered, invalid UTF-8 replaced, the length bounded, and a blank text replaced by a default.
//
// Precisely: nil and blank texts are DefaultErrorText; a panicking Error (including a nil pointer
// receiver) gives a fixed text that names the panic; each invalid UTF-8 byte becomes U+FFFD; texts
// longer than MaxErrorTextCodePoints are cut and end with ErrorTextEllipsis.
func ErrorText(err error) string {
	if err == nil {
		return DefaultErrorText
	}
	text, ok := safeErrorString(err)
	if !ok {
		return errorTextPanicked
	}
	return boundText(text, DefaultErrorText)
}

// safeErrorString calls err.Error(), recovering a panic.
func safeErrorString(err error) (text string, ok bool) {
	defer func() {
		if recover() != nil {
			text, ok = "", false
		}
	}()
	return err.Error(), true
}

// boundText makes s a model-visible message: invalid UTF-8 bytes become U+FFFD, the text is cut
// to MaxErrorTextCodePoints (ending with ErrorTextEllipsis), and a blank s becomes blank.
// Work is O(MaxErrorTextCodePoints), whatever len(s).
func boundText(s, blank string) string {
	if strings.TrimSpace(s) == "" {
		// TrimSpace is O(len) only over leading/trailing space; a long non-blank s stops early.
		return blank
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		if n == MaxErrorTextCodePoints {
			return cutWithEllipsis(b.String())
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
		n++
	}
	return b.String()
}

// cutWithEllipsis drops the last code points of s (which holds exactly MaxErrorTextCodePoints)
// so that s plus ErrorTextEllipsis holds exactly MaxErrorTextCodePoints.
func cutWithEllipsis(s string) string {
	drop := utf8.RuneCountInString(ErrorTextEllipsis)
	for ; drop > 0; drop-- {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s + ErrorTextEllipsis
}
