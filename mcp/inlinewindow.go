package mcp

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/client"
)

// taskStartLimit bounds how long a request that may become a task waits for its call's tool to
// start (a worker to pick it up) before it answers with the task.
const taskStartLimit = 5 * time.Second

// inlineWindow is the context in which a 2026-07-28 request that may become a task waits for
// its call's result (inlineResult) or questions (inlineOrAsk). TaskInlineWindow counts from the
// tool's start, not the request's: the time a busy server or worker takes to start the tool
// never turns a quick tool into a task, nor a tool that asks at once into a task that asks. The
// window ends
//   - once the call's tool is seen still running TaskInlineWindow after it started;
//   - once TaskInlineWindow has passed since the request and the call waits for a reviewer, a
//     consent, a retry, or answers the request does not relay (asks false);
//   - after taskStartLimit, when the tool has not started (no worker picked it up);
//   - when ctx ends.
//
// It reads the call's phase every inlineInputInterval (one DescribeWorkflowExecution), from the
// first interval on: a call done within one costs none.
func inlineWindow(ctx context.Context, tg *client.Client, workflowID string, asks bool) (context.Context, context.CancelFunc) {
	waitCtx, end := context.WithTimeout(ctx, taskStartLimit)
	begun := time.Now()
	go func() {
		tick := time.NewTicker(inlineInputInterval)
		defer tick.Stop()
		var attempt int
		var since time.Time // when attempt was first seen running, or the server's start if earlier
		for {
			select {
			case <-waitCtx.Done():
				return
			case <-tick.C:
			}
			p, err := tg.PhaseByWorkflowID(waitCtx, workflowID)
			now := time.Now()
			switch {
			case err != nil:
				if waitCtx.Err() == nil {
					end() // unreadable: answer with what the task's reads say
				}
				return
			case p.Closed:
				return // its result is read at once
			case p.Attempt > 0:
				if p.Attempt != attempt {
					attempt, since = p.Attempt, now
					if !p.RunningSince.IsZero() && p.RunningSince.Before(since) {
						since = p.RunningSince
					}
				}
				if now.Sub(since) >= TaskInlineWindow {
					end()
					return
				}
			case p.Waiting != nil && p.Waiting.Kind != client.WaitWorker && !(asks && p.Waiting.Kind == client.WaitInput):
				if now.Sub(begun) >= TaskInlineWindow {
					end()
					return
				}
			}
		}
	}()
	return waitCtx, end
}
