package toolcore

import (
	"context"
	"encoding/json"
)

// Validate runs t's validator on call's arguments, recovering panics. Accepted: the value encoded
// as JSON, which is what Invoke takes (and what crosses to the activity). Otherwise the linked
// TOOL_ARGUMENTS_INVALID or TOOL_VALIDATION_FAILED result and ok=false.
func (t Tool) Validate(call ToolCall) (accepted json.RawMessage, rejected Result, ok bool) {
	panic("TODO")
}

// Invoke decodes accepted into the tool's argument type and runs Execute with ctx, recovering
// panics (a panic is returned as an error carrying the panic value's text, never a stack).
func (t Tool) Invoke(ctx context.Context, accepted json.RawMessage) (output any, err error) {
	panic("TODO")
}

// Complete maps what Invoke returned to a linked result: output is serialized (success, or
// TOOL_OUTPUT_SERIALIZATION_FAILED); an error is TOOL_EXECUTION_FAILED, except a genuine
// NonRecoverableToolError, returned as the error with a zero Result. Cancellation is the caller's
// to check before calling Complete.
func Complete(call ToolCall, output any, err error) (Result, error) { panic("TODO") }
