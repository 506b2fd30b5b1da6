package client

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// DefaultNoWorkerDelay is the default of Options.NoWorkerDelay.
const DefaultNoWorkerDelay = 3 * time.Second

// NoWorkerEvent is what Options.NoWorker receives about a call that waits on a task queue no
// worker polls.
type NoWorkerEvent struct {
	// TaskQueue is the queue without a worker: the one the call waits on (Options.TaskQueue,
	// or, for a running call Execute attached to, the queue it was started on).
	TaskQueue  string
	WorkflowID string
	ToolCallID string
	ToolName   string
	// Err wraps ErrNoWorker; its message names the queue and what to check.
	Err error
}

// watchNoWorker calls Options.NoWorker with ev at most once: NoWorkerDelay from now, if the wait
// has not ended and the server lists no worker polling the task queue. Until the delay it costs
// no RPC, and without a hook it starts nothing. stop ends the watch and returns after the hook
// has: the hook never runs after stop returned.
func (c *Client) watchNoWorker(ctx context.Context, ev NoWorkerEvent) (stop func()) {
	if c.opts.NoWorker == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		timer := time.NewTimer(c.opts.NoWorkerDelay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		err := c.checkPollers(ctx, ev.TaskQueue)
		if err == nil || ctx.Err() != nil {
			return // a worker polls, the server did not answer, or the wait ended meanwhile
		}
		ev.Err = err
		c.opts.NoWorker(ev)
	}()
	return func() {
		cancel()
		<-done
	}
}

// OtherQueueEvent is what Options.OtherQueue receives when Execute or Start attached to a running
// call with the same ID that was started on another task queue than Options.TaskQueue (an
// earlier submission on a wrong queue): the call runs only where a worker polls TaskQueue.
type OtherQueueEvent struct {
	// TaskQueue is the queue the running call waits on; Requested is Options.TaskQueue.
	TaskQueue  string
	Requested  string
	WorkflowID string
	ToolCallID string
	ToolName   string
	// Err wraps ErrOtherQueue; its message names both queues and how to recover.
	Err error
}

// reportOtherQueue calls Options.OtherQueue when the run of workflowID that start attached to
// waits on queue, another queue than Options.TaskQueue, and is still running. Cost: nothing
// when the queues match or no hook is set, else one DescribeWorkflowExecution.
func (c *Client) reportOtherQueue(ctx context.Context, workflowID, runID, queue string, call toolcore.ToolCall) {
	if c.opts.OtherQueue == nil || queue == "" || queue == c.opts.TaskQueue {
		return
	}
	desc, err := c.sdk.DescribeWorkflowExecution(ctx, workflowID, runID)
	if err != nil || stateOf(desc.GetWorkflowExecutionInfo().GetStatus()) != Running {
		return // closed: its result is there, whatever the queue
	}
	c.opts.OtherQueue(OtherQueueEvent{
		TaskQueue: queue, Requested: c.opts.TaskQueue, WorkflowID: workflowID, ToolCallID: call.ID(), ToolName: call.Name(),
		Err: fmt.Errorf("%s was started on task queue %q, not %q, and still runs there: this submission attached to it, and it goes on only once a worker polls %q "+
			"(to move it, cancel or terminate it, then submit it again): %w", workflowID, queue, c.opts.TaskQueue, queue, ErrOtherQueue),
	})
}
