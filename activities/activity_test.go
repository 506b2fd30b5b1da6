package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

type empty struct{}

// tool defines a tool without arguments from an Execute func.
func tool(name string, opts toolcore.Options, run func(ctx context.Context) (any, error)) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[empty]{
		Name:        name,
		Description: "test tool",
		Validate:    func(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Accept(empty{}) },
		Execute:     func(ctx context.Context, _ empty) (any, error) { return run(ctx) },
		Options:     opts,
	})
}

func returning(output any, err error) func(context.Context) (any, error) {
	return func(context.Context) (any, error) { return output, err }
}

func input(name string) activities.ExecuteToolInput {
	return activities.ExecuteToolInput{ToolCallID: "call-1", ToolName: name, Accepted: json.RawMessage(`{}`), IdempotencyKey: "toolcall-call-1"}
}

// execute runs ExecuteTool once in the activity test environment; parent, when not nil, is the
// root of the activity's context (cancel it to simulate the server or the worker).
func execute(t *testing.T, reg *toolcore.Registry, in activities.ExecuteToolInput, parent context.Context) (activities.ExecuteToolOutput, error) {
	t.Helper()
	return executeDrained(t, reg, nil, in, parent)
}

func newRegistry(t *testing.T, tools ...toolcore.Tool) *toolcore.Registry {
	t.Helper()
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	return reg
}

func errContent(code, msg string) string {
	b, err := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestExecuteToolResults(t *testing.T) {
	readOnly := toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3}
	lookalike := temporal.NewNonRetryableApplicationError("stop", wire.ErrTypeNonRecoverable, nil)
	reg := newRegistry(t,
		tool("ok", toolcore.Options{}, returning(map[string]int{"sum": 42}, nil)),
		tool("values", toolcore.Options{}, func(ctx context.Context) (any, error) {
			return []any{toolcore.ToolCallID(ctx), toolcore.Attempt(ctx), toolcore.IdempotencyKey(ctx)}, nil
		}),
		tool("fails", toolcore.Options{}, returning(nil, errors.New("upstream said no"))),
		tool("panics", toolcore.Options{}, func(context.Context) (any, error) { panic("exploded") }),
		tool("goexit", toolcore.Options{}, func(context.Context) (any, error) { runtime.Goexit(); return nil, nil }),
		tool("lookalike", toolcore.Options{}, returning(nil, lookalike)),
		tool("literal", toolcore.Options{}, returning(nil, &toolcore.NonRecoverableToolError{})),
		tool("transient_unsafe", toolcore.Options{}, returning(nil, toolcore.Transient(errors.New("later")))),
		tool("transient_readonly", readOnly, returning(nil, toolcore.Transient(errors.New("later")))),
		tool("retry_after_unsafe", toolcore.Options{}, returning(nil, toolcore.RetryAfter(errors.New("429, retry after 2 s"), 2*time.Second))),
		tool("huge", toolcore.Options{}, returning(string(make([]byte, 1<<20)), nil)),
	)
	lastOf3 := input("transient_readonly")
	lastOf3.MaxAttempts = 1
	tests := []struct {
		name string
		give activities.ExecuteToolInput
		want activities.ExecuteToolOutput
	}{
		{name: "success", give: input("ok"), want: activities.ExecuteToolOutput{Content: `{"sum":42}`}},
		{name: "execution values", give: input("values"), want: activities.ExecuteToolOutput{Content: `["call-1",1,"toolcall-call-1"]`}},
		{name: "tool error", give: input("fails"), want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", "upstream said no"), IsError: true}},
		{name: "tool panic", give: input("panics"), want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", "exploded"), IsError: true}},
		{name: "tool calling runtime.Goexit", give: input("goexit"), want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", "tool exited without returning (runtime.Goexit)"), IsError: true}},
		{name: "look-alike ApplicationError", give: input("lookalike"), want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", toolcore.ErrorText(lookalike)), IsError: true}},
		{name: "struct literal of the fatal type", give: input("literal"), want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", toolcore.ErrorText(&toolcore.NonRecoverableToolError{})), IsError: true}},
		{name: "transient error of an unsafe tool is final", give: input("transient_unsafe"), want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", "later"), IsError: true}},
		{name: "RetryAfter of an unsafe tool is final: its effect may have happened", give: input("retry_after_unsafe"), want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", "429, retry after 2 s"), IsError: true}},
		{name: "transient error on the last attempt is final", give: lastOf3, want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", "later"), IsError: true}},
		{name: "transient error without a known attempt limit is final", give: input("transient_readonly"), want: activities.ExecuteToolOutput{Content: errContent("TOOL_EXECUTION_FAILED", "later"), IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := execute(t, reg, tt.give, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestExecuteToolBoundsContent(t *testing.T) {
	reg := newRegistry(t, tool("huge", toolcore.Options{}, returning(string(make([]rune, 1<<20)), nil)))
	got, err := execute(t, reg, input("huge"), nil)
	require.NoError(t, err)
	assert.LessOrEqual(t, len([]rune(got.Content)), toolcore.MaxContentCodePoints)
	assert.Contains(t, got.Content, toolcore.TruncationMarker)
	assert.False(t, got.IsError)
}

func TestExecuteToolErrors(t *testing.T) {
	readOnly := toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3}
	reg := newRegistry(t,
		tool("fatal", toolcore.Options{}, returning(nil, toolcore.NewNonRecoverableToolError("ledger mismatch"))),
		tool("fatal_wrapped", toolcore.Options{}, returning(nil, errors.Join(errors.New("x"), toolcore.WrapNonRecoverable(errors.New("disk"), "storage corrupted")))),
		tool("fatal_transient", readOnly, returning(nil, toolcore.Transient(toolcore.NewNonRecoverableToolError("fatal wins")))),
		tool("transient", readOnly, returning(nil, toolcore.Transient(errors.New("rate limited")))),
		tool("retry_after", readOnly, returning(nil, toolcore.RetryAfter(errors.New("429"), 2*time.Second))),
	)
	withAttempts := func(in activities.ExecuteToolInput, n int) activities.ExecuteToolInput {
		in.MaxAttempts = n
		return in
	}
	blankID := input("fatal")
	blankID.ToolCallID = " "
	tests := []struct {
		name             string
		give             activities.ExecuteToolInput
		wantType         string
		wantMessage      string
		wantNonRetryable bool
		wantRetryDelay   time.Duration // the ApplicationError's NextRetryDelay
	}{
		{name: "genuine fatal", give: input("fatal"), wantType: wire.ErrTypeNonRecoverable, wantMessage: "ledger mismatch", wantNonRetryable: true},
		{name: "genuine fatal in a chain", give: input("fatal_wrapped"), wantType: wire.ErrTypeNonRecoverable,
			wantMessage: toolcore.ErrorText(toolcore.WrapNonRecoverable(errors.New("disk"), "storage corrupted")), wantNonRetryable: true},
		{name: "fatal beats transient", give: withAttempts(input("fatal_transient"), 3), wantType: wire.ErrTypeNonRecoverable, wantMessage: "fatal wins", wantNonRetryable: true},
		{name: "transient before the last attempt", give: withAttempts(input("transient"), 3), wantType: wire.ErrTypeTransient, wantMessage: "rate limited"},
		{name: "RetryAfter before the last attempt asks for its delay", give: withAttempts(input("retry_after"), 3), wantType: wire.ErrTypeTransient, wantMessage: "429", wantRetryDelay: 2 * time.Second},
		{name: "tool not registered", give: input("missing"), wantType: wire.ErrTypeToolNotRegistered,
			wantMessage: `tool "missing" is not registered on the worker of this task queue; it did not run`, wantNonRetryable: true},
		{name: "invalid input", give: blankID, wantType: wire.ErrTypeInvalidInput, wantNonRetryable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := execute(t, reg, tt.give, nil)
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, err, &appErr)
			assert.Equal(t, tt.wantType, appErr.Type())
			assert.Equal(t, tt.wantNonRetryable, appErr.NonRetryable())
			assert.Equal(t, tt.wantRetryDelay, appErr.NextRetryDelay())
			if tt.wantMessage != "" {
				assert.Equal(t, tt.wantMessage, appErr.Message())
			}
		})
	}
}

// TestExecuteToolCancellation simulates the server's cancel (a CanceledError cause, as the SDK sets
// it from a heartbeat response) and a worker stop (any other cause) while the tool runs.
func TestExecuteToolCancellation(t *testing.T) {
	serverCancel := temporal.NewCanceledError()
	workerStop := errors.New("worker is stopping")
	tests := []struct {
		name        string
		cause       error
		before      bool                                   // cancel before the attempt starts
		run         func(ctx context.Context) (any, error) // runs after the cancel
		wantRuns    int
		wantCancel  bool
		wantType    string // ApplicationError type, when not canceled
		wantContent string // result content, when neither
	}{
		{name: "server cancel before start", cause: serverCancel, before: true, run: returning("ran", nil), wantRuns: 0, wantCancel: true},
		{name: "server cancel, tool stops", cause: serverCancel, run: func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() }, wantRuns: 1, wantCancel: true},
		{name: "server cancel, tool returns a result anyway", cause: serverCancel, run: returning("done", nil), wantRuns: 1, wantCancel: true},
		{name: "server cancel, tool returns a fatal error", cause: serverCancel, run: returning(nil, toolcore.NewNonRecoverableToolError("x")), wantRuns: 1, wantCancel: true},
		{name: "worker stop, tool stops", cause: workerStop, run: func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() }, wantRuns: 1, wantType: wire.ErrTypeInterrupted},
		{name: "worker stop, tool finishes", cause: workerStop, run: returning("done", nil), wantRuns: 1, wantContent: `"done"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.Background())
			t.Cleanup(func() { cancel(nil) })
			var runs atomic.Int64
			var sawCause atomic.Value
			reg := newRegistry(t, tool("t", toolcore.Options{}, func(ctx context.Context) (any, error) {
				runs.Add(1)
				cancel(tt.cause)
				out, err := tt.run(ctx)
				sawCause.Store(errors.Is(context.Cause(ctx), tt.cause))
				return out, err
			}))
			if tt.before {
				cancel(tt.cause)
			}
			got, err := execute(t, reg, input("t"), parent)
			assert.Equal(t, tt.wantRuns, int(runs.Load()))
			if tt.wantRuns > 0 {
				assert.Equal(t, true, sawCause.Load(), "the tool's context carries the cancellation cause")
			}
			assert.Equal(t, tt.wantCancel, temporal.IsCanceledError(err), "canceled: %v", err)
			var appErr *temporal.ApplicationError
			assert.Equal(t, tt.wantType != "", errors.As(err, &appErr), "application error: %v", err)
			if appErr != nil {
				assert.Equal(t, tt.wantType, appErr.Type())
				assert.False(t, appErr.NonRetryable())
			}
			assert.Equal(t, tt.wantContent, got.Content)
		})
	}
}

// An attempt its worker cuts off (wire.ErrTypeInterrupted) carries its latest checkpoint as the
// error's details: no heartbeat timeout brings it to the workflow, which gives it to the Reconcile
// of an Unsafe tool. Without a checkpoint the error has no details.
func TestExecuteToolInterruptedCarriesCheckpoint(t *testing.T) {
	for _, checkpoint := range []bool{true, false} {
		t.Run(map[bool]string{true: "checkpoint", false: "none"}[checkpoint], func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.Background())
			t.Cleanup(func() { cancel(nil) })
			reg := newRegistry(t, tool("t", toolcore.Options{}, func(ctx context.Context) (any, error) {
				if checkpoint {
					if err := toolcore.Checkpoint(ctx, map[string]string{"job": "j-7"}); err != nil {
						return nil, err
					}
				}
				cancel(errors.New("worker is stopping"))
				<-ctx.Done()
				return nil, ctx.Err()
			}))
			_, err := execute(t, reg, input("t"), parent)
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, err, &appErr)
			assert.Equal(t, wire.ErrTypeInterrupted, appErr.Type())
			assert.Equal(t, checkpoint, appErr.HasDetails())
			if checkpoint {
				var cp json.RawMessage
				require.NoError(t, appErr.Details(&cp))
				assert.JSONEq(t, `{"job":"j-7"}`, string(cp))
			}
		})
	}
}

// TestExecuteToolHeartbeatsCarryProgress: a progress report reaches the server as heartbeat
// details at once (the loop itself is tested in heartbeat_internal_test.go).
func TestExecuteToolHeartbeatsCarryProgress(t *testing.T) {
	seen := make(chan *toolcore.Progress, 16)
	report := toolcore.Progress{Completed: 2, Total: 3, Message: strings.Repeat("é", 1000)}
	reg := newRegistry(t, tool("progress", toolcore.Options{}, func(ctx context.Context) (any, error) {
		toolcore.ReportProgress(ctx, report)
		return <-seen, nil // returns only once a heartbeat carried the report
	}))
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var p toolcore.Progress
		if assert.True(t, details.HasValues()) && assert.NoError(t, details.Get(&p)) {
			seen <- &p
		}
	})
	(&activities.Activities{Registry: reg}).Register(env)
	val, err := env.ExecuteActivity(wire.ExecuteToolName, input("progress"))
	require.NoError(t, err)
	var out activities.ExecuteToolOutput
	require.NoError(t, val.Get(&out))
	want := report
	want.Message = strings.Repeat("é", activities.MaxProgressMessageBytes/2) // bounded
	var got toolcore.Progress
	require.NoError(t, json.Unmarshal([]byte(out.Content), &got))
	assert.Equal(t, want, got)
}

// TestExecuteToolResultCarriesLastProgress: the result carries the progress window, the last
// report included, also reports made just before returning that no heartbeat carried (issue 23);
// none without reports.
func TestExecuteToolResultCarriesLastProgress(t *testing.T) {
	reg := newRegistry(t,
		tool("reports", toolcore.Options{}, func(ctx context.Context) (any, error) {
			for k := range int64(4) {
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: k, Total: 3, Message: "step"})
			}
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 3, Total: 3, Message: "done"})
			return "ok", nil
		}),
		tool("silent", toolcore.Options{}, func(context.Context) (any, error) { return "ok", nil }))
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	(&activities.Activities{Registry: reg}).Register(env)
	val, err := env.ExecuteActivity(wire.ExecuteToolName, input("reports"))
	require.NoError(t, err)
	var out activities.ExecuteToolOutput
	require.NoError(t, val.Get(&out))
	step := func(k int64) wire.ProgressDetails {
		return wire.ProgressDetails{Completed: k, Total: 3, Message: "step"}
	}
	all := &wire.ProgressWindow{ProgressDetails: wire.ProgressDetails{Completed: 3, Total: 3, Message: "done"}, Seq: 5,
		Earlier: []wire.ProgressDetails{step(0), step(1), step(2), step(3)}}
	assert.Equal(t, all, out.Progress, "every report, numbered from 1, the last one latest")

	val, err = env.ExecuteActivity(wire.ExecuteToolName, input("silent"))
	require.NoError(t, err)
	out = activities.ExecuteToolOutput{}
	require.NoError(t, val.Get(&out))
	assert.Nil(t, out.Progress)

	// A retried attempt numbers on from the previous attempt's last heartbeat, so a reader's
	// numbers only grow within the activity; details of the older shape count as none.
	for _, tt := range []struct {
		previous any
		wantSeq  int64
	}{
		{previous: wire.ProgressWindow{ProgressDetails: wire.ProgressDetails{Completed: 9}, Seq: 7}, wantSeq: 12},
		{previous: wire.ProgressDetails{Completed: 9}, wantSeq: 5},
	} {
		env := suite.NewTestActivityEnvironment()
		(&activities.Activities{Registry: reg}).Register(env)
		env.SetHeartbeatDetails(tt.previous)
		val, err = env.ExecuteActivity(wire.ExecuteToolName, input("reports"))
		require.NoError(t, err)
		out = activities.ExecuteToolOutput{}
		require.NoError(t, val.Get(&out))
		want := *all
		want.Seq = tt.wantSeq
		assert.Equal(t, &want, out.Progress, "numbered on from %v", tt.previous)
	}
}
