package e2e

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/wire"
)

// A call on a queue no worker polls makes Execute's NoWorker hook say so while the call waits;
// the call is not given up: it runs once a worker starts on the queue.
func TestNoWorkerHookThenWorker(t *testing.T) {
	queue := devtest.TaskQueue(t)
	sdk := devtest.Client(t)
	events := make(chan client.NoWorkerEvent, 4)
	cl := client.New(sdk, client.Options{
		TaskQueue:     queue,
		Scope:         queue,
		Namespace:     devtest.Server(t).Namespace(),
		NoWorkerDelay: 100 * time.Millisecond,
		NoWorker:      func(ev client.NoWorkerEvent) { events <- ev },
	})
	e := &env{t: t, queue: queue, sdk: sdk, client: cl}

	done := goExecute(e.ctx(), cl, call(t, "unpolled-1", "add", `{"left":20,"right":22}`))
	var ev client.NoWorkerEvent
	select {
	case ev = <-events:
	case out := <-done:
		require.FailNow(t, "Execute returned without a worker", "%+v", out)
	case <-time.After(testTimeout):
		require.FailNow(t, "the NoWorker hook did not fire")
	}
	assert.Equal(t, queue, ev.TaskQueue)
	assert.Equal(t, wire.WorkflowID(queue, "unpolled-1"), ev.WorkflowID)
	assert.Equal(t, "unpolled-1", ev.ToolCallID)
	assert.Equal(t, "add", ev.ToolName)
	assert.ErrorIs(t, ev.Err, client.ErrNoWorker)
	assert.ErrorContains(t, ev.Err, queue)

	var runs atomic.Int32
	e.worker = e.startWorker(sdk, 5*time.Second, addTool(t, &runs))
	out := await(t, done)
	require.NoError(t, out.err)
	assert.Equal(t, `{"id":"tool-result-unpolled-1","role":"toolResult","toolCallId":"unpolled-1","toolName":"add","content":"{\"sum\":42}","isError":false}`, wireJSON(t, out.result))
	assert.Equal(t, int32(1), runs.Load())
	assert.Empty(t, events, "the hook fires once per call")
}
