package client

import (
	"context"
	"time"
)

// DefaultNoWorkerDelay is the default of Options.NoWorkerDelay.
const DefaultNoWorkerDelay = 3 * time.Second

// NoWorkerEvent is what Options.NoWorker receives about a call that waits on a task queue no
// worker polls.
type NoWorkerEvent struct {
	// TaskQueue is the queue without a worker (Options.TaskQueue).
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
		err := c.checkPollers(ctx)
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
