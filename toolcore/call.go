package toolcore

// Bounds of an acceptable tool call (INVALID_TOOL_CALL beyond them).
const (
	MaxCallBytes      = 256 << 10 // whole call JSON, bytes
	MaxArgumentsDepth = 64        // nesting of objects and arrays inside arguments
	MaxIDBytes        = 256       // tool call id, bytes
	MaxNameBytes      = 256       // tool name as called (may be unknown), bytes
)

// ToolCall is an immutable, deep snapshot of a well-formed tool call. The zero value is invalid.
// It encodes to (and decodes from, strictly) the wire shape
// {"type":"toolCall","id":"...","name":"...","arguments":{...}}.
type ToolCall struct {
	id   string
	name string
	args Arguments
}

// ParseToolCall snapshots untrusted JSON. Every malformed shape is a *ContractError with
// CodeInvalidToolCall whose message says what is wrong.
func ParseToolCall(data []byte) (ToolCall, error) { panic("TODO") }

// NewToolCall builds a call for Go callers; arguments is the JSON object of arguments.
func NewToolCall(id, name string, arguments []byte) (ToolCall, error) { panic("TODO") }

func (c ToolCall) ID() string           { return c.id }
func (c ToolCall) Name() string         { return c.name }
func (c ToolCall) Arguments() Arguments { return c.args }

// IsZero reports whether c is the invalid zero value.
func (c ToolCall) IsZero() bool { return c.id == "" }

// MarshalJSON encodes the wire shape with canonical arguments.
func (c ToolCall) MarshalJSON() ([]byte, error) { panic("TODO") }

// UnmarshalJSON is ParseToolCall.
func (c *ToolCall) UnmarshalJSON(data []byte) error { panic("TODO") }
