package workflows_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// TestFatalToolErrorEndsTheAgentNotRetryable: an agent workflow that returns, as it is, the error
// ExecuteToolCall, ExecuteRound or Inline gives for a fatal tool error ends failed with a
// non-retryable ApplicationError of type NonRecoverableToolError carrying the tool's message
// (a plain Go error would be recorded retryable), and the agent's code still finds the genuine
// *toolcore.NonRecoverableToolError in it.
func TestFatalToolErrorEndsTheAgentNotRetryable(t *testing.T) {
	fatal := returningWith(toolcore.Options{}, "fatal", nil, toolcore.NewNonRecoverableToolError("account frozen"))
	reg := newRegistry(t, fatal)
	inline := &workflows.Inline{Registry: reg}
	run := map[string]func(workflow.Context, toolcore.ToolCall) error{
		"child": func(ctx workflow.Context, c toolcore.ToolCall) error {
			_, err := workflows.ExecuteToolCall(ctx, c)
			return err
		},
		"round": func(ctx workflow.Context, c toolcore.ToolCall) error {
			_, err := workflows.ExecuteRound(ctx, []toolcore.ToolCall{c}, toolcore.RoundOptions{})
			return err
		},
		"inline": func(ctx workflow.Context, c toolcore.ToolCall) error {
			_, err := inline.ExecuteToolCall(ctx, c)
			return err
		},
		"inline round": func(ctx workflow.Context, c toolcore.ToolCall) error {
			_, err := inline.ExecuteRound(ctx, []toolcore.ToolCall{c}, toolcore.RoundOptions{})
			return err
		},
	}
	for _, name := range []string{"child", "round", "inline", "inline round"} {
		t.Run(name, func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.SetTestTimeout(time.Minute)
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Hour})
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-fatal", TaskQueue: wire.DefaultTaskQueue})
			(&workflows.Workflows{Registry: reg}).Register(env)
			(&activities.Activities{Registry: reg}).Register(env)
			found := false
			env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
				c, err := toolcore.NewToolCall("f-1", "fatal", []byte(`{}`))
				if err != nil {
					return err
				}
				err = run[name](ctx, c)
				nr, ok := toolcore.AsNonRecoverable(err)
				found = ok && nr.Error() == "account frozen"
				return err
			}, workflow.RegisterOptions{Name: "agent"})
			env.ExecuteWorkflow("agent")
			require.True(t, env.IsWorkflowCompleted())
			err := env.GetWorkflowError()
			require.Error(t, err)
			assert.True(t, found, "the agent's code finds the genuine fatal error")
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			assert.Equal(t, wire.ErrTypeNonRecoverable, appErr.Type())
			assert.True(t, appErr.NonRetryable(), "recorded as %v", err)
			assert.Equal(t, workflows.FatalErrorMessage, appErr.Message())
			assert.ErrorContains(t, err, "account frozen")
		})
	}
}
