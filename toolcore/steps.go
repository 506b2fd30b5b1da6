package toolcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
)

// Messages of TOOL_VALIDATION_FAILED results that do not come from the validator's own text.
const (
	msgToolNotDefined   = "tool is not defined"
	msgNoDecision       = "validator returned no decision (use Accept or Reject)"
	msgBlankReason      = "validator rejected the arguments without a reason"
	msgValidatorPanic   = "validator panicked"
	msgToolPanic        = "tool panicked"
	msgSerializerFailed = "serialize output: internal error"
)

// Validate runs t's validator on call's arguments, recovering panics. Accepted: the value encoded
// as JSON, which is what Invoke takes (and what crosses to the activity). Otherwise the linked
// TOOL_ARGUMENTS_INVALID or TOOL_VALIDATION_FAILED result and ok=false.
//
// Reject(reason) is TOOL_ARGUMENTS_INVALID with the reason verbatim (bounded like ErrorText). A
// panic (the panic value's text, no stack), the zero Decision, a blank reason, or an accepted
// value that does not round-trip (encoding/json Marshal fails, or decoding the JSON into a fresh A
// fails) is TOOL_VALIDATION_FAILED. The accepted JSON is encoding/json's encoding of the value
// without HTML escaping; maps come out with sorted keys, so it is deterministic.
//
// The validator runs on the caller's goroutine and must not block, start goroutines, do I/O, read
// the clock or call runtime.Goexit: on the durable path it runs in workflow code.
func (t Tool) Validate(call ToolCall) (accepted json.RawMessage, rejected Result, ok bool) {
	if t.d == nil {
		return nil, ErrorResult(call, CodeToolValidationFailed, msgToolNotDefined), false
	}
	raw, code, msg := t.d.check(call.Arguments())
	if code != 0 {
		return nil, ErrorResult(call, code, msg), false
	}
	return raw, Result{}, true
}

// check runs the validator and the round-trip check; a non-zero code says why the value is not
// accepted.
func (d *tool) check(args Arguments) (raw json.RawMessage, code ErrorCode, msg string) {
	stage := "validate"
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		raw, code = nil, CodeToolValidationFailed
		switch stage {
		case "validate":
			msg = panicText(v, msgValidatorPanic)
		case "encode":
			msg = "validator accepted a value whose JSON encoding panicked: " + panicText(v, msgValidatorPanic)
		default:
			msg = fmt.Sprintf("validator accepted a value whose JSON decoding into %s panicked: %s", d.argType, panicText(v, msgValidatorPanic))
		}
	}()
	value, reason, kind := d.validate(args)
	switch kind {
	case decisionAccept:
	case decisionReject:
		if strings.TrimSpace(reason) == "" {
			return nil, CodeToolValidationFailed, msgBlankReason
		}
		return nil, CodeToolArgumentsInvalid, reason
	default:
		return nil, CodeToolValidationFailed, msgNoDecision
	}
	stage = "encode"
	raw, err := encodeAccepted(value)
	if err != nil {
		return nil, CodeToolValidationFailed, "validator accepted a value that cannot be encoded as JSON: " + ErrorText(err)
	}
	stage = "decode"
	if err := d.decode(raw); err != nil {
		return nil, CodeToolValidationFailed, fmt.Sprintf("validator accepted a value that does not decode back into %s: %s", d.argType, ErrorText(err))
	}
	return raw, 0, ""
}

// encodeAccepted is json.Marshal without HTML escaping.
func encodeAccepted(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Invoke decodes accepted into the tool's argument type and runs Execute with ctx, recovering
// panics (a panic is returned as a *PanicError carrying the panic value's text, never a stack).
//
// Invoke does not add the execution values to ctx (executors do, with WithExecution) and does not
// check cancellation. A decoding failure is returned as an error; Execute is then not called.
func (t Tool) Invoke(ctx context.Context, accepted json.RawMessage) (output any, err error) {
	if t.d == nil {
		return nil, errors.New("invoke tool: " + msgToolNotDefined)
	}
	defer func() {
		if v := recover(); v != nil {
			output, err = nil, newPanicError(v, msgToolPanic)
		}
	}()
	return t.d.run(ctx, accepted)
}

// Invocation is what Invoke returned, handed back by Start.
type Invocation struct {
	Output any
	Err    error
}

// errGoexit is the error of a tool that ended its goroutine with runtime.Goexit.
var errGoexit = errors.New("tool exited without returning (runtime.Goexit)")

// Start runs Invoke on a goroutine of its own and returns a channel that receives exactly one
// Invocation when the tool is done; it never blocks the tool (the channel is buffered), so a caller
// may stop waiting. A tool that calls runtime.Goexit ends that goroutine only: the Invocation then
// carries an error instead of never arriving. Both executors (Execute in process, the durable
// activity) run tools through Start, so they treat panics and Goexit alike.
func (t Tool) Start(ctx context.Context, accepted json.RawMessage) <-chan Invocation {
	done := make(chan Invocation, 1)
	go func() {
		returned := false
		defer func() {
			if !returned {
				done <- Invocation{Err: errGoexit}
			}
		}()
		output, err := t.Invoke(ctx, accepted)
		returned = true
		done <- Invocation{Output: output, Err: err}
	}()
	return done
}

// Complete maps what Invoke returned to a linked result: output is serialized (success, or
// TOOL_OUTPUT_SERIALIZATION_FAILED), except a Text output, which is the content as it is, and a
// Rich output, whose Output is the content and whose parts are claimed without a key (in process
// no part store keeps them; the durable path's activity stores them first); an error is
// TOOL_EXECUTION_FAILED, except a genuine
// NonRecoverableToolError, returned as the error with a zero Result. Cancellation is the caller's
// to check before calling Complete.
//
// The returned fatal error is the genuine *NonRecoverableToolError found in err's chain (see
// AsNonRecoverable), not the wrapping. A TOOL_EXECUTION_FAILED message is ErrorText(err).
func Complete(call ToolCall, output any, err error) (Result, error) {
	if err != nil {
		if fatal, ok := AsNonRecoverable(err); ok {
			return Result{}, fatal
		}
		return ErrorResult(call, CodeToolExecutionFailed, ErrorText(err)), nil
	}
	if model, parts, ok := SplitRich(output); ok {
		return completeRich(call, model, parts), nil
	}
	if text, ok := output.(Text); ok {
		return SuccessResult(call, string(text)), nil // capped and made valid UTF-8 by LinkContent
	}
	content, err := serializeOutput(output)
	if err != nil {
		return ErrorResult(call, CodeToolOutputSerializationFailed, ErrorText(err)), nil
	}
	return SuccessResult(call, content), nil
}

// serializeOutput is Serialize with a recover: the tool has run, so even a serializer bug must
// end as a result, not crash the worker.
func serializeOutput(output any) (content string, err error) {
	defer func() {
		if v := recover(); v != nil {
			content, err = "", errors.New(msgSerializerFailed+": "+panicText(v, "panic"))
		}
	}()
	return Serialize(output)
}

// PanicError is a panic recovered from a tool's Execute. Its text is the panic value's text only;
// the stack is kept apart, for logs, and never reaches a result.
type PanicError struct {
	text  string
	stack []byte
	err   error
}

func newPanicError(v any, blank string) *PanicError {
	e := &PanicError{text: panicText(v, blank), stack: debug.Stack()}
	e.err, _ = v.(error)
	return e
}

// Error returns the panic value's text (bounded like ErrorText).
func (e *PanicError) Error() string { return e.text }

// Unwrap returns the panic value when it is an error, so a panic with a genuine
// NonRecoverableToolError still stops the run.
func (e *PanicError) Unwrap() error { return e.err }

// Stack returns a copy of the panicking goroutine's stack, for logs only.
func (e *PanicError) Stack() []byte { return bytes.Clone(e.stack) }

// panicText renders a panic value without trusting it: strings as they are; errors and
// fmt.Stringers through their method under recover; booleans and numbers (also of named types) by
// reflection, never through methods; anything else by its type only, so no address or map order
// can leak. The text is bounded like ErrorText; blank becomes blank.
func panicText(v any, blank string) string {
	switch x := v.(type) {
	case string:
		return boundText(x, blank)
	case error:
		text, ok := safeErrorString(x)
		if !ok {
			return "panic value's Error method panicked"
		}
		return boundText(text, blank)
	case fmt.Stringer:
		text, ok := safeString(x)
		if !ok {
			return "panic value's String method panicked"
		}
		return boundText(text, blank)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return boundText(rv.String(), blank)
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, rv.Type().Bits())
	case reflect.Invalid:
		return blank
	}
	return boundText("panic with a value of type "+rv.Type().String(), blank)
}

// safeString calls s.String(), recovering a panic.
func safeString(s fmt.Stringer) (text string, ok bool) {
	defer func() {
		if recover() != nil {
			text, ok = "", false
		}
	}()
	return s.String(), true
}
