package toolcore

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

// String returns the wire name, e.g. "INVALID_TOOL_CALL".
func (c ContractErrorCode) String() string { panic("TODO") }

// ContractError is a broken contract rule, returned as a Go error (never as a result). Only
// toolcore mints them; one returned by tool code is an ordinary, recoverable tool error.
type ContractError struct {
	Code    ContractErrorCode
	Message string
}

func (e *ContractError) Error() string { panic("TODO") }

// ErrorCode is a model-visible, recoverable result error code. The zero value is invalid.
type ErrorCode uint8

const (
	_                                 ErrorCode = iota
	CodeToolNotFound                            // TOOL_NOT_FOUND
	CodeToolArgumentsInvalid                    // TOOL_ARGUMENTS_INVALID
	CodeToolValidationFailed                    // TOOL_VALIDATION_FAILED
	CodeToolExecutionFailed                     // TOOL_EXECUTION_FAILED
	CodeToolOutputSerializationFailed           // TOOL_OUTPUT_SERIALIZATION_FAILED
)

// String returns the wire name, e.g. "TOOL_NOT_FOUND".
func (c ErrorCode) String() string { panic("TODO") }

// NonRecoverableToolError is an authenticated invariant or programmer failure that must stop the
// agent run. Only its constructors mint a genuine one; a struct literal of this type, or any
// look-alike, is an ordinary recoverable error. The brand is a safety rail against accidents, not a
// security boundary: any code in the process can call the constructor.
type NonRecoverableToolError struct {
	message string
	cause   error
	genuine bool
}

// NewNonRecoverableToolError mints a genuine fatal error with message.
func NewNonRecoverableToolError(message string) *NonRecoverableToolError { panic("TODO") }

// WrapNonRecoverable mints a genuine fatal error with message that wraps cause.
func WrapNonRecoverable(cause error, message string) *NonRecoverableToolError { panic("TODO") }

func (e *NonRecoverableToolError) Error() string { panic("TODO") }
func (e *NonRecoverableToolError) Unwrap() error { panic("TODO") }

// AsNonRecoverable finds a genuine *NonRecoverableToolError anywhere in err's chain (errors.As
// semantics, including joined errors). Look-alikes are not found.
func AsNonRecoverable(err error) (*NonRecoverableToolError, bool) { panic("TODO") }

// Transient marks err as transient: the durable path retries it for ReadOnly and Idempotent tools
// (bounded by MaxAttempts); for Unsafe tools, and in process, it is an ordinary error.
func Transient(err error) error { panic("TODO") }

// IsTransient reports whether err's chain holds an error marked by Transient.
func IsTransient(err error) bool { panic("TODO") }

// ErrorText returns err.Error() safely for a model-visible message: a panic in Error() is
// recovered, invalid UTF-8 replaced, the length bounded, and a blank text replaced by a default.
func ErrorText(err error) string { panic("TODO") }
