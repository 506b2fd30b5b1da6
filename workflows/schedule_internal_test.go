package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
)

// The SDK test environment does not expose the scheduled retry policy to the activity, so the
// options are checked here, where they are built.
func TestActivityOptions(t *testing.T) {
	nonRetryable := []string{"NonRecoverableToolError", "ToolNotRegistered", "InvalidExecuteToolInput", "ToolDrained"}
	backoff := func(attempts int32) *temporal.RetryPolicy {
		return &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        30 * time.Second,
			MaximumAttempts:        attempts,
			NonRetryableErrorTypes: nonRetryable, // ToolDrained: a drained attempt goes to the workflow (run)
		}
	}
	tests := []struct {
		name      string
		queue     string
		give      toolcore.Options
		wantQueue string
		want      workflow.ActivityOptions
	}{
		{
			name: "unsafe: one attempt, the workflow's queue",
			give: toolcore.Options{},
			want: workflow.ActivityOptions{StartToCloseTimeout: time.Minute, HeartbeatTimeout: toolcore.DefaultHeartbeatTimeout,
				WaitForCancellation: true, RetryPolicy: backoff(1), Summary: "t"},
		},
		{
			name:  "idempotent: MaxAttempts default, configured queue",
			queue: "tools",
			give:  toolcore.Options{SideEffect: toolcore.Idempotent},
			want: workflow.ActivityOptions{TaskQueue: "tools", StartToCloseTimeout: time.Minute, HeartbeatTimeout: toolcore.DefaultHeartbeatTimeout,
				WaitForCancellation: true, RetryPolicy: backoff(3), Summary: "t"},
		},
		{
			name:  "read-only: its own queue and timeouts",
			queue: "tools",
			give: toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 7, Timeout: 5 * time.Second,
				HeartbeatTimeout: time.Second, TaskQueue: "io"},
			want: workflow.ActivityOptions{TaskQueue: "io", StartToCloseTimeout: 5 * time.Second, HeartbeatTimeout: time.Second,
				WaitForCancellation: true, RetryPolicy: backoff(7), Summary: "t"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := toolcore.Define(toolcore.Definition[struct{}]{
				Name: "t", Description: "d",
				Validate: func(toolcore.Arguments) toolcore.Decision[struct{}] { return toolcore.Accept(struct{}{}) },
				Execute:  func(_ context.Context, _ struct{}) (any, error) { return nil, nil },
				Options:  tt.give,
			})
			require.NoError(t, err)
			call, err := toolcore.NewToolCall("c1", "t", []byte(`{}`))
			require.NoError(t, err)
			w := &Workflows{TaskQueue: tt.queue}
			assert.Equal(t, tt.want, w.activityOptions(call, tool.Options(), temporal.Priority{}))
		})
	}
}
