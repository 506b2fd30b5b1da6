package worker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

func tool(t *testing.T, name, queue string) toolcore.Tool {
	t.Helper()
	tl, err := toolcore.Define(toolcore.Definition[struct{}]{
		Name:        name,
		Description: "test tool " + name,
		Validate:    func(toolcore.Arguments) toolcore.Decision[struct{}] { return toolcore.Accept(struct{}{}) },
		Execute:     func(context.Context, struct{}) (any, error) { return "ok", nil },
		Options:     toolcore.Options{TaskQueue: queue},
	})
	require.NoError(t, err)
	return tl
}

func TestTaskQueues(t *testing.T) {
	tests := []struct {
		name  string
		tools map[string]string // tool name -> its Options.TaskQueue
		want  []string
	}{
		{name: "no tools", want: []string{"toolgate"}},
		{name: "all on main", tools: map[string]string{"a": "", "b": "toolgate"}, want: []string{"toolgate"}},
		{name: "extra queues sorted and distinct", tools: map[string]string{"a": "gpu", "b": "", "c": "browser", "d": "gpu"}, want: []string{"toolgate", "browser", "gpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := toolcore.NewRegistry()
			require.NoError(t, err)
			for name, queue := range tt.tools {
				require.NoError(t, reg.Register(tool(t, name, queue)))
			}
			assert.Equal(t, tt.want, taskQueues(reg, "toolgate"))
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	got := Options{}.withDefaults()
	assert.Equal(t, wire.DefaultTaskQueue, got.TaskQueue)
	assert.Equal(t, DefaultMaxConcurrentActivities, got.MaxConcurrentActivities)
	assert.Equal(t, DefaultStopTimeout, got.StopTimeout)
	assert.NotNil(t, got.Logger)
}

func TestSDKOptions(t *testing.T) {
	tests := []struct {
		name           string
		give           Options
		activitiesOnly bool
		wantPolicy     sdkworker.WorkflowPanicPolicy
	}{
		{name: "default blocks", give: Options{}, wantPolicy: sdkworker.BlockWorkflow},
		{name: "fail on panic", give: Options{FailWorkflowOnPanic: true}, wantPolicy: sdkworker.FailWorkflow},
		{name: "activity-only queue", give: Options{}, activitiesOnly: true, wantPolicy: sdkworker.BlockWorkflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Worker{fatal: make(chan error, 1)}
			got := w.sdkOptions(tt.give.withDefaults(), tt.activitiesOnly)
			assert.Equal(t, tt.wantPolicy, got.WorkflowPanicPolicy)
			assert.Equal(t, DefaultStopTimeout+DrainReportTimeout, got.WorkerStopTimeout, "the SDK cuts off only after Stop's drain was reported")
			assert.Equal(t, DefaultMaxConcurrentActivities, got.MaxConcurrentActivityExecutionSize)
			assert.Equal(t, tt.activitiesOnly, got.DisableWorkflowWorker)
			require.NotNil(t, got.OnFatalError)
			got.OnFatalError(assert.AnError)
			got.OnFatalError(assert.AnError) // a second report must not block
			assert.Equal(t, assert.AnError, <-w.fatal)
		})
	}
}

// TestSDKHeartbeatThrottleIsCapped: the SDK batches heartbeats for 0.8 x HeartbeatTimeout (8 s by
// default) unless capped, which would hold back progress and the beat that hears a cancellation;
// the cap must sit below every gap of the activities' heartbeat loop.
func TestSDKHeartbeatThrottleIsCapped(t *testing.T) {
	w := &Worker{fatal: make(chan error, 1)}
	for _, activitiesOnly := range []bool{false, true} {
		got := w.sdkOptions(Options{}.withDefaults(), activitiesOnly)
		assert.Equal(t, 50*time.Millisecond, got.MaxHeartbeatThrottleInterval)
		assert.Equal(t, 50*time.Millisecond, got.DefaultHeartbeatThrottleInterval, "activities without a HeartbeatTimeout too")
	}
	assert.Less(t, activities.SDKHeartbeatThrottle, activities.HurryHeartbeatInterval)
	assert.Less(t, activities.SDKHeartbeatThrottle, activities.ProgressHeartbeatGap)
}

func TestNewRejectsNil(t *testing.T) {
	reg, err := toolcore.NewRegistry()
	require.NoError(t, err)
	_, err = New(nil, "default", reg, Options{})
	assert.ErrorContains(t, err, "nil Temporal client")
}
