package toolcore_test

// One test per rule of the call boundary in docs/contract.md (sections 2 to 4). Run them alone,
// offline, with:
//
//	go test -race -run 'TestContract' ./toolcore
//
// The check "after output inspection" (after serialization) cannot be reached from tool code,
// because the serializer never calls user code; the internal test TestExecuteCancellationCheckpoints
// covers it (and every other checkpoint) with an executor hook.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// contractAddArgs is the validated argument type of the contract's "add" tool.
type contractAddArgs struct {
	Left  int64 `json:"left"`
	Right int64 `json:"right"`
}

// contractCall builds a call from its name, arguments JSON and id.
func contractCall(t testing.TB, name, arguments, id string) toolcore.ToolCall {
	t.Helper()
	c, err := toolcore.NewToolCall(id, name, []byte(arguments))
	require.NoError(t, err)
	return c
}

// contractRegistry defines tools and registers them as one batch.
func contractRegistry(t testing.TB, tools ...toolcore.Tool) *toolcore.Registry {
	t.Helper()
	r, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	return r
}

// contractTool defines a tool with any argument type accepted verbatim and execute as its effect.
func contractTool(t testing.TB, name string, execute func(ctx context.Context, args map[string]any) (any, error)) toolcore.Tool {
	t.Helper()
	return toolcore.MustDefine(toolcore.Definition[map[string]any]{
		Name:        name,
		Description: "A tool of the contract tests.",
		Validate: func(a toolcore.Arguments) toolcore.Decision[map[string]any] {
			var v map[string]any
			if err := a.Decode(&v); err != nil {
				return toolcore.Reject[map[string]any](err.Error())
			}
			return toolcore.Accept(v)
		},
		Execute: execute,
	})
}

// Validation before effects, and its experiment: invalid arguments sent to the spy
// tool give TOOL_ARGUMENTS_INVALID and zero side effects; changing only the validator to accept
// runs the spy exactly once and succeeds.
func TestContractArgumentValidationRunsBeforeEffects(t *testing.T) {
	tests := []struct {
		name           string
		validate       func(toolcore.Arguments) toolcore.Decision[contractAddArgs]
		wantExecutions int32
		wantIsError    bool
		wantContent    string
	}{
		{
			name: "rejecting validator (the focused fragment)",
			validate: func(toolcore.Arguments) toolcore.Decision[contractAddArgs] {
				return toolcore.Reject[contractAddArgs]("left must be a number")
			},
			wantExecutions: 0,
			wantIsError:    true,
			wantContent:    `{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"left must be a number"}}`,
		},
		{
			name: "accepting validator (the experiment's only change)",
			validate: func(toolcore.Arguments) toolcore.Decision[contractAddArgs] {
				return toolcore.Accept(contractAddArgs{Left: 20, Right: 22})
			},
			wantExecutions: 1,
			wantIsError:    false,
			wantContent:    `{"unreachable":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var executions atomic.Int32
			var got contractAddArgs
			r := contractRegistry(t, toolcore.MustDefine(toolcore.Definition[contractAddArgs]{
				Name:        "add",
				Description: "Add numbers.",
				Validate:    tt.validate,
				Execute: func(_ context.Context, args contractAddArgs) (any, error) {
					executions.Add(1)
					got = args
					return map[string]any{"unreachable": true}, nil
				},
			}))

			res, err := toolcore.Execute(context.Background(), r,
				contractCall(t, "add", `{"left":"twenty","right":22}`, "call-invalid-add"))

			require.NoError(t, err)
			assert.Equal(t, "call-invalid-add", res.ToolCallID())
			assert.Equal(t, "add", res.ToolName())
			assert.Equal(t, tt.wantIsError, res.IsError())
			assert.Equal(t, tt.wantContent, res.Content())
			assert.Equal(t, tt.wantExecutions, executions.Load())
			if tt.wantExecutions > 0 {
				assert.Equal(t, contractAddArgs{Left: 20, Right: 22}, got, "execute gets the validated value")
			}
		})
	}
}

// A Tool definition is copied from its four fields, frozen, and insulated from later caller
// mutation.
func TestContractDefinitionIsCopiedOnceAndInsulated(t *testing.T) {
	def := toolcore.Definition[contractAddArgs]{
		Name:        "add",
		Description: "Add numbers.",
		Validate: func(toolcore.Arguments) toolcore.Decision[contractAddArgs] {
			return toolcore.Accept(contractAddArgs{Left: 20, Right: 22})
		},
		Execute: func(_ context.Context, a contractAddArgs) (any, error) {
			return map[string]any{"sum": a.Left + a.Right}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly, Timeout: time.Second},
	}
	tool, err := toolcore.Define(def)
	require.NoError(t, err)

	var hijacked atomic.Bool
	def.Name = "hijacked"
	def.Description = "Hijacked."
	def.Validate = func(toolcore.Arguments) toolcore.Decision[contractAddArgs] {
		hijacked.Store(true)
		return toolcore.Reject[contractAddArgs]("hijacked")
	}
	def.Execute = func(context.Context, contractAddArgs) (any, error) {
		hijacked.Store(true)
		return "hijacked", nil
	}
	def.Options.SideEffect = toolcore.Unsafe
	def.Options.Timeout = time.Hour

	assert.Equal(t, "add", tool.Name())
	assert.Equal(t, "Add numbers.", tool.Description())
	assert.Equal(t, toolcore.ReadOnly, tool.Options().SideEffect)
	assert.Equal(t, time.Second, tool.Options().Timeout)
	res, err := toolcore.Execute(context.Background(), contractRegistry(t, tool), contractCall(t, "add", `{}`, "call-add-1"))
	require.NoError(t, err)
	assert.Equal(t, `{"sum":42}`, res.Content())
	assert.False(t, hijacked.Load(), "a reassigned func must never run")
}

// registerMany validates the whole batch and all names before one registry mutation.
func TestContractRegisterManyChecksTheWholeBatchFirst(t *testing.T) {
	echo := contractTool(t, "echo", func(_ context.Context, a map[string]any) (any, error) { return a, nil })
	add := contractTool(t, "add", func(_ context.Context, a map[string]any) (any, error) { return a, nil })
	other := contractTool(t, "other", func(_ context.Context, a map[string]any) (any, error) { return a, nil })
	tests := []struct {
		name     string
		batch    []toolcore.Tool
		wantCode toolcore.ContractErrorCode
	}{
		{name: "zero Tool after a good one", batch: []toolcore.Tool{other, {}}, wantCode: toolcore.CodeInvalidToolBatch},
		{name: "duplicate inside the batch", batch: []toolcore.Tool{other, other}, wantCode: toolcore.CodeDuplicateToolName},
		{name: "duplicate of a registered tool last", batch: []toolcore.Tool{other, echo}, wantCode: toolcore.CodeDuplicateToolName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := contractRegistry(t, echo, add)

			err := r.RegisterMany(tt.batch...)

			var ce *toolcore.ContractError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.wantCode, ce.Code)
			assert.Equal(t, []string{"add", "echo"}, r.Names(), "a failing batch leaves the registry unchanged")
			_, found := r.Get("other")
			assert.False(t, found)
		})
	}
}

// Arguments are snapshotted and synchronously validated before execute can run.
func TestContractArgumentsAreSnapshottedAndValidatedFirst(t *testing.T) {
	raw := []byte(`{"left":20,"right":22}`)
	call, err := toolcore.NewToolCall("call-add-1", "add", raw)
	require.NoError(t, err)
	copy(raw, `{"left":99,"right":99}`) // the caller changes its bytes after the snapshot

	var mu sync.Mutex
	var events []string
	record := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	r := contractRegistry(t, toolcore.MustDefine(toolcore.Definition[contractAddArgs]{
		Name:        "add",
		Description: "Add numbers.",
		Validate: func(a toolcore.Arguments) toolcore.Decision[contractAddArgs] {
			record("validate " + string(a.Raw()))
			var v contractAddArgs
			if err := a.Decode(&v); err != nil {
				return toolcore.Reject[contractAddArgs](err.Error())
			}
			return toolcore.Accept(v)
		},
		Execute: func(_ context.Context, a contractAddArgs) (any, error) {
			record(fmt.Sprintf("execute %d+%d", a.Left, a.Right))
			return map[string]any{"sum": a.Left + a.Right}, nil
		},
	}))

	res, err := toolcore.Execute(context.Background(), r, call)

	require.NoError(t, err)
	assert.Equal(t, `{"sum":42}`, res.Content())
	assert.Equal(t, []string{`validate {"left":20,"right":22}`, "execute 20+22"}, events)
}

// Unknown tools and ordinary validation, execution or serialization failures become immutable,
// linked error results (never Go errors).
func TestContractFailuresBecomeLinkedErrorResults(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		wantCode toolcore.ErrorCode
		wantMsg  string
	}{
		{name: "unknown tool", tool: "nope", wantCode: toolcore.CodeToolNotFound, wantMsg: `Unknown Tool "nope"`},
		{name: "rejected arguments", tool: "rejects", wantCode: toolcore.CodeToolArgumentsInvalid, wantMsg: "left must be a number"},
		{name: "validator panics", tool: "validatorPanics", wantCode: toolcore.CodeToolValidationFailed, wantMsg: "validator exploded"},
		{name: "tool returns an error", tool: "fails", wantCode: toolcore.CodeToolExecutionFailed, wantMsg: "disk full"},
		{name: "tool panics", tool: "panics", wantCode: toolcore.CodeToolExecutionFailed, wantMsg: "tool exploded"},
		{name: "opaque output", tool: "opaque", wantCode: toolcore.CodeToolOutputSerializationFailed},
	}
	ok := func(toolcore.Arguments) toolcore.Decision[contractAddArgs] { return toolcore.Accept(contractAddArgs{}) }
	define := func(name string, validate func(toolcore.Arguments) toolcore.Decision[contractAddArgs], execute func(context.Context, contractAddArgs) (any, error)) toolcore.Tool {
		return toolcore.MustDefine(toolcore.Definition[contractAddArgs]{Name: name, Description: "d", Validate: validate, Execute: execute})
	}
	never := func(context.Context, contractAddArgs) (any, error) { panic("never runs") }
	r := contractRegistry(t,
		define("rejects", func(toolcore.Arguments) toolcore.Decision[contractAddArgs] {
			return toolcore.Reject[contractAddArgs]("left must be a number")
		}, never),
		define("validatorPanics", func(toolcore.Arguments) toolcore.Decision[contractAddArgs] { panic("validator exploded") }, never),
		define("fails", ok, func(context.Context, contractAddArgs) (any, error) { return nil, errors.New("disk full") }),
		define("panics", ok, func(context.Context, contractAddArgs) (any, error) { panic("tool exploded") }),
		define("opaque", ok, func(context.Context, contractAddArgs) (any, error) { return time.Unix(0, 0), nil }),
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := toolcore.Execute(context.Background(), r, contractCall(t, tt.tool, `{}`, "call-1"))

			require.NoError(t, err)
			assert.True(t, res.IsError())
			assert.Equal(t, tt.wantCode, res.ErrorCode())
			assert.Equal(t, "call-1", res.ToolCallID())
			assert.Equal(t, "tool-result-call-1", res.ID())
			assert.Equal(t, tt.tool, res.ToolName())
			if tt.wantMsg != "" {
				assert.Equal(t, tt.wantMsg, res.ErrorMessage())
			}
			assert.NotContains(t, res.Content(), "goroutine", "no stack trace reaches the model")
		})
	}
}

// Cancellation propagates before effects, while awaiting execution (even if the tool ignores its
// context) and after the tool returns; it never becomes a tool result.
func TestContractCancellationPropagates(t *testing.T) {
	cause := errors.New("agent run stopped")
	tests := []struct {
		name string
		// run executes one call with a cancelable ctx; it reports how often validate and execute ran.
		run            func(t *testing.T, ctx context.Context, cancel context.CancelCauseFunc) (toolcore.Result, error, int32, int32)
		wantValidated  int32
		wantExecutions int32
	}{
		{
			name: "before validation",
			//lint:ignore ST1008 the table returns the result and error of Execute followed by the two counters the assertions read
			run: func(t *testing.T, ctx context.Context, cancel context.CancelCauseFunc) (toolcore.Result, error, int32, int32) {
				var v, e atomic.Int32
				r := contractRegistry(t, contractCountingTool(&v, &e, nil, nil))
				cancel(cause)
				res, err := toolcore.Execute(ctx, r, contractCall(t, "spy", `{}`, "call-1"))
				return res, err, v.Load(), e.Load()
			},
			wantValidated: 0, wantExecutions: 0,
		},
		{
			name: "after validation, before effects",
			//lint:ignore ST1008 the table returns the result and error of Execute followed by the two counters the assertions read
			run: func(t *testing.T, ctx context.Context, cancel context.CancelCauseFunc) (toolcore.Result, error, int32, int32) {
				var v, e atomic.Int32
				r := contractRegistry(t, contractCountingTool(&v, &e, func() { cancel(cause) }, nil))
				res, err := toolcore.Execute(ctx, r, contractCall(t, "spy", `{}`, "call-1"))
				return res, err, v.Load(), e.Load()
			},
			wantValidated: 1, wantExecutions: 0,
		},
		{
			name: "while awaiting a tool that honours ctx",
			//lint:ignore ST1008 the table returns the result and error of Execute followed by the two counters the assertions read
			run: func(t *testing.T, ctx context.Context, cancel context.CancelCauseFunc) (toolcore.Result, error, int32, int32) {
				var v, e atomic.Int32
				started := make(chan struct{})
				r := contractRegistry(t, contractCountingTool(&v, &e, nil, func(ctx context.Context) {
					close(started)
					<-ctx.Done()
				}))
				go func() { <-started; cancel(cause) }()
				res, err := toolcore.Execute(ctx, r, contractCall(t, "spy", `{}`, "call-1"))
				return res, err, v.Load(), e.Load()
			},
			wantValidated: 1, wantExecutions: 1,
		},
		{
			name: "while awaiting a tool that ignores ctx",
			//lint:ignore ST1008 the table returns the result and error of Execute followed by the two counters the assertions read
			run: func(t *testing.T, ctx context.Context, cancel context.CancelCauseFunc) (toolcore.Result, error, int32, int32) {
				var v, e atomic.Int32
				started, release, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
				r := contractRegistry(t, contractCountingTool(&v, &e, nil, func(context.Context) {
					defer close(finished)
					close(started)
					<-release // only the test ends it, after Execute has returned
				}))
				go func() { <-started; cancel(cause) }()
				res, err := toolcore.Execute(ctx, r, contractCall(t, "spy", `{}`, "call-1"))
				select {
				case <-finished:
					t.Error("Execute waited for a tool that ignores its context")
				default:
				}
				close(release)
				<-finished
				return res, err, v.Load(), e.Load()
			},
			wantValidated: 1, wantExecutions: 1,
		},
		{
			name: "after the tool returns",
			//lint:ignore ST1008 the table returns the result and error of Execute followed by the two counters the assertions read
			run: func(t *testing.T, ctx context.Context, cancel context.CancelCauseFunc) (toolcore.Result, error, int32, int32) {
				var v, e atomic.Int32
				r := contractRegistry(t, contractCountingTool(&v, &e, nil, func(context.Context) { cancel(cause) }))
				res, err := toolcore.Execute(ctx, r, contractCall(t, "spy", `{}`, "call-1"))
				return res, err, v.Load(), e.Load()
			},
			wantValidated: 1, wantExecutions: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)

			res, err, validated, executed := tt.run(t, ctx, cancel)

			assert.ErrorIs(t, err, cause)
			assert.True(t, res.IsZero(), "cancellation gives no result")
			assert.Equal(t, tt.wantValidated, validated)
			assert.Equal(t, tt.wantExecutions, executed)
		})
	}
}

// contractCountingTool is a tool "spy" that counts validations and executions; beforeAccept runs in
// the validator, during in Execute (which then succeeds).
func contractCountingTool(validated, executed *atomic.Int32, beforeAccept func(), during func(context.Context)) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[struct{}]{
		Name:        "spy",
		Description: "Counts what runs.",
		Validate: func(toolcore.Arguments) toolcore.Decision[struct{}] {
			validated.Add(1)
			if beforeAccept != nil {
				beforeAccept()
			}
			return toolcore.Accept(struct{}{})
		},
		Execute: func(ctx context.Context, _ struct{}) (any, error) {
			executed.Add(1)
			if during != nil {
				during(ctx)
			}
			return map[string]any{"ok": true}, nil
		},
	})
}

// NonRecoverableToolError is a look-alike of toolcore's fatal error: same name, same fields, in
// another package.
type NonRecoverableToolError struct{ Message string }

func (e *NonRecoverableToolError) Error() string { return e.Message }

// forgedApplicationError looks like a temporal.ApplicationError of type "NonRecoverableToolError".
type forgedApplicationError struct{ msg string }

func (e *forgedApplicationError) Error() string      { return e.msg }
func (e *forgedApplicationError) Type() string       { return "NonRecoverableToolError" }
func (e *forgedApplicationError) NonRetryable() bool { return true }

// A genuine NonRecoverableToolError escapes the recoverable boundary; look-alikes (a struct
// literal of the type, a same-named type, a Temporal-like application error, a ContractError from
// tool code) stay recoverable TOOL_EXECUTION_FAILED results.
func TestContractOnlyGenuineNonRecoverableErrorsEscape(t *testing.T) {
	genuine := toolcore.NewNonRecoverableToolError("ledger corrupted")
	tests := []struct {
		name      string
		give      func() error // what the tool returns (or panics with, when panics is set)
		panics    bool
		wantFatal bool
		wantMsg   string // of the TOOL_EXECUTION_FAILED result
	}{
		{name: "genuine", give: func() error { return genuine }, wantFatal: true},
		{name: "genuine wrapped with %w", give: func() error { return fmt.Errorf("charge card: %w", genuine) }, wantFatal: true},
		{name: "genuine in errors.Join", give: func() error { return errors.Join(errors.New("first"), genuine) }, wantFatal: true},
		{name: "genuine behind a look-alike in errors.Join", give: func() error { return errors.Join(&toolcore.NonRecoverableToolError{}, genuine) }, wantFatal: true},
		{name: "genuine wrapping a cause", give: func() error { return toolcore.WrapNonRecoverable(errors.New("io"), "state lost") }, wantFatal: true},
		{name: "genuine marked transient", give: func() error { return toolcore.Transient(genuine) }, wantFatal: true},
		{name: "genuine panic value", give: func() error { return genuine }, panics: true, wantFatal: true},
		{name: "struct literal of the fatal type", give: func() error { return &toolcore.NonRecoverableToolError{} }, wantMsg: "non-recoverable tool error"},
		{name: "struct literal wrapped", give: func() error { return fmt.Errorf("x: %w", &toolcore.NonRecoverableToolError{}) }, wantMsg: "x: non-recoverable tool error"},
		{name: "same-named type of another package", give: func() error { return &NonRecoverableToolError{Message: "forged"} }, wantMsg: "forged"},
		{name: "temporal-like application error", give: func() error { return &forgedApplicationError{msg: "forged app error"} }, wantMsg: "forged app error"},
		{name: "ContractError from tool code", give: func() error {
			return &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "forged"}
		}, wantMsg: "INVALID_TOOL_CALL: forged"},
		{name: "look-alike panic value", give: func() error { return &NonRecoverableToolError{Message: "forged panic"} }, panics: true, wantMsg: "forged panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := contractRegistry(t, contractTool(t, "risky", func(context.Context, map[string]any) (any, error) {
				if tt.panics {
					panic(tt.give())
				}
				return nil, tt.give()
			}))

			res, err := toolcore.Execute(context.Background(), r, contractCall(t, "risky", `{}`, "call-1"))

			if tt.wantFatal {
				var fatal *toolcore.NonRecoverableToolError
				require.ErrorAs(t, err, &fatal)
				_, genuineFound := toolcore.AsNonRecoverable(err)
				assert.True(t, genuineFound)
				assert.True(t, res.IsZero(), "a fatal error gives no result")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, toolcore.CodeToolExecutionFailed, res.ErrorCode())
			assert.Equal(t, tt.wantMsg, res.ErrorMessage())
		})
	}
}

// Serialized content never exceeds 4096 Unicode code points including one truncation marker, and
// the result stays a success.
func TestContractContentIsCappedWithOneMarker(t *testing.T) {
	tests := []struct {
		name   string
		output any
	}{
		{name: "8-million-character string", output: strings.Repeat("a", 8<<20)},
		{name: "multi-byte characters", output: strings.Repeat("é🙂", 10000)},
		{name: "many entries", output: manyEntries(100000)},
		{name: "deep nesting", output: deepNesting(1000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := contractRegistry(t, contractTool(t, "big", func(context.Context, map[string]any) (any, error) { return tt.output, nil }))

			res, err := toolcore.Execute(context.Background(), r, contractCall(t, "big", `{}`, "call-1"))

			require.NoError(t, err)
			assert.False(t, res.IsError())
			assert.LessOrEqual(t, utf8.RuneCountInString(res.Content()), toolcore.MaxContentCodePoints)
			assert.True(t, strings.HasSuffix(res.Content(), toolcore.TruncationMarker))
			assert.Equal(t, 1, strings.Count(res.Content(), toolcore.TruncationMarker))
		})
	}
}

func manyEntries(n int) map[string]int {
	m := make(map[string]int, n)
	for i := range n {
		m[fmt.Sprintf("key-%06d", i)] = i
	}
	return m
}

func deepNesting(n int) any {
	var v any = "bottom"
	for range n {
		v = []any{v}
	}
	return v
}

// Independent parallel executions do not cross-wire calls, contexts or results.
func TestContractParallelExecutionsAreIndependent(t *testing.T) {
	r := contractRegistry(t, toolcore.MustDefine(toolcore.Definition[contractAddArgs]{
		Name:        "add",
		Description: "Add numbers.",
		Validate: func(a toolcore.Arguments) toolcore.Decision[contractAddArgs] {
			var v contractAddArgs
			if err := a.Decode(&v); err != nil {
				return toolcore.Reject[contractAddArgs](err.Error())
			}
			return toolcore.Accept(v)
		},
		Execute: func(ctx context.Context, a contractAddArgs) (any, error) {
			return map[string]any{"call": toolcore.ToolCallID(ctx), "sum": a.Left + a.Right}, nil
		},
	}))
	const n = 64
	results := make([]toolcore.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			call := contractCall(t, "add", fmt.Sprintf(`{"left":%d,"right":%d}`, i, i), fmt.Sprintf("call-%d", i))
			results[i], errs[i] = toolcore.Execute(context.Background(), r, call)
		})
	}
	wg.Wait()

	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, fmt.Sprintf("call-%d", i), results[i].ToolCallID())
		assert.Equal(t, fmt.Sprintf(`{"call":"call-%d","sum":%d}`, i, 2*i), results[i].Content())
	}
}

// Snapshot isolation: a run pins the tool set it started with.
func TestContractSnapshotIsolation(t *testing.T) {
	r := contractRegistry(t, contractTool(t, "echo", func(_ context.Context, a map[string]any) (any, error) { return a, nil }))
	snap := r.Snapshot()

	require.NoError(t, r.Register(contractTool(t, "late", func(_ context.Context, a map[string]any) (any, error) { return a, nil })))
	res, err := toolcore.Execute(context.Background(), snap, contractCall(t, "late", `{}`, "call-1"))

	require.NoError(t, err)
	assert.Equal(t, toolcore.CodeToolNotFound, res.ErrorCode())
	assert.Equal(t, []string{"echo"}, snap.Names())
	assert.Equal(t, []string{"echo", "late"}, r.Names())
}
