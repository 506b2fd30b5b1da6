package workflows_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
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
