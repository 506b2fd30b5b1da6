package devtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func TestMain(m *testing.M) {
	os.Exit(Main(m))
}

func echoWorkflow(_ workflow.Context, s string) (string, error) {
	return s, nil
}

func TestClientRunsWorkflow(t *testing.T) {
	c := Client(t)
	queue := TaskQueue(t)
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(echoWorkflow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, echoWorkflow, "ping")
	require.NoError(t, err)
	var got string
	require.NoError(t, run.Get(ctx, &got))
	assert.Equal(t, "ping", got)
}

func TestServerIsShared(t *testing.T) {
	assert.Same(t, Server(t), Server(t))
	assert.Equal(t, "default", Server(t).Namespace())
}

func TestTaskQueueIsUnique(t *testing.T) {
	a, b := TaskQueue(t), TaskQueue(t)
	assert.NotEqual(t, a, b)
	assert.Contains(t, a, "TestTaskQueueIsUnique")
}
