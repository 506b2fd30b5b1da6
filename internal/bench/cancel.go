package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
)

// Cadence of the cancel phase.
const (
	// cancelParallelism is the number of tick calls in flight at once.
	cancelParallelism = 6
	// progressPoll is how often a caller asks for a tick call's progress; it bounds the error
	// of the progress figure.
	progressPoll = 25 * time.Millisecond
	// cancelStagger spreads the cancel requests over a second of each call's tick cadence.
	cancelStagger = 373 * time.Millisecond
	// progressDeadline bounds the wait for a call's first progress.
	progressDeadline = 30 * time.Second
)

// cancel runs Cancels tick calls (a progress report every second, default options). For each it
// polls the progress until the caller has seen report 1, waits a staggered fraction of a second,
// requests cancellation (CancelWorkflow, what any SDK's cancel does) and waits for the workflow
// to close Canceled. It reports how late each progress report reached the caller, and the time
// from the cancel request to the workflow closed.
func (h *harness) cancel(ctx context.Context) (Cancel, error) {
	n := h.cfg.Cancels
	var mu sync.Mutex
	var closed, progress []time.Duration
	done := 0
	h.cfg.Progress(Progress{Phase: "cancel", Total: n})
	began := time.Now()
	err := parallelN(ctx, n, cancelParallelism, func(ctx context.Context, i int) error {
		seen, took, err := h.cancelOne(ctx, i)
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, seen...)
		if err != nil {
			return err
		}
		closed = append(closed, took)
		done++
		h.cfg.Progress(Progress{Phase: "cancel", Done: done, Total: n})
		return nil
	})
	if err != nil {
		return Cancel{}, err
	}
	return Cancel{
		Calls:    n,
		Seconds:  round(time.Since(began).Seconds(), 3),
		Closed:   summarize(closed),
		Progress: summarize(progress),
	}, nil
}

// cancelOne runs the i-th tick call and returns the progress delays it saw and the time from its
// cancel request to its workflow closed.
func (h *harness) cancelOne(ctx context.Context, i int) (seen []time.Duration, took time.Duration, err error) {
	cl := h.toolgate.client
	call, err := toolcore.NewToolCall(h.nextID(), toolTick, []byte("{}"))
	if err != nil {
		return nil, 0, err
	}
	id, err := cl.Start(ctx, call)
	if err != nil {
		return nil, 0, fmt.Errorf("cancel: start %s: %w", call.ID(), err)
	}
	// Watch the progress until report 1 is seen: each report's delay is the time from the tool's
	// report to the first poll that returned it.
	wctx, stop := context.WithTimeout(ctx, progressDeadline)
	defer stop()
	last := int64(-1)
	poll := time.NewTicker(progressPoll)
	defer poll.Stop()
	for last < 1 {
		p, ok, err := cl.Progress(wctx, call.ID())
		if err != nil {
			return seen, 0, fmt.Errorf("cancel: progress of %s: %w", call.ID(), err)
		}
		now := time.Now()
		if ok && p.Completed > last {
			for k := last + 1; k <= p.Completed; k++ {
				if at, ok := h.ticks.at(call.ID(), k); ok {
					seen = append(seen, now.Sub(at))
				}
			}
			last = p.Completed
		}
		select {
		case <-poll.C:
		case <-wctx.Done():
			return seen, 0, fmt.Errorf("cancel: %s showed no progress within %v: %w", call.ID(), progressDeadline, context.Cause(wctx))
		}
	}
	delay := time.NewTimer(time.Duration(i) * cancelStagger % tickInterval)
	select {
	case <-delay.C:
	case <-ctx.Done():
		delay.Stop()
		return seen, 0, context.Cause(ctx)
	}

	began := time.Now()
	if err := h.sdk.CancelWorkflow(ctx, id, ""); err != nil {
		return seen, 0, fmt.Errorf("cancel: cancel %s: %w", id, err)
	}
	err = h.sdk.GetWorkflow(ctx, id, "").Get(ctx, nil)
	took = time.Since(began)
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		return seen, 0, fmt.Errorf("cancel: %s did not end canceled: %v", id, err)
	}
	return seen, took, nil
}
