package client

import (
	"cmp"
	"context"
	"slices"
	"time"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// LogEvent is what Options.OnLog receives: a log message (toolcore.Log) of the call Execute
// waits for.
type LogEvent struct {
	WorkflowID string
	ToolCallID string
	ToolName   string
	Log        toolcore.LogMessage
}

// logCursor is where a reader of log windows (wire.LogWindow) stands, as progressCursor is for
// progress windows.
type logCursor struct {
	source  string // the ExecuteTool activity whose numbering seq counts in
	seq     int64  // number of the message handed out last; 0: none yet
	skipped int64  // messages lost: out of the window before a read saw them
}

// next returns the messages of w, read from activity source, after the one handed out last,
// oldest first; another activity, or a window numbered below the last message handed out, starts
// the count again.
func (c *logCursor) next(source string, w wire.LogWindow) []wire.NumberedLog {
	if source != c.source || w.Seq < c.seq {
		c.source, c.seq = source, 0
	}
	var out []wire.NumberedLog
	for _, m := range w.Numbered() {
		if m.Seq <= c.seq {
			continue
		}
		c.skipped += m.Seq - c.seq - 1
		c.seq = m.Seq
		out = append(out, m)
	}
	return out
}

// talk is one thing a watch hands out: a progress report or a log message.
type talk struct {
	progress *toolcore.Progress
	log      *toolcore.LogMessage
}

// merged puts the new progress reports and log messages of one read in the order the tool made
// them: a message after the report it names (After) and before the next one.
func merged(reports []wire.NumberedProgress, logs []wire.NumberedLog) []talk {
	type keyed struct {
		at, kind, seq int64 // report n: (n, 0, n); message m after report a: (a, 1, m)
		t             talk
	}
	items := make([]keyed, 0, len(reports)+len(logs))
	for _, r := range reports {
		p := toolcore.Progress(r.ProgressDetails)
		items = append(items, keyed{at: r.Seq, seq: r.Seq, t: talk{progress: &p}})
	}
	for _, m := range logs {
		l := logMessages(wire.LogWindow{Messages: []wire.LogDetails{m.LogDetails}})[0]
		items = append(items, keyed{at: m.After, kind: 1, seq: m.Seq, t: talk{log: &l}})
	}
	slices.SortStableFunc(items, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind), cmp.Compare(a.seq, b.seq))
	})
	out := make([]talk, len(items))
	for i, it := range items {
		out[i] = it.t
	}
	return out
}

// decodeLogWindow returns the log window in heartbeat details (wire.LogDetailsIndex), or nil when
// the tool has logged nothing.
func (c *Client) decodeLogWindow(details *commonpb.Payloads) (*wire.LogWindow, error) {
	payloads := details.GetPayloads()
	if len(payloads) <= wire.LogDetailsIndex {
		return nil, nil
	}
	var w *wire.LogWindow
	if err := c.opts.DataConverter.FromPayload(payloads[wire.LogDetailsIndex], &w); err != nil {
		return nil, err
	}
	return w, nil
}

// WatchProgressAndLogs is WatchProgress that also hands the call's log messages (toolcore.Log)
// to log, each once, in the order the tool made them among its progress reports (a message is
// handed out after the report made before it and before the next one). Either function may be
// nil: then that kind is not handed out. Messages are lost only as reports are: more than a
// window holds (wire.MaxLogWindowMessages, wire.MaxLogWindowBytes) made between two reads
// (SkippedLogs counts them).
func (c *Client) WatchProgressAndLogs(ctx context.Context, workflowID, runID string, interval time.Duration,
	deliver func(context.Context, toolcore.Progress) error, log func(context.Context, toolcore.LogMessage) error) *ProgressWatch {
	return c.watch(ctx, workflowID, runID, interval, deliver, log)
}

// SkippedLogs returns how many log messages were lost so far. Read it once Done is closed.
func (w *ProgressWatch) SkippedLogs() int64 {
	if w == nil {
		return 0
	}
	return w.logCursor.skipped
}

// watchTalk is the watch of run for Options.OnProgress and Options.OnLog; nil (Finish does
// nothing) without either.
func (c *Client) watchTalk(ctx context.Context, workflowID, runID string, ev ProgressEvent) *ProgressWatch {
	if c.opts.OnProgress == nil && c.opts.OnLog == nil {
		return nil
	}
	var deliver func(context.Context, toolcore.Progress) error
	if c.opts.OnProgress != nil {
		deliver = func(_ context.Context, p toolcore.Progress) error {
			e := ev
			e.Progress = p
			c.opts.OnProgress(e)
			return nil
		}
	}
	var log func(context.Context, toolcore.LogMessage) error
	if c.opts.OnLog != nil {
		log = func(_ context.Context, m toolcore.LogMessage) error {
			c.opts.OnLog(LogEvent{WorkflowID: ev.WorkflowID, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName, Log: m})
			return nil
		}
	}
	return c.watch(ctx, workflowID, runID, c.opts.ProgressInterval, deliver, log)
}

// logMessages are the messages of w, oldest first.
func logMessages(w wire.LogWindow) []toolcore.LogMessage {
	out := make([]toolcore.LogMessage, 0, len(w.Messages))
	for _, m := range w.Messages {
		out = append(out, toolcore.LogMessage{Level: toolcore.LogLevel(m.Level), Message: m.Message, Data: m.Data})
	}
	return out
}
