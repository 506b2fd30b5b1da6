package worker

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func ownWorkflow(workflow.Context) error { return nil }
func ownActivity(context.Context) error  { return nil }

// TestRegisterBeforeAndAfterStart: a user's own workflow and activity register on the main
// queue's SDK worker before Start; after Start each Register method panics naming the queue.
func TestRegisterBeforeAndAfterStart(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	w := &Worker{queues: []string{"own-q"}, workers: []sdkworker.Worker{sdkworker.New(c, "own-q", sdkworker.Options{})}}
	require.NotPanics(t, func() {
		w.RegisterWorkflowWithOptions(ownWorkflow, workflow.RegisterOptions{Name: "OwnAgent"})
		w.RegisterActivity(ownActivity)
	})
	w.started = true
	for name, register := range map[string]func(){
		"RegisterWorkflow": func() { w.RegisterWorkflow(ownWorkflow) },
		"RegisterActivity": func() { w.RegisterActivity(ownActivity) },
	} {
		require.PanicsWithValue(t, `toolgate worker.`+name+` on task queue "own-q" after Start: register workflows and activities before Start`, register, name)
	}
}
