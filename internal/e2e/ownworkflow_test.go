package e2e

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

type ownArgs struct {
	Name string `json:"name"`
}

// ownAgent is a user's own agent workflow: one durable tool call, its content returned.
func ownAgent(ctx workflow.Context, id string) (string, error) {
	// Its tools are on its own queue, not toolgate's default one; its calls are scoped by that
	// queue, as every test's are (a call ID reused on the shared server attaches to the old call).
	queue := workflow.GetInfo(ctx).TaskQueueName
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: queue, Scope: queue})
	call, err := toolcore.NewToolCall(id, "greet", []byte(`{"name":"ada"}`))
	if err != nil {
		return "", err
	}
	res, err := workflows.ExecuteToolCall(ctx, call)
	if err != nil {
		return "", err
	}
	return res.Content(), nil
}

// TestOwnAgentWorkflowOnToolgateWorker: an agent workflow registered on worker.Worker runs
// beside its own tool in one worker on an own task queue and calls it through ExecuteToolCall,
// end to end against a real server.
func TestOwnAgentWorkflowOnToolgateWorker(t *testing.T) {
	var runs atomic.Int32
	greet := toolcore.MustDefine(toolcore.Definition[ownArgs]{
		Name:        "greet",
		Description: "Greet someone.",
		Validate: func(args toolcore.Arguments) toolcore.Decision[ownArgs] {
			name, err := args.String("name")
			if err != nil {
				return toolcore.Reject[ownArgs]("name must be a string")
			}
			return toolcore.Accept(ownArgs{Name: name})
		},
		Execute: func(_ context.Context, a ownArgs) (any, error) {
			runs.Add(1)
			return "hello " + a.Name, nil
		},
	})
	reg, err := toolcore.NewRegistry(greet)
	require.NoError(t, err)
	sdk := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	attrs := true
	w, err := worker.New(sdk, devtest.Server(t).Namespace(), reg, worker.Options{TaskQueue: queue, SearchAttributes: &attrs})
	require.NoError(t, err)
	w.RegisterWorkflowWithOptions(ownAgent, workflow.RegisterOptions{Name: "OwnAgent"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "own-agent-" + queue, TaskQueue: queue}, "OwnAgent", "call-own-1")
	require.NoError(t, err)
	var content string
	require.NoError(t, run.Get(ctx, &content))
	require.Contains(t, content, "hello ada")
	require.EqualValues(t, 1, runs.Load())
	require.Panics(t, func() { w.RegisterWorkflow(ownAgent) }, "registering after Start panics")
}
