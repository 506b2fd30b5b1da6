package toolcore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

func TestContractErrorCodeString(t *testing.T) {
	tests := []struct {
		give toolcore.ContractErrorCode
		want string
	}{
		{give: toolcore.CodeInvalidToolDefinition, want: "INVALID_TOOL_DEFINITION"},
		{give: toolcore.CodeInvalidToolBatch, want: "INVALID_TOOL_BATCH"},
		{give: toolcore.CodeDuplicateToolName, want: "DUPLICATE_TOOL_NAME"},
		{give: toolcore.CodeInvalidToolCall, want: "INVALID_TOOL_CALL"},
		{give: 0, want: "ContractErrorCode(0)"},
		{give: 99, want: "ContractErrorCode(99)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.String())
		})
	}
}

func TestErrorCodeString(t *testing.T) {
	tests := []struct {
		give toolcore.ErrorCode
		want string
	}{
		{give: toolcore.CodeToolNotFound, want: "TOOL_NOT_FOUND"},
		{give: toolcore.CodeToolArgumentsInvalid, want: "TOOL_ARGUMENTS_INVALID"},
		{give: toolcore.CodeToolValidationFailed, want: "TOOL_VALIDATION_FAILED"},
		{give: toolcore.CodeToolExecutionFailed, want: "TOOL_EXECUTION_FAILED"},
		{give: toolcore.CodeToolOutputSerializationFailed, want: "TOOL_OUTPUT_SERIALIZATION_FAILED"},
		{give: toolcore.CodeToolApprovalRejected, want: "TOOL_APPROVAL_REJECTED"},
		{give: toolcore.CodeToolApprovalExpired, want: "TOOL_APPROVAL_EXPIRED"},
		{give: toolcore.CodeBudgetExceeded, want: "BUDGET_EXCEEDED"},
		{give: 0, want: "ErrorCode(0)"},
		{give: 99, want: "ErrorCode(99)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.String())
		})
	}
}

func TestContractErrorError(t *testing.T) {
	tests := []struct {
		name string
		give *toolcore.ContractError
		want string
	}{
		{name: "code and message", give: &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: `"id" must be a non-blank string`}, want: `INVALID_TOOL_CALL: "id" must be a non-blank string`},
		{name: "no message", give: &toolcore.ContractError{Code: toolcore.CodeDuplicateToolName}, want: "DUPLICATE_TOOL_NAME"},
		{name: "nil", give: nil, want: "<nil ContractError>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.Error())
		})
	}
}

func TestNonRecoverableToolErrorText(t *testing.T) {
	cause := errors.New("disk gone")
	tests := []struct {
		name      string
		give      *toolcore.NonRecoverableToolError
		want      string
		wantCause error
	}{
		{name: "message", give: toolcore.NewNonRecoverableToolError("ledger corrupted"), want: "ledger corrupted"},
		{name: "wrapping", give: toolcore.WrapNonRecoverable(cause, "state lost"), want: "state lost: disk gone", wantCause: cause},
		{name: "blank message", give: toolcore.NewNonRecoverableToolError(" "), want: "non-recoverable tool error"},
		{name: "struct literal", give: &toolcore.NonRecoverableToolError{}, want: "non-recoverable tool error"},
		{name: "nil", give: nil, want: "non-recoverable tool error"},
		{name: "panicking cause", give: toolcore.WrapNonRecoverable(panickyError{}, "state lost"), want: "state lost: tool failed; its error message could not be read (Error panicked)", wantCause: panickyError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.Error())
			assert.Equal(t, tt.wantCause, tt.give.Unwrap())
		})
	}
}

// panickyError panics in Error.
type panickyError struct{}

func (panickyError) Error() string { panic("no text for you") }

// panickyUnwrap panics in Unwrap.
type panickyUnwrap struct{ wrapped error }

func (e panickyUnwrap) Error() string { return "panicky unwrap" }
func (e panickyUnwrap) Unwrap() error { panic("no chain for you") }

// selfWrap wraps itself forever.
type selfWrap struct{}

func (e *selfWrap) Error() string { return "self" }
func (e *selfWrap) Unwrap() error { return e }

// asError answers As with a fixed *NonRecoverableToolError, or panics when that is nil.
type asError struct {
	give *toolcore.NonRecoverableToolError
}

func (e asError) Error() string { return "as" }
func (e asError) As(target any) bool {
	if e.give == nil {
		panic("no As for you")
	}
	p, ok := target.(**toolcore.NonRecoverableToolError)
	if ok {
		*p = e.give
	}
	return ok
}

func TestAsNonRecoverable(t *testing.T) {
	genuine := toolcore.NewNonRecoverableToolError("fatal")
	literal := &toolcore.NonRecoverableToolError{}
	tests := []struct {
		name      string
		give      error
		wantFound bool
	}{
		{name: "nil", give: nil},
		{name: "ordinary", give: errors.New("x")},
		{name: "genuine", give: genuine, wantFound: true},
		{name: "genuine wrapped twice", give: fmt.Errorf("a: %w", fmt.Errorf("b: %w", genuine)), wantFound: true},
		{name: "genuine in errors.Join", give: errors.Join(errors.New("x"), genuine), wantFound: true},
		{name: "genuine in nested errors.Join", give: errors.Join(errors.Join(errors.New("x")), fmt.Errorf("y: %w", errors.Join(genuine))), wantFound: true},
		{name: "genuine in multi-%w", give: fmt.Errorf("%w and %w", errors.New("x"), genuine), wantFound: true},
		{name: "struct literal", give: literal},
		{name: "struct literal wrapped", give: fmt.Errorf("a: %w", literal)},
		{name: "struct literal in front of genuine", give: errors.Join(literal, genuine), wantFound: true},
		{name: "typed nil", give: (*toolcore.NonRecoverableToolError)(nil)},
		{name: "panicking Unwrap beside genuine", give: errors.Join(panickyUnwrap{}, genuine), wantFound: true},
		{name: "panicking Unwrap hides its chain", give: panickyUnwrap{wrapped: genuine}},
		{name: "endless Unwrap", give: &selfWrap{}},
		{name: "As yields genuine", give: asError{give: genuine}, wantFound: true},
		{name: "As yields literal", give: asError{give: literal}},
		{name: "panicking As", give: asError{}},
		{name: "genuine marked transient", give: toolcore.Transient(genuine), wantFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := toolcore.AsNonRecoverable(tt.give)

			assert.Equal(t, tt.wantFound, found)
			if tt.wantFound {
				assert.Same(t, genuine, got)
			} else {
				assert.Nil(t, got)
			}
		})
	}
}

func TestTransient(t *testing.T) {
	base := errors.New("rate limited")
	tests := []struct {
		name string
		give error
		want bool
	}{
		{name: "nil", give: nil},
		{name: "plain", give: base},
		{name: "marked", give: toolcore.Transient(base), want: true},
		{name: "marked then wrapped", give: fmt.Errorf("call api: %w", toolcore.Transient(base)), want: true},
		{name: "marked in errors.Join", give: errors.Join(errors.New("x"), toolcore.Transient(base)), want: true},
		{name: "behind a panicking Unwrap", give: panickyUnwrap{wrapped: toolcore.Transient(base)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, toolcore.IsTransient(tt.give))
		})
	}
}

func TestTransientKeepsTextAndChain(t *testing.T) {
	base := errors.New("rate limited")

	err := toolcore.Transient(base)

	assert.Equal(t, "rate limited", err.Error())
	assert.ErrorIs(t, err, base)
	assert.NoError(t, toolcore.Transient(nil))
}

func TestErrorText(t *testing.T) {
	long := strings.Repeat("a", 5000)
	longWide := strings.Repeat("é", 5000)
	tests := []struct {
		name string
		give error
		want string
	}{
		{name: "nil", give: nil, want: "tool failed without a message"},
		{name: "blank", give: errors.New(" \n\t"), want: "tool failed without a message"},
		{name: "ordinary", give: errors.New("disk full"), want: "disk full"},
		{name: "invalid UTF-8", give: errors.New("bad \xff\xfe byte"), want: "bad \uFFFD\uFFFD byte"},
		{name: "long", give: errors.New(long), want: long[:toolcore.MaxErrorTextCodePoints-1] + "…"},
		{name: "long multi-byte", give: errors.New(longWide), want: strings.Repeat("é", toolcore.MaxErrorTextCodePoints-1) + "…"},
		{name: "exactly the bound", give: errors.New(long[:toolcore.MaxErrorTextCodePoints]), want: long[:toolcore.MaxErrorTextCodePoints]},
		{name: "panicking Error", give: panickyError{}, want: "tool failed; its error message could not be read (Error panicked)"},
		{name: "nil pointer receiver", give: (*NonRecoverableToolError)(nil), want: "tool failed; its error message could not be read (Error panicked)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolcore.ErrorText(tt.give)

			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got))
			assert.LessOrEqual(t, utf8.RuneCountInString(got), toolcore.MaxErrorTextCodePoints)
		})
	}
}

func TestErrorTextIsIdempotent(t *testing.T) {
	once := toolcore.ErrorText(errors.New(strings.Repeat("ab\xff", 2000)))

	require.Equal(t, toolcore.MaxErrorTextCodePoints, utf8.RuneCountInString(once))
	assert.Equal(t, once, toolcore.ErrorText(errors.New(once)))
}

func TestRetryAfter(t *testing.T) {
	base := errors.New("429 Too Many Requests")
	tests := []struct {
		name      string
		give      error
		wantDelay time.Duration
		wantFound bool
	}{
		{name: "nil", give: nil},
		{name: "plain", give: base},
		{name: "transient without a delay", give: toolcore.Transient(base)},
		{name: "two seconds", give: toolcore.RetryAfter(base, 2*time.Second), wantDelay: 2 * time.Second, wantFound: true},
		{name: "wrapped", give: fmt.Errorf("call api: %w", toolcore.RetryAfter(base, time.Second)), wantDelay: time.Second, wantFound: true},
		{name: "cut to the bound", give: toolcore.RetryAfter(base, time.Hour), wantDelay: toolcore.MaxRetryAfter, wantFound: true},
		{name: "zero is plain transient", give: toolcore.RetryAfter(base, 0)},
		{name: "negative is plain transient", give: toolcore.RetryAfter(base, -time.Second)},
		{name: "behind a panicking Unwrap", give: panickyUnwrap{wrapped: toolcore.RetryAfter(base, time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			delay, found := toolcore.RetryDelay(tt.give)
			assert.Equal(t, tt.wantFound, found)
			assert.Equal(t, tt.wantDelay, delay)
		})
	}
}

func TestRetryAfterIsTransientWithTheSameText(t *testing.T) {
	base := errors.New("429 Too Many Requests")

	err := toolcore.RetryAfter(base, 2*time.Second)

	assert.True(t, toolcore.IsTransient(err))
	assert.Equal(t, "429 Too Many Requests", err.Error())
	assert.ErrorIs(t, err, base)
	assert.NoError(t, toolcore.RetryAfter(nil, time.Second))
}
