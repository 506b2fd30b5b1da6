package devserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// silentActivity blocks until its context ends and never heartbeats: only a cancellation pushed
// through worker commands can reach it (a heartbeat response never comes).
type silentActivity struct {
	started chan struct{}
	cause   chan error
}

func (a *silentActivity) Wait(ctx context.Context) error {
	a.started <- struct{}{}
	<-ctx.Done()
	a.cause <- context.Cause(ctx)
	return ctx.Err()
}

// waitWorkflow runs Wait without a heartbeat timeout and waits for it to stop when canceled.
func waitWorkflow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, "Wait").Get(ctx, nil)
}

// namespaceCapabilities returns whether the namespace reports worker heartbeats and worker
// commands, what the SDK reads before it polls for worker commands.
func namespaceCapabilities(t *testing.T, c client.Client, namespace string) (heartbeats, commands bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	require.NoError(t, err)
	caps := desc.GetNamespaceInfo().GetCapabilities()
	return caps.GetWorkerHeartbeats(), caps.GetWorkerCommands()
}

// TestActivityCancellationIsPushed: the embedded server pushes an activity's cancellation to its
// worker (issue 27 item 4): an activity that never heartbeats, with no heartbeat timeout, sees
// its context canceled (a temporal CanceledError) when its workflow is canceled. Without the
// push it would wait for its hour-long timeout, past the test's.
func TestActivityCancellationIsPushed(t *testing.T) {
	srv := start(t, Options{})
	c := dial(t, srv)
	heartbeats, commands := namespaceCapabilities(t, c, srv.Namespace())
	require.True(t, heartbeats, "the namespace reports worker heartbeats")
	require.True(t, commands, "the namespace reports worker commands")

	act := &silentActivity{started: make(chan struct{}, 1), cause: make(chan error, 1)}
	w := worker.New(c, "pushed-cancel", worker.Options{})
	w.RegisterWorkflow(waitWorkflow)
	w.RegisterActivity(act)
	require.NoError(t, w.Start())
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "pushed-cancel", TaskQueue: "pushed-cancel"}, waitWorkflow)
	require.NoError(t, err)
	select {
	case <-act.started:
	case <-ctx.Done():
		t.Fatal("the activity did not start")
	}
	require.NoError(t, c.CancelWorkflow(ctx, run.GetID(), ""))
	select {
	case cause := <-act.cause:
		var canceled *temporal.CanceledError
		assert.True(t, errors.As(cause, &canceled), "the activity's context ends with the server's cancellation, got %v", cause)
	case <-ctx.Done():
		t.Fatal("the cancellation did not reach the activity")
	}
	var canceled *temporal.CanceledError
	assert.ErrorAs(t, run.Get(ctx, nil), &canceled, "the workflow ends canceled")
}

// TestWorkerCommandsCanBeTurnedOff: with frontend.WorkerCommandsEnabled off, the namespace does
// not report the capability, which is what toolgate's workers read to fall back to heartbeats.
func TestWorkerCommandsCanBeTurnedOff(t *testing.T) {
	srv := start(t, Options{DynamicConfig: map[string]any{"frontend.WorkerCommandsEnabled": false}})
	_, commands := namespaceCapabilities(t, dial(t, srv), srv.Namespace())
	assert.False(t, commands)
}
