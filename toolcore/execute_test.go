package toolcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exCall builds a call or fails the test.
func exCall(t testing.TB, id, name, args string) ToolCall {
	t.Helper()
	c, err := NewToolCall(id, name, []byte(args))
	require.NoError(t, err)
	return c
}

// exRegistry registers tools or fails the test.
func exRegistry(t testing.TB, tools ...Tool) *Registry {
	t.Helper()
	r, err := NewRegistry(tools...)
	require.NoError(t, err)
	return r
}

// exSpy is a tool named "spy" that counts validations and executions.
type exSpy struct {
	validated, executed atomic.Int32
	tool                Tool
}

func newExSpy(t testing.TB, output any) *exSpy {
	t.Helper()
	s := &exSpy{}
	s.tool = MustDefine(Definition[struct{}]{
		Name:        "spy",
		Description: "Counts what runs.",
		Validate: func(Arguments) Decision[struct{}] {
			s.validated.Add(1)
			return Accept(struct{}{})
		},
		Execute: func(context.Context, struct{}) (any, error) {
			s.executed.Add(1)
			return output, nil
		},
	})
	return s
}

// Every cancellation check of the executor, proven by canceling exactly there.
func TestExecuteCancellationCheckpoints(t *testing.T) {
	tests := []struct {
		name          string
		at            checkpoint
		wantValidated int32
		wantExecuted  int32
	}{
		{name: "before validation", at: checkBeforeValidation, wantValidated: 0, wantExecuted: 0},
		{name: "after validation", at: checkAfterValidation, wantValidated: 1, wantExecuted: 0},
		{name: "before execution", at: checkBeforeExecution, wantValidated: 1, wantExecuted: 0},
		{name: "after the tool returns", at: checkAfterExecution, wantValidated: 1, wantExecuted: 1},
		{name: "after serialization", at: checkAfterSerialization, wantValidated: 1, wantExecuted: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spy := newExSpy(t, map[string]any{"ok": true})
			cause := errors.New("stop at " + tt.name)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var seen []checkpoint

			res, err := execute(ctx, exRegistry(t, spy.tool), exCall(t, "call-1", "spy", `{}`), ExecuteOptions{}, func(at checkpoint) {
				seen = append(seen, at)
				if at == tt.at {
					cancel(cause)
				}
			})

			assert.ErrorIs(t, err, cause)
			assert.True(t, res.IsZero())
			assert.Equal(t, tt.wantValidated, spy.validated.Load())
			assert.Equal(t, tt.wantExecuted, spy.executed.Load())
			assert.Equal(t, tt.at, seen[len(seen)-1], "the check right after the cancel stops the call")
		})
	}
}

func TestExecuteWithoutCancellationPassesEveryCheckpoint(t *testing.T) {
	spy := newExSpy(t, map[string]any{"ok": true})
	var seen []checkpoint

	res, err := execute(context.Background(), exRegistry(t, spy.tool), exCall(t, "call-1", "spy", `{}`), ExecuteOptions{}, func(at checkpoint) {
		seen = append(seen, at)
	})

	require.NoError(t, err)
	assert.Equal(t, `{"ok":true}`, res.Content())
	assert.Equal(t, []checkpoint{checkBeforeValidation, checkAfterValidation, checkBeforeExecution, checkAfterExecution, checkAfterSerialization}, seen)
}

func TestExecuteRejectsTheZeroCall(t *testing.T) {
	res, err := Execute(context.Background(), exRegistry(t), ToolCall{})

	var ce *ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, CodeInvalidToolCall, ce.Code)
	assert.True(t, res.IsZero())
}

func TestExecuteUnknownToolLeavesTheRegistryAlone(t *testing.T) {
	spy := newExSpy(t, nil)
	r := exRegistry(t, spy.tool)

	res, err := Execute(context.Background(), r, exCall(t, "call-1", "nope", `{"x":1}`))

	require.NoError(t, err)
	assert.Equal(t, `{"error":{"code":"TOOL_NOT_FOUND","message":"Unknown Tool \"nope\""}}`, res.Content())
	assert.True(t, res.IsError())
	assert.Equal(t, []string{"spy"}, r.Names())
	assert.Zero(t, spy.validated.Load())
}

func TestExecuteNilRegistryIsEmpty(t *testing.T) {
	res, err := Execute(context.Background(), nil, exCall(t, "call-1", "add", `{}`))

	require.NoError(t, err)
	assert.Equal(t, CodeToolNotFound, res.ErrorCode())
}

// The wire shapes of contract section 1, byte for byte.
func TestExecuteWireShapesAreByteExact(t *testing.T) {
	type add struct {
		Left  json.Number `json:"left"`
		Right json.Number `json:"right"`
	}
	addTool := MustDefine(Definition[add]{
		Name:        "add",
		Description: "Add two integers.",
		Validate: func(a Arguments) Decision[add] {
			var v add
			if err := a.Decode(&v); err != nil {
				return Reject[add](err.Error())
			}
			return Accept(v)
		},
		Execute: func(_ context.Context, a add) (any, error) {
			l, _ := a.Left.Int64()
			r, _ := a.Right.Int64()
			return map[string]any{"sum": l + r, "exact": true}, nil
		},
	})
	r := exRegistry(t, addTool)
	tests := []struct {
		name string
		call string
		want string
	}{
		{
			name: "success",
			call: `{"type":"toolCall","id":"call-add-1","name":"add","arguments":{"left":20,"right":22}}`,
			want: `{"id":"tool-result-call-add-1","role":"toolResult","toolCallId":"call-add-1","toolName":"add","content":"{\"exact\":true,\"sum\":42}","isError":false}`,
		},
		{
			name: "unknown tool",
			call: `{"type":"toolCall","id":"call-x-1","name":"subtract","arguments":{}}`,
			want: `{"id":"tool-result-call-x-1","role":"toolResult","toolCallId":"call-x-1","toolName":"subtract","content":"{\"error\":{\"code\":\"TOOL_NOT_FOUND\",\"message\":\"Unknown Tool \\\"subtract\\\"\"}}","isError":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := ParseToolCall([]byte(tt.call))
			require.NoError(t, err)

			res, err := Execute(context.Background(), r, call)
			require.NoError(t, err)
			got, err := json.Marshal(res)

			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestExecuteGivesTheToolItsExecution(t *testing.T) {
	type seen struct {
		CallID, Name, Key string
		Attempt           int
	}
	tests := []struct {
		name string
		opts ExecuteOptions
		want seen
	}{
		{name: "defaults", want: seen{CallID: "call-7", Name: "ctx", Key: "toolcall-call-7", Attempt: 1}},
		{name: "idempotency key option", opts: ExecuteOptions{IdempotencyKey: "run-3/call-7"}, want: seen{CallID: "call-7", Name: "ctx", Key: "run-3/call-7", Attempt: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got seen
			var toolCtx context.Context
			tool := MustDefine(Definition[struct{}]{
				Name: "ctx", Description: "Reads its context.",
				Validate: func(Arguments) Decision[struct{}] { return Accept(struct{}{}) },
				Execute: func(ctx context.Context, _ struct{}) (any, error) {
					toolCtx = ctx
					got = seen{CallID: ToolCallID(ctx), Name: ToolName(ctx), Key: IdempotencyKey(ctx), Attempt: Attempt(ctx)}
					return nil, ctx.Err()
				},
			})

			res, err := ExecuteWith(context.Background(), exRegistry(t, tool), exCall(t, "call-7", "ctx", `{}`), tt.opts)

			require.NoError(t, err)
			assert.False(t, res.IsError())
			assert.Equal(t, tt.want, got)
			assert.Error(t, toolCtx.Err(), "the tool's context ends when Execute returns")
		})
	}
}

func TestExecutionAccessorsOutsideAnExecution(t *testing.T) {
	ctx := context.Background()

	ReportProgress(ctx, Progress{Completed: 1}) // a no-op, must not panic

	assert.Empty(t, ToolCallID(ctx))
	assert.Empty(t, ToolName(ctx))
	assert.Empty(t, IdempotencyKey(ctx))
	assert.Zero(t, Attempt(ctx))
	assert.Equal(t, 1, Attempt(WithExecution(ctx, Execution{})), "attempts count from 1")
}

func TestReportProgressRecoversAPanickingCallback(t *testing.T) {
	var calls atomic.Int32
	ctx := WithExecution(context.Background(), Execution{OnProgress: func(Progress) {
		calls.Add(1)
		panic("callback bug")
	}})

	assert.NotPanics(t, func() { ReportProgress(ctx, Progress{Completed: 1}) })
	assert.Equal(t, int32(1), calls.Load())
}

// A slow OnProgress never blocks the tool; the last report is delivered.
func TestExecuteProgressNeverBlocksTheTool(t *testing.T) {
	release := make(chan struct{})
	delivered := make(chan Progress, 16)
	tool := MustDefine(Definition[struct{}]{
		Name: "progress", Description: "Reports progress.",
		Validate: func(Arguments) Decision[struct{}] { return Accept(struct{}{}) },
		Execute: func(ctx context.Context, _ struct{}) (any, error) {
			for i := int64(1); i <= 3; i++ {
				ReportProgress(ctx, Progress{Completed: i, Total: 3, Message: "step"})
			}
			return "done", nil
		},
	})

	res, err := ExecuteWith(context.Background(), exRegistry(t, tool), exCall(t, "call-1", "progress", `{}`), ExecuteOptions{
		OnProgress: func(p Progress) {
			<-release // blocks until the test has seen Execute return
			delivered <- p
		},
	})
	require.NoError(t, err)
	assert.Equal(t, `"done"`, res.Content())
	close(release)

	var last Progress
	for last.Completed != 3 {
		last = <-delivered
	}
	assert.Equal(t, Progress{Completed: 3, Total: 3, Message: "step"}, last)
}

func TestExecuteToolCallingGoexitIsAFailureNotAHang(t *testing.T) {
	tool := MustDefine(Definition[struct{}]{
		Name: "goexit", Description: "Ends its goroutine.",
		Validate: func(Arguments) Decision[struct{}] { return Accept(struct{}{}) },
		Execute: func(context.Context, struct{}) (any, error) {
			runtime.Goexit()
			return nil, nil
		},
	})

	res, err := Execute(context.Background(), exRegistry(t, tool), exCall(t, "call-1", "goexit", `{}`))

	require.NoError(t, err)
	assert.Equal(t, CodeToolExecutionFailed, res.ErrorCode())
	assert.Equal(t, "tool exited without returning (runtime.Goexit)", res.ErrorMessage())
}

// Argument types for TestValidateOutcomes.
type (
	exAnyArgs struct{ V any }
	// exBrokenRoundTrip encodes fine but refuses to decode.
	exBrokenRoundTrip struct{ N int }
	// exPanickyMarshal panics while encoding.
	exPanickyMarshal struct{ N int }
)

func (exBrokenRoundTrip) MarshalJSON() ([]byte, error) { return []byte(`{"n":1}`), nil }
func (*exBrokenRoundTrip) UnmarshalJSON([]byte) error  { return errors.New("never decodes") }
func (exPanickyMarshal) MarshalJSON() ([]byte, error)  { panic("marshal exploded") }
func (*exPanickyMarshal) UnmarshalJSON([]byte) error   { return nil }

// exStringer panics in String.
type exStringer struct{}

func (exStringer) String() string { panic("stringer exploded") }

// exValidate runs Validate of a tool with argument type A and the given validator.
func exValidate[A any](t *testing.T, validate func(Arguments) Decision[A]) (json.RawMessage, Result, bool) {
	t.Helper()
	tool, err := Define(Definition[A]{
		Name: "v", Description: "Validates.",
		Validate: validate,
		Execute:  func(context.Context, A) (any, error) { return nil, nil },
	})
	require.NoError(t, err)
	return tool.Validate(exCall(t, "call-1", "v", `{"left":"twenty"}`))
}

func TestValidateOutcomes(t *testing.T) {
	tests := []struct {
		name         string
		run          func(t *testing.T) (json.RawMessage, Result, bool)
		wantAccepted string
		wantCode     ErrorCode
		wantMsg      string
	}{
		{
			name: "accept",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[map[string]any] {
					return Accept(map[string]any{"b": "<&>", "a": 1})
				})
			},
			wantAccepted: `{"a":1,"b":"<&>"}`,
		},
		{
			name: "reject with a reason, verbatim",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[struct{}] { return Reject[struct{}](" left must be a number\n") })
			},
			wantCode: CodeToolArgumentsInvalid, wantMsg: " left must be a number\n",
		},
		{
			name: "reject without a reason",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[struct{}] { return Reject[struct{}](" \t") })
			},
			wantCode: CodeToolValidationFailed, wantMsg: msgBlankReason,
		},
		{
			name: "zero decision",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[struct{}] { return Decision[struct{}]{} })
			},
			wantCode: CodeToolValidationFailed, wantMsg: msgNoDecision,
		},
		{
			name: "panic with a string",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[struct{}] { panic("schema missing") })
			},
			wantCode: CodeToolValidationFailed, wantMsg: "schema missing",
		},
		{
			name: "panic with a runtime error",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[struct{}] {
					var m map[string]int
					//lint:ignore SA5000 fixture: a validator that panics with a runtime error
					m["x"] = 1
					return Accept(struct{}{})
				})
			},
			wantCode: CodeToolValidationFailed, wantMsg: "assignment to entry in nil map",
		},
		{
			name: "accepted value that cannot be encoded",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[exAnyArgs] { return Accept(exAnyArgs{V: func() {}}) })
			},
			wantCode: CodeToolValidationFailed, wantMsg: "validator accepted a value that cannot be encoded as JSON: json: unsupported type: func()",
		},
		{
			name: "accepted NaN",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[float64] { return Accept(math.NaN()) })
			},
			wantCode: CodeToolValidationFailed, wantMsg: "json: unsupported value: NaN",
		},
		{
			name: "accepted value that does not decode back",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[exBrokenRoundTrip] { return Accept(exBrokenRoundTrip{N: 1}) })
			},
			wantCode: CodeToolValidationFailed, wantMsg: "validator accepted a value that does not decode back into toolcore.exBrokenRoundTrip: never decodes",
		},
		{
			name: "accepted value whose encoding panics",
			run: func(t *testing.T) (json.RawMessage, Result, bool) {
				return exValidate(t, func(Arguments) Decision[exPanickyMarshal] { return Accept(exPanickyMarshal{}) })
			},
			wantCode: CodeToolValidationFailed, wantMsg: "validator accepted a value whose JSON encoding panicked: marshal exploded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			accepted, rejected, ok := tt.run(t)

			if tt.wantCode == 0 {
				require.True(t, ok)
				assert.Equal(t, tt.wantAccepted, string(accepted))
				assert.True(t, rejected.IsZero())
				return
			}
			require.False(t, ok)
			assert.Nil(t, accepted)
			assert.Equal(t, tt.wantCode, rejected.ErrorCode())
			assert.Contains(t, rejected.ErrorMessage(), tt.wantMsg)
			assert.Equal(t, "call-1", rejected.ToolCallID())
		})
	}
}

func TestInvokeDecodesAFreshValue(t *testing.T) {
	type args struct {
		Items []string       `json:"items"`
		Any   any            `json:"any"`
		Map   map[string]int `json:"map"`
	}
	var got []args // what each invocation saw on entry
	tool := MustDefine(Definition[args]{
		Name: "fresh", Description: "Mutates its arguments.",
		Validate: func(Arguments) Decision[args] { return Accept(args{}) },
		Execute: func(_ context.Context, a args) (any, error) {
			got = append(got, args{Items: slices.Clone(a.Items), Any: a.Any, Map: maps.Clone(a.Map)})
			a.Items[0] = "mutated"
			a.Map["mutated"] = 1
			return nil, nil
		},
	})
	accepted := json.RawMessage(`{"items":["a"],"any":9007199254740993,"map":{"k":1}}`)

	for range 2 {
		_, err := tool.Invoke(context.Background(), accepted)
		require.NoError(t, err)
	}

	require.Len(t, got, 2)
	assert.Equal(t, []string{"a"}, got[1].Items)
	assert.Equal(t, map[string]int{"k": 1}, got[1].Map, "each invocation gets a fresh value")
	assert.Equal(t, json.Number("9007199254740993"), got[1].Any, "numbers in any stay exact")
}

func TestInvokeErrors(t *testing.T) {
	type args struct {
		N int `json:"n"`
	}
	tests := []struct {
		name     string
		accepted string
		execute  func(context.Context, args) (any, error)
		wantMsg  string
		wantRan  bool
	}{
		{name: "unknown field", accepted: `{"n":1,"x":2}`, wantMsg: `decode validated arguments: json: unknown field "x"`},
		{name: "trailing data", accepted: `{"n":1} {}`, wantMsg: "decode validated arguments: trailing data"},
		{name: "wrong type", accepted: `{"n":"1"}`, wantMsg: "decode validated arguments: json: cannot unmarshal"},
		{name: "panic with an error", accepted: `{"n":1}`, execute: func(context.Context, args) (any, error) {
			panic(fmt.Errorf("wrapped: %w", errors.New("inner")))
		}, wantMsg: "wrapped: inner", wantRan: true},
		{name: "panic with a number", accepted: `{"n":1}`, execute: func(context.Context, args) (any, error) { panic(42) }, wantMsg: "42", wantRan: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			tool := MustDefine(Definition[args]{
				Name: "inv", Description: "Invoked.",
				Validate: func(Arguments) Decision[args] { return Accept(args{}) },
				Execute: func(ctx context.Context, a args) (any, error) {
					ran = true
					return tt.execute(ctx, a)
				},
			})

			out, err := tool.Invoke(context.Background(), json.RawMessage(tt.accepted))

			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.Nil(t, out)
			assert.Equal(t, tt.wantRan, ran)
		})
	}
}

func TestInvokePanicKeepsTheStackApart(t *testing.T) {
	tool := MustDefine(Definition[struct{}]{
		Name: "boom", Description: "Panics.",
		Validate: func(Arguments) Decision[struct{}] { return Accept(struct{}{}) },
		Execute:  func(context.Context, struct{}) (any, error) { panic("boom") },
	})

	_, err := tool.Invoke(context.Background(), json.RawMessage(`{}`))

	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Error())
	assert.Contains(t, string(pe.Stack()), "goroutine", "the stack is kept for logs")
	res, cerr := Complete(exCall(t, "call-1", "boom", `{}`), nil, err)
	require.NoError(t, cerr)
	assert.Equal(t, `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"boom"}}`, res.Content())
}

func TestComplete(t *testing.T) {
	genuine := NewNonRecoverableToolError("stop")
	tests := []struct {
		name        string
		output      any
		err         error
		wantContent string
		wantIsError bool
		wantFatal   error
	}{
		{name: "output", output: map[string]any{"sum": 42, "exact": true}, wantContent: `{"exact":true,"sum":42}`},
		{name: "nil output", output: nil, wantContent: `null`},
		{name: "string output is JSON", output: "say \"hi\"", wantContent: `"say \"hi\""`},
		{name: "Text output is the content as it is", output: Text("say \"hi\"\n"), wantContent: "say \"hi\"\n"},
		{name: "Text output made valid UTF-8", output: Text("a\xffb"), wantContent: "a\uFFFDb"},
		{name: "Text output capped", output: Text(strings.Repeat("x", MaxContentCodePoints+1)),
			wantContent: strings.Repeat("x", MaxContentCodePoints-len(TruncationMarker)) + TruncationMarker},
		{name: "Text inside a value is a string", output: map[string]any{"t": Text("x")}, wantContent: `{"t":"x"}`},
		{name: "ordinary error", err: errors.New("disk full"), wantIsError: true, wantContent: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"disk full"}}`},
		{name: "blank error", err: errors.New(""), wantIsError: true, wantContent: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"tool failed without a message"}}`},
		{name: "fatal error", err: fmt.Errorf("wrap: %w", genuine), wantFatal: genuine},
		{name: "channel output", output: make(chan int), wantIsError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Complete(exCall(t, "call-1", "c", `{}`), tt.output, tt.err)

			if tt.wantFatal != nil {
				assert.Same(t, tt.wantFatal, err, "the genuine error itself escapes")
				assert.True(t, res.IsZero())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantIsError, res.IsError())
			if tt.wantContent != "" {
				assert.Equal(t, tt.wantContent, res.Content())
			} else {
				assert.Equal(t, CodeToolOutputSerializationFailed, res.ErrorCode())
			}
		})
	}
}

type exNamedFloat float32

func TestPanicText(t *testing.T) {
	long := strings.Repeat("x", 2000)
	tests := []struct {
		name string
		give any
		want string
	}{
		{name: "string", give: "boom", want: "boom"},
		{name: "blank string", give: " ", want: "tool panicked"},
		{name: "error", give: errors.New("bad"), want: "bad"},
		{name: "panicking error", give: exPanickyError{}, want: "panic value's Error method panicked"},
		{name: "panicking Stringer", give: exStringer{}, want: "panic value's String method panicked"},
		{name: "int", give: 42, want: "42"},
		{name: "named float", give: exNamedFloat(0.1), want: "0.1"},
		{name: "bool", give: true, want: "true"},
		{name: "pointer: type only, no address", give: &struct{ X int }{1}, want: "panic with a value of type *struct { X int }"},
		{name: "map: type only", give: map[string]int{"a": 1}, want: "panic with a value of type map[string]int"},
		{name: "long", give: long, want: long[:MaxErrorTextCodePoints-1] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, panicText(tt.give, msgToolPanic))
		})
	}
}

type exPanickyError struct{}

func (exPanickyError) Error() string { panic("error exploded") }

// The executor returns as soon as cancellation wins, even while a tool ignores its context, and
// a tool finishing later cannot disturb anything.
func TestExecuteDiscardsALateResult(t *testing.T) {
	started, release, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once sync.Once
	tool := MustDefine(Definition[struct{}]{
		Name: "stubborn", Description: "Ignores its context.",
		Validate: func(Arguments) Decision[struct{}] { return Accept(struct{}{}) },
		Execute: func(ctx context.Context, _ struct{}) (any, error) {
			defer close(finished)
			once.Do(func() { close(started) })
			<-release
			ReportProgress(ctx, Progress{Completed: 1}) // after the executor is gone: must not block
			return "late", nil
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()

	res, err := ExecuteWith(ctx, exRegistry(t, tool), exCall(t, "call-1", "stubborn", `{}`), ExecuteOptions{OnProgress: func(Progress) {}})

	assert.ErrorIs(t, err, context.Canceled)
	assert.True(t, res.IsZero())
	close(release)
	<-finished
}
