package e2e

import (
	"context"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/wire"
)

// stuckCall starts the call id (add 20+22) on a queue no worker polls and returns that queue and
// a served one: a worker with add polls it.
func stuckCall(t *testing.T, id string) (stuck, served string, runs *atomic.Int32) {
	stuck, served = devtest.TaskQueue(t), devtest.TaskQueue(t)
	sdk := devtest.Client(t)
	runs = &atomic.Int32{}
	e := &env{t: t, queue: served, sdk: sdk}
	e.worker = e.startWorker(sdk, 5*time.Second, addTool(t, runs))
	first := client.New(sdk, client.Options{TaskQueue: stuck, Namespace: devtest.Server(t).Namespace()})
	_, err := first.Start(e.ctx(), call(t, id, "add", `{"left":20,"right":22}`))
	require.NoError(t, err)
	return stuck, served, runs
}

// TestResubmitOnAnotherQueueSaysSo: a call started on a queue no worker polls, submitted again
// with the same ID on a served queue, attaches to the stuck call: Execute says so at once
// (OtherQueue, naming the stuck queue), watches that queue for a worker (NoWorker), and, when its
// ctx ends, does not wait for a close that cannot come: it returns at once with ErrNoWorker
// naming the stuck queue.
func TestResubmitOnAnotherQueueSaysSo(t *testing.T) {
	id := "stuck-" + devtest.TaskQueue(t)
	stuck, served, runs := stuckCall(t, id)
	other := make(chan client.OtherQueueEvent, 2)
	noWorker := make(chan client.NoWorkerEvent, 2)
	again := client.New(devtest.Client(t), client.Options{
		TaskQueue: served, Namespace: devtest.Server(t).Namespace(),
		OtherQueue: func(ev client.OtherQueueEvent) { other <- ev },
		NoWorker:   func(ev client.NoWorkerEvent) { noWorker <- ev }, NoWorkerDelay: 100 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := goExecute(ctx, again, call(t, id, "add", `{"left":20,"right":22}`))

	var ev client.OtherQueueEvent
	select {
	case ev = <-other:
	case out := <-done:
		require.FailNow(t, "Execute returned", "%+v", out)
	case <-time.After(testTimeout):
		require.FailNow(t, "the OtherQueue hook did not fire")
	}
	assert.Equal(t, stuck, ev.TaskQueue)
	assert.Equal(t, served, ev.Requested)
	assert.Equal(t, wire.WorkflowID("", id), ev.WorkflowID)
	assert.ErrorIs(t, ev.Err, client.ErrOtherQueue)
	assert.ErrorContains(t, ev.Err, `task queue "`+stuck+`"`)

	select {
	case nw := <-noWorker:
		assert.Equal(t, stuck, nw.TaskQueue, "the queue the call waits on is watched")
	case <-time.After(testTimeout):
		require.FailNow(t, "the NoWorker hook did not fire for the stuck queue")
	}

	cancel()
	out := await(t, done)
	require.ErrorIs(t, out.err, context.Canceled)
	assert.ErrorIs(t, out.err, client.ErrNoWorker, "the canceled call cannot close: no wait for it")
	assert.ErrorContains(t, out.err, `task queue "`+stuck+`"`)
	assert.Zero(t, runs.Load(), "the served queue's worker never ran the stuck call")
}

// TestCallResubmitOnAnotherQueueCLI: `toolgate call` resubmitting a stuck call on a served queue
// prints at once that it attached to the call on the stuck queue, and on SIGTERM exits without
// waiting for a close that cannot come, naming the stuck queue.
func TestCallResubmitOnAnotherQueueCLI(t *testing.T) {
	id := "stuck-cli-" + devtest.TaskQueue(t)
	stuck, served, _ := stuckCall(t, id)
	c := startCLICall(t, "add", `{"left":20,"right":22}`, "--id", id, "--task-queue", served)
	notice := c.waitLine(t, "is already running, started on task queue", "notice that the call attached to another queue")
	assert.Contains(t, notice, `task queue "`+stuck+`" (not "`+served+`")`)
	assert.Contains(t, notice, "toolgate cancel toolcall-"+id)

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	err := c.wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "interrupted: not a success")
	text := c.text()
	assert.Contains(t, text, `no worker polls task queue "`+stuck+`"`,
		"the exit names the stuck queue instead of waiting for the canceled call to close")
	assert.NotContains(t, text, `\u000a`, "a joined error's lines read as one line, not with escaped newlines")
}
