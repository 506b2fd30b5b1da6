package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

const executeToolName = wire.ExecuteToolName

type pendingActivity = *workflowpb.PendingActivityInfo

// decodeProgress decodes heartbeat details' latest report (decodeProgressWindow). ok is false
// when there is none (the tool has not reported progress).
func (c *Client) decodeProgress(details *commonpb.Payloads) (p toolcore.Progress, ok bool, err error) {
	w, ok, err := c.decodeProgressWindow(details)
	return toolcore.Progress(w.ProgressDetails), ok, err
}

// decodeProgressWindow decodes heartbeat details: the first payload is the progress window, a
// wire.ProgressWindow (a bare wire.ProgressDetails in details recorded before windows: a window
// of one). ok is false when there is none.
func (c *Client) decodeProgressWindow(details *commonpb.Payloads) (w wire.ProgressWindow, ok bool, err error) {
	if len(details.GetPayloads()) == 0 {
		return wire.ProgressWindow{}, false, nil
	}
	var d *wire.ProgressWindow // nil for the null a checkpoint without progress sends
	if err := c.opts.DataConverter.FromPayload(details.GetPayloads()[0], &d); err != nil {
		return wire.ProgressWindow{}, false, err
	}
	if d == nil {
		return wire.ProgressWindow{}, false, nil
	}
	return *d, true, nil
}

// runningProgressWindow reads the progress window of workflowID's running ExecuteTool attempt,
// with the activity's ID (the source its numbers count in); ok is false when no tool runs or it
// has reported nothing. logs is its log window, nil when it has logged nothing.
func (c *Client) runningProgressWindow(ctx context.Context, workflowID string) (source string, w wire.ProgressWindow, ok bool, logs *wire.LogWindow, err error) {
	desc, err := c.describe(ctx, workflowID)
	if err != nil {
		return "", wire.ProgressWindow{}, false, nil, err
	}
	act, running := toolActivity(desc)
	if !running {
		return "", wire.ProgressWindow{}, false, nil, nil
	}
	if w, ok, err = c.decodeProgressWindow(act.GetHeartbeatDetails()); err != nil {
		return "", wire.ProgressWindow{}, false, nil, err
	}
	logs, err = c.decodeLogWindow(act.GetHeartbeatDetails())
	return act.GetActivityId(), w, ok, logs, err
}

// decodeCheckpoint returns the checkpoint in heartbeat details (wire.CheckpointDetailsIndex), or
// nil when the tool has recorded none.
func (c *Client) decodeCheckpoint(details *commonpb.Payloads) (json.RawMessage, error) {
	payloads := details.GetPayloads()
	if len(payloads) <= wire.CheckpointDetailsIndex {
		return nil, nil
	}
	var cp json.RawMessage
	if err := c.opts.DataConverter.FromPayload(payloads[wire.CheckpointDetailsIndex], &cp); err != nil {
		return nil, err
	}
	if string(cp) == "null" {
		return nil, nil
	}
	return cp, nil
}

// FinalProgress returns the last progress report of a closed run of workflowID (runID "": the
// latest run): the one the completed ExecuteTool attempt returned in its result
// (wire.FinalProgress), read from history, where ProgressByWorkflowID reads the heartbeat details
// of a running attempt, which are throttled and gone once it ends. ok is false when the run has
// no completed attempt (still running, failed, canceled, no tool ran) or its tool reported none.
func (c *Client) FinalProgress(ctx context.Context, workflowID, runID string) (p toolcore.Progress, ok bool, err error) {
	_, w, ok, _, err := c.finalProgressWindow(ctx, workflowID, runID)
	return toolcore.Progress(w.ProgressDetails), ok, err
}

// finalProgressWindow is FinalProgress's whole window, with the ID of the activity that returned
// it (the source its numbers count in), and that result's log window (nil: none).
func (c *Client) finalProgressWindow(ctx context.Context, workflowID, runID string) (source string, w wire.ProgressWindow, ok bool, logs *wire.LogWindow, err error) {
	it := c.sdk.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	attempts := map[int64]string{} // event IDs of the ExecuteTool activities scheduled: their activity IDs
	var last *wire.ProgressWindow
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return "", wire.ProgressWindow{}, false, nil, fmt.Errorf("read progress of %s: %w", workflowID, err)
		}
		if s := e.GetActivityTaskScheduledEventAttributes(); s != nil && s.GetActivityType().GetName() == executeToolName {
			attempts[e.GetEventId()] = s.GetActivityId()
		}
		done := e.GetActivityTaskCompletedEventAttributes()
		id, scheduled := attempts[done.GetScheduledEventId()]
		if done == nil || !scheduled || len(done.GetResult().GetPayloads()) == 0 {
			continue
		}
		var out wire.FinalProgress
		if err := c.opts.DataConverter.FromPayload(done.GetResult().GetPayloads()[0], &out); err != nil {
			return "", wire.ProgressWindow{}, false, nil, fmt.Errorf("decode progress of %s: %w", workflowID, err)
		}
		source, last, logs = id, out.Progress, out.Logs
	}
	if last == nil {
		return source, wire.ProgressWindow{}, false, logs, nil
	}
	return source, *last, true, logs, nil
}

// DefaultProgressInterval is the default of Options.ProgressInterval.
const DefaultProgressInterval = 250 * time.Millisecond

// ProgressEvent is what Options.OnProgress receives: a progress report of the call Execute waits
// for.
type ProgressEvent struct {
	WorkflowID string
	ToolCallID string
	ToolName   string
	Progress   toolcore.Progress
}

// ProgressWatch hands one call's progress reports to a deliver function: while the call runs,
// the reports in the running attempt's heartbeat details (its progress window,
// wire.ProgressWindow), read every interval; on Finish of a call closed with a result, those in the
// window its result carries, read from history. Every report once, in the order the tool made
// them, except one equal to the report delivered just before it, and every delivery before Finish
// returns. A report is lost only when more than the window holds (wire.MaxProgressWindowReports,
// wire.MaxProgressWindowBytes) were made between two reads (Skipped counts them). Execute uses
// it for Options.OnProgress, and package mcp for progress notifications.
type ProgressWatch struct {
	c          *Client
	workflowID string
	runID      string
	deliver    func(context.Context, toolcore.Progress) error   // nil: reports are not handed out
	log        func(context.Context, toolcore.LogMessage) error // nil: messages are not handed out
	cancel     context.CancelFunc                               // stops the poll loop and a read in flight
	done       chan struct{}                                    // closed when the poll loop has returned

	// Owned by the poll loop until done is closed, then by Finish.
	cursor    progressCursor
	logCursor logCursor
	last      toolcore.Progress
	delivered bool // last was delivered
	broken    bool // deliver failed: nobody to tell any more
}

// WatchProgress starts reading the progress of run runID of workflowID every interval (default
// DefaultProgressInterval) for deliver, which gets ctx (a delivery in flight is not cut when
// reading stops) and whose error stops all delivery. Finish must be called.
func (c *Client) WatchProgress(ctx context.Context, workflowID, runID string, interval time.Duration,
	deliver func(context.Context, toolcore.Progress) error) *ProgressWatch {
	return c.watch(ctx, workflowID, runID, interval, deliver, nil)
}

// watch is WatchProgressAndLogs.
func (c *Client) watch(ctx context.Context, workflowID, runID string, interval time.Duration,
	deliver func(context.Context, toolcore.Progress) error, log func(context.Context, toolcore.LogMessage) error) *ProgressWatch {
	if interval <= 0 {
		interval = DefaultProgressInterval
	}
	w := &ProgressWatch{c: c, workflowID: workflowID, runID: runID, deliver: deliver, log: log, done: make(chan struct{})}
	readCtx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	go w.poll(ctx, readCtx, interval)
	return w
}

func (w *ProgressWatch) poll(ctx, readCtx context.Context, interval time.Duration) {
	defer close(w.done)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for !w.broken {
		select {
		case <-readCtx.Done():
			return
		case <-ticker.C:
		}
		source, win, ok, logs, err := w.c.runningProgressWindow(readCtx, w.workflowID)
		if err != nil || (!ok && logs == nil) || readCtx.Err() != nil {
			continue
		}
		w.sendWindow(ctx, source, win, ok, logs)
	}
}

// Done is closed when reading has stopped: Finish was called, ctx ended, or a delivery failed.
func (w *ProgressWatch) Done() <-chan struct{} { return w.done }

// Finish stops reading and waits for a delivery in flight; when the run closed with a result
// (closed true), it then delivers the reports of the window the result carries that were not
// delivered yet, the tool's last report last. A nil watch does nothing.
func (w *ProgressWatch) Finish(ctx context.Context, closed bool) {
	if w == nil {
		return
	}
	w.cancel()
	<-w.done
	if !closed || w.broken || ctx.Err() != nil {
		return
	}
	if source, win, ok, logs, err := w.c.finalProgressWindow(ctx, w.workflowID, w.runID); err == nil && (ok || logs != nil) {
		w.sendWindow(ctx, source, win, ok, logs)
	}
}

// Skipped returns how many reports were lost so far: made, but out of the window before a read
// saw them. Read it once Done is closed (after Finish).
func (w *ProgressWatch) Skipped() int64 {
	if w == nil {
		return 0
	}
	return w.cursor.skipped
}

// sendWindow delivers the reports of win (read from activity source; hasReports false: none)
// and the messages of logs (nil: none) not delivered yet, in the order the tool made them.
func (w *ProgressWatch) sendWindow(ctx context.Context, source string, win wire.ProgressWindow, hasReports bool, logs *wire.LogWindow) {
	var reports []wire.NumberedProgress
	if hasReports {
		reports = w.cursor.nextNumbered(source, win)
	}
	var messages []wire.NumberedLog
	if logs != nil {
		messages = w.logCursor.next(source, *logs)
	}
	for _, t := range merged(reports, messages) {
		if w.broken {
			return
		}
		if t.progress != nil {
			w.send(ctx, *t.progress)
		} else {
			w.sendLog(ctx, *t.log)
		}
	}
}

// send delivers p unless it is the report delivered last.
func (w *ProgressWatch) send(ctx context.Context, p toolcore.Progress) {
	if w.deliver == nil || w.delivered && p == w.last {
		return
	}
	w.last, w.delivered = p, true
	if err := w.deliver(ctx, p); err != nil {
		w.broken = true
	}
}

// sendLog delivers m.
func (w *ProgressWatch) sendLog(ctx context.Context, m toolcore.LogMessage) {
	if w.log == nil {
		return
	}
	if err := w.log(ctx, m); err != nil {
		w.broken = true
	}
}

// watchProgress watches run for Options.OnProgress and Options.OnLog; nil (Finish does nothing)
// without either.
func (c *Client) watchProgress(ctx context.Context, run client.WorkflowRun, ev ProgressEvent) *ProgressWatch {
	if c.opts.OnProgress == nil && c.opts.OnLog == nil {
		return nil
	}
	return c.watchTalk(ctx, run.GetID(), run.GetRunID(), ev)
}
