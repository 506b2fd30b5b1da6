package toolcore

// Result is an immutable tool-result message linked to its call. It encodes to the wire shape
// {"id":"tool-result-<callId>","role":"toolResult","toolCallId":"...","toolName":"...","content":"...","isError":false}.
type Result struct {
	toolCallID string
	toolName   string
	content    string
	isError    bool
}

func (r Result) ID() string         { return "tool-result-" + r.toolCallID }
func (r Result) ToolCallID() string { return r.toolCallID }
func (r Result) ToolName() string   { return r.toolName }
func (r Result) Content() string    { return r.content }
func (r Result) IsError() bool      { return r.isError }

// IsZero reports whether r is the zero value (no result).
func (r Result) IsZero() bool { return r.toolCallID == "" }

// ErrorCode returns the code of an error result, parsed from its content; 0 for a success.
func (r Result) ErrorCode() ErrorCode { panic("TODO") }

// MarshalJSON encodes the wire shape, fields in the documented order.
func (r Result) MarshalJSON() ([]byte, error) { panic("TODO") }

// UnmarshalJSON strictly decodes the wire shape and checks the linkage (id, role).
func (r *Result) UnmarshalJSON(data []byte) error { panic("TODO") }

// SuccessResult links bounded content (already serialized) to call. content is capped again.
func SuccessResult(call ToolCall, content string) Result { panic("TODO") }

// ErrorResult links an error result {"error":{"code":...,"message":...}} to call; the content
// obeys the same cap.
func ErrorResult(call ToolCall, code ErrorCode, message string) Result { panic("TODO") }

// NotFoundResult is the TOOL_NOT_FOUND result: Unknown Tool "<name>".
func NotFoundResult(call ToolCall) Result { panic("TODO") }

// LinkContent rebuilds a result from parts that crossed a boundary (activity to workflow):
// content is capped again.
func LinkContent(call ToolCall, content string, isError bool) Result { panic("TODO") }
