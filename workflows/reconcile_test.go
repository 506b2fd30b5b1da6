package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// reconciling defines an Unsafe tool "pay" whose Reconcile is rec; Execute is mocked by the test.
func reconciling(rerun bool, rec func(ctx context.Context, key string) (any, bool, error)) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[empty]{
		Name:        "pay",
		Description: "pays once",
		Validate:    acceptAll,
		Execute:     func(context.Context, empty) (any, error) { return "paid", nil },
		Options:     toolcore.Options{RerunWhenNotReconciled: rerun},
		Reconcile:   rec,
	})
}

func TestToolCallWorkflowReconcile(t *testing.T) {
	lost := temporal.NewHeartbeatTimeoutError()
	notRegistered := temporal.NewNonRetryableApplicationError(`tool "pay" is not registered`, wire.ErrTypeToolNotRegistered, nil)
	unknown := workflows.OutcomeUnknownMessage + " (no heartbeat within 1m0s: worker lost or stalled)"
	found := func(context.Context, string) (any, bool, error) { return map[string]any{"receipt": "r-1"}, true, nil }
	notFound := func(context.Context, string) (any, bool, error) { return nil, false, nil }
	failing := func(context.Context, string) (any, bool, error) { return nil, false, errors.New("ledger unavailable") }
	tests := []struct {
		name           string
		tool           toolcore.Tool
		firstFailure   error
		want           string
		wantExecutes   int64
		wantReconciles int64
	}{
		{name: "found: the reconciled output is the result", tool: reconciling(false, found), firstFailure: lost,
			want: `{"receipt":"r-1"}`, wantExecutes: 1, wantReconciles: 1},
		{name: "not found: outcome unknown", tool: reconciling(false, notFound), firstFailure: lost,
			want: errContent(unknown + "; Reconcile found no sign of its effect; unsafe calls are not retried"), wantExecutes: 1, wantReconciles: 1},
		{name: "not found, rerun declared safe: one more attempt", tool: reconciling(true, notFound), firstFailure: lost,
			want: `"ok"`, wantExecutes: 2, wantReconciles: 1},
		{name: "reconcile keeps failing: bounded", tool: reconciling(true, failing), firstFailure: lost,
			want:         errContent(unknown + "; Reconcile failed after 5 attempts (last: reconcile: ledger unavailable); unsafe calls are not retried"),
			wantExecutes: 1, wantReconciles: 5},
		{name: "a failure that proves no run is not reconciled", tool: reconciling(true, found), firstFailure: notRegistered,
			want: errContent(`tool "pay" is not registered`), wantExecutes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var executes, reconciles atomic.Int64
			got := runWorkflow(t, newRegistry(t, tt.tool), call("c1", "pay", `{}`), runOptions{setup: func(env *testsuite.TestWorkflowEnvironment) {
				env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).Return(
					func(context.Context, activities.ExecuteToolInput) (activities.ExecuteToolOutput, error) {
						if executes.Add(1) == 1 {
							return activities.ExecuteToolOutput{}, tt.firstFailure
						}
						return activities.ExecuteToolOutput{Content: `"ok"`}, nil
					})
				env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
					if info.ActivityType.Name == wire.ReconcileToolName {
						reconciles.Add(1)
					}
				})
			}})
			require.NoError(t, got.err)
			assert.Equal(t, tt.want, got.result.Content())
			assert.Equal(t, tt.wantExecutes, executes.Load())
			assert.Equal(t, tt.wantReconciles, reconciles.Load())
		})
	}
}

func TestReconcileOnlyForUnsafeTools(t *testing.T) {
	_, err := toolcore.Define(toolcore.Definition[empty]{
		Name: "x", Description: "x", Validate: acceptAll,
		Execute:   func(context.Context, empty) (any, error) { return nil, nil },
		Options:   toolcore.Options{SideEffect: toolcore.Idempotent},
		Reconcile: func(context.Context, string) (any, bool, error) { return nil, false, nil },
	})
	var ce *toolcore.ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, toolcore.CodeInvalidToolDefinition, ce.Code)

	_, err = toolcore.Define(toolcore.Definition[empty]{
		Name: "x", Description: "x", Validate: acceptAll,
		Execute: func(context.Context, empty) (any, error) { return nil, nil },
		Options: toolcore.Options{RerunWhenNotReconciled: true},
	})
	require.ErrorAs(t, err, &ce, "RerunWhenNotReconciled needs a Reconcile")
}

// The Reconcile of a lost attempt reads, with toolcore.LastCheckpoint, the checkpoint the attempt
// last sent: from the timeout's last heartbeat details (a lost worker, an attempt timed out) or
// from the details of the error of an attempt its worker cut off; in the call's own workflow and
// inline alike. Without one it finds none.
func TestReconcileSeesLostAttemptCheckpoint(t *testing.T) {
	cp := json.RawMessage(`{"job":"j-7"}`)
	noProgress := (*wire.ProgressWindow)(nil)
	tests := []struct {
		name string
		lost error
		want string // the call's result content
	}{
		{name: "heartbeat timeout", lost: temporal.NewHeartbeatTimeoutError(noProgress, cp), want: `{"resumedJob":"j-7"}`},
		{name: "start-to-close timeout", lost: temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil, noProgress, cp), want: `{"resumedJob":"j-7"}`},
		{name: "interrupted by its worker", lost: temporal.NewApplicationError("the worker stopped the attempt (worker is shutting down)", wire.ErrTypeInterrupted, cp),
			want: `{"resumedJob":"j-7"}`},
		{name: "no checkpoint", lost: temporal.NewHeartbeatTimeoutError(),
			want: errContent(workflows.OutcomeUnknownMessage + " (no heartbeat within 1m0s: worker lost or stalled); Reconcile found no sign of its effect; unsafe calls are not retried")},
		{name: "progress only", lost: temporal.NewHeartbeatTimeoutError(&wire.ProgressWindow{}),
			want: errContent(workflows.OutcomeUnknownMessage + " (no heartbeat within 1m0s: worker lost or stalled); Reconcile found no sign of its effect; unsafe calls are not retried")},
	}
	for _, tt := range tests {
		for _, inline := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: " inline"}[inline], func(t *testing.T) {
				var seen atomic.Value // the checkpoint Reconcile saw, as JSON ("" for none)
				tool := reconciling(false, func(ctx context.Context, _ string) (any, bool, error) {
					var last struct{ Job string }
					found, err := toolcore.LastCheckpoint(ctx, &last)
					if err != nil || !found {
						seen.Store("")
						return nil, false, err
					}
					seen.Store(last.Job)
					return map[string]string{"resumedJob": last.Job}, true, nil
				})
				setup := func(env *testsuite.TestWorkflowEnvironment) {
					env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).Return(activities.ExecuteToolOutput{}, tt.lost).Once()
				}
				reg := newRegistry(t, tool)
				var content string
				if inline {
					got := runAgent(t, reg, call("c1", "pay", `{}`), true, setup)
					require.True(t, strings.HasPrefix(got.verdict, "result: "), got.verdict)
					var res struct {
						Content string `json:"content"`
					}
					require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(got.verdict, "result: ")), &res))
					content = res.Content
				} else {
					got := runWorkflow(t, reg, call("c1", "pay", `{}`), runOptions{setup: setup})
					require.NoError(t, got.err)
					content = got.result.Content()
				}
				assert.Equal(t, tt.want, content)
				if strings.Contains(tt.want, "j-7") {
					assert.Equal(t, "j-7", seen.Load())
				} else {
					assert.Equal(t, "", seen.Load())
				}
			})
		}
	}
}

// A Reconcile that finds the lost attempt's effect ended in an error (toolcore.EffectFailed)
// ends the call as Execute returning that error would: an error result, or, for a
// NonRecoverableToolError, a failed call. It is not retried.
func TestReconcileFoundFailedEffect(t *testing.T) {
	tests := []struct {
		name      string
		effect    error
		want      string
		wantFatal string
	}{
		{name: "error result", effect: errors.New("card declined"), want: errContent("card declined")},
		{name: "fatal", effect: toolcore.NewNonRecoverableToolError("ledger mismatch"), wantFatal: "ledger mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reconciles atomic.Int64
			tool := reconciling(true, func(context.Context, string) (any, bool, error) {
				reconciles.Add(1)
				return nil, false, toolcore.EffectFailed(tt.effect)
			})
			got := runWorkflow(t, newRegistry(t, tool), call("c1", "pay", `{}`), runOptions{setup: func(env *testsuite.TestWorkflowEnvironment) {
				env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).Return(activities.ExecuteToolOutput{}, temporal.NewHeartbeatTimeoutError()).Once()
			}})
			assert.Equal(t, int64(1), reconciles.Load(), "found: not retried")
			assert.Equal(t, 2, got.attempts, "one ExecuteTool, one ReconcileTool: no rerun")
			if tt.wantFatal != "" {
				var appErr *temporal.ApplicationError
				require.ErrorAs(t, got.err, &appErr)
				assert.Equal(t, wire.ErrTypeNonRecoverable, appErr.Type())
				assert.Contains(t, appErr.Message(), tt.wantFatal)
				return
			}
			require.NoError(t, got.err)
			assert.Equal(t, tt.want, got.result.Content())
		})
	}
}
