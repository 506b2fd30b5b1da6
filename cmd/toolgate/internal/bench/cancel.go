package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
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
	var toActivity, toTool, toClose []time.Duration
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
		if events, err := h.fetchHistory(ctx, h.toolgate.client.WorkflowID(h.lastTick(i))); err == nil {
			if a, b, c, ok := cancelSegments(events); ok {
				toActivity, toTool, toClose = append(toActivity, a), append(toTool, b), append(toClose, c)
			}
		}
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
		Segments: []Segment{
			segmentOf("cancel requested to activity cancel requested (workflow task)", toActivity),
			segmentOf("to activity canceled (heartbeat, tool returns)", toTool),
			segmentOf("to workflow canceled (workflow task)", toClose),
		},
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
	h.tickIDs.Store(i, call.ID())
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

// lastTick returns the call ID of the i-th tick call.
func (h *harness) lastTick(i int) string {
	v, _ := h.tickIDs.Load(i)
	id, _ := v.(string)
	return id
}

// cancelSegments splits a canceled call's history at the cancel request, the activity's cancel
// request, the activity canceled and the workflow canceled.
func cancelSegments(events []*historypb.HistoryEvent) (toActivity, toTool, toClose time.Duration, ok bool) {
	times := map[enumspb.EventType]time.Time{}
	for _, e := range events {
		if _, seen := times[e.GetEventType()]; !seen {
			times[e.GetEventType()] = e.GetEventTime().AsTime()
		}
	}
	req, ok1 := times[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED]
	act, ok2 := times[enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED]
	stopped, ok3 := times[enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED]
	closed, ok4 := times[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED]
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return 0, 0, 0, false
	}
	return act.Sub(req), stopped.Sub(act), closed.Sub(stopped), true
}

// segmentOf summarizes one segment's sample.
func segmentOf(name string, d []time.Duration) Segment {
	l := summarize(d)
	return Segment{Name: name, MeanMs: l.MeanMs, P50Ms: l.P50Ms}
}
