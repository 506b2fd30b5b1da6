package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// executeDrained runs ExecuteTool once in the activity test environment with Drain d (nil for
// none); parent, when not nil, is the root of the activity's context (cancel it to simulate the
// server or the worker).
func executeDrained(t *testing.T, reg *toolcore.Registry, d *activities.Drain, in activities.ExecuteToolInput, parent context.Context) (activities.ExecuteToolOutput, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	if parent != nil {
		env.SetWorkerOptions(worker.Options{BackgroundActivityContext: parent})
	}
	(&activities.Activities{Registry: reg, Drain: d}).Register(env)
	val, err := env.ExecuteActivity(wire.ExecuteToolName, in)
	if err != nil {
		return activities.ExecuteToolOutput{}, err
	}
	var out activities.ExecuteToolOutput
	require.NoError(t, val.Get(&out))
	return out, nil
}

// appError returns err's ApplicationError, failing the test without one.
func appError(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	return appErr
}

// A graceful stop (Drain.Interrupt, or the SDK's own stop timeout: worker.ErrWorkerShutdown)
// ends a retried tool's attempt as ToolDrained, whose details let the workflow schedule it again
// without counting it; an Unsafe tool's as ToolInterrupted (outcome unknown, reconciled); any
// other worker-side stop as ToolInterrupted, as before.
func TestExecuteToolDrained(t *testing.T) {
	tests := []struct {
		name     string
		side     toolcore.SideEffect
		sdkStop  bool  // the SDK's stop timeout cancels the root context instead of the Drain
		cause    error // with sdkStop: the root context's cause
		resume   *activities.DrainedAttempt
		wantType string
		wantPrev int // DrainedAttempt.Attempts
	}{
		{name: "idempotent", side: toolcore.Idempotent, wantType: wire.ErrTypeDrained, wantPrev: 0},
		{name: "read-only", side: toolcore.ReadOnly, wantType: wire.ErrTypeDrained, wantPrev: 0},
		{name: "unsafe", side: toolcore.Unsafe, wantType: wire.ErrTypeInterrupted},
		{name: "resumed after two spent attempts", side: toolcore.Idempotent, resume: &activities.DrainedAttempt{Attempts: 2, ProgressSeq: 4}, wantType: wire.ErrTypeDrained, wantPrev: 2},
		{name: "the SDK's stop timeout", side: toolcore.Idempotent, sdkStop: true, cause: worker.ErrWorkerShutdown, wantType: wire.ErrTypeDrained},
		{name: "another worker-side stop", side: toolcore.Idempotent, sdkStop: true, cause: errors.New("paused"), wantType: wire.ErrTypeInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := activities.NewDrain()
			parent, cancel := context.WithCancelCause(context.Background())
			t.Cleanup(func() { cancel(nil) })
			var attempt atomic.Int64
			opts := toolcore.Options{SideEffect: tt.side}
			if tt.side != toolcore.Unsafe {
				opts.MaxAttempts = 5
			}
			reg := newRegistry(t, tool("t", opts, func(ctx context.Context) (any, error) {
				attempt.Store(int64(toolcore.Attempt(ctx)))
				if err := toolcore.Checkpoint(ctx, map[string]int{"next": 3}); err != nil {
					return nil, err
				}
				if tt.sdkStop {
					cancel(tt.cause)
				} else {
					assert.Equal(t, 1, d.Interrupt(), "one attempt running")
				}
				<-ctx.Done()
				return nil, context.Cause(ctx)
			}))
			in := input("t")
			in.MaxAttempts = 5
			in.Resume = tt.resume
			_, err := executeDrained(t, reg, d, in, parent)
			appErr := appError(t, err)
			assert.Equal(t, tt.wantType, appErr.Type(), "%v", err)
			assert.False(t, appErr.NonRetryable(), "the workflow's retry policy decides")
			wantAttempt := 1
			if tt.resume != nil {
				wantAttempt += tt.resume.Attempts
			}
			assert.EqualValues(t, wantAttempt, attempt.Load(), "the tool's attempt number continues over drained attempts")
			if tt.wantType != wire.ErrTypeDrained {
				return
			}
			var got activities.DrainedAttempt
			require.NoError(t, appErr.Details(&got))
			assert.Equal(t, tt.wantPrev, got.Attempts, "attempts spent before the drained one")
			assert.JSONEq(t, `{"next":3}`, string(got.Checkpoint), "the drained attempt's checkpoint goes to the next")
			if tt.resume != nil {
				assert.GreaterOrEqual(t, got.ProgressSeq, tt.resume.ProgressSeq, "progress numbers only grow")
			}
			assert.Zero(t, d.Running(), "the attempt left the drain when it ended")
		})
	}
}

// An attempt that starts after Interrupt never runs its tool, so even an Unsafe call is drained
// (it did nothing) and goes on elsewhere; a resumed attempt hands the drained one's checkpoint to
// the tool.
func TestExecuteToolDrainedBeforeStart(t *testing.T) {
	d := activities.NewDrain()
	d.Interrupt()
	var runs atomic.Int64
	reg := newRegistry(t, tool("t", toolcore.Options{SideEffect: toolcore.Unsafe}, func(context.Context) (any, error) {
		runs.Add(1)
		return "ran", nil
	}))
	in := input("t")
	in.Resume = &activities.DrainedAttempt{Checkpoint: json.RawMessage(`{"next":2}`)}
	_, err := executeDrained(t, reg, d, in, nil)
	appErr := appError(t, err)
	assert.Equal(t, wire.ErrTypeDrained, appErr.Type())
	assert.Zero(t, runs.Load(), "the tool never ran")
	var got activities.DrainedAttempt
	require.NoError(t, appErr.Details(&got))
	assert.JSONEq(t, `{"next":2}`, string(got.Checkpoint))

	// Without a drain, the resumed attempt runs with the checkpoint it was handed.
	var seen map[string]int
	reg = newRegistry(t, tool("t", toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 3}, func(ctx context.Context) (any, error) {
		if _, err := toolcore.LastCheckpoint(ctx, &seen); err != nil {
			return nil, err
		}
		return toolcore.Attempt(ctx), nil
	}))
	in.Resume.Attempts = 1
	out, err := executeDrained(t, reg, nil, in, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"next": 2}, seen)
	assert.Equal(t, "2", out.Content, "attempt 2: one attempt was spent before the drain")
}

// A transient error on the call's last attempt is its final result, counting the attempts spent
// before a drain: with MaxAttempts 3 and 2 spent, the resumed ExecuteTool's first attempt is the
// last.
func TestExecuteToolLastAttemptCountsResume(t *testing.T) {
	reg := newRegistry(t, tool("t", toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 3}, returning(nil, toolcore.Transient(errors.New("busy")))))
	in := input("t")
	in.MaxAttempts = 3
	in.Resume = &activities.DrainedAttempt{Attempts: 2}
	out, err := executeDrained(t, reg, nil, in, nil)
	require.NoError(t, err, "the last attempt's transient error is a result, not a retry")
	assert.True(t, out.IsError)

	in.Resume.Attempts = 1
	_, err = executeDrained(t, reg, nil, in, nil)
	assert.Equal(t, wire.ErrTypeTransient, appError(t, err).Type(), "attempt 2 of 3 is retried")
}
