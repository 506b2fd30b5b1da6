package activities

import (
	"context"
	"encoding/json"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// logWindow numbers an attempt's log messages and keeps the latest of them within the window's
// bounds (wire.LogWindow), as progressWindow does for reports: every heartbeat after the first
// message and the attempt's result carry them. Not safe for concurrent use (heartbeats.mu guards
// it).
type logWindow struct {
	messages []wire.LogDetails // oldest first
	sizes    []int             // the JSON bytes each message takes in the window
	bytes    int               // sum of sizes
	seq      int64             // the latest message's number; 0 before the first
	shot     *wire.LogWindow   // the window as last taken, nil when a message came since
}

// continueFrom makes the next message number seq+1: an attempt continues its activity's
// numbering from the previous attempt's last heartbeat.
func (w *logWindow) continueFrom(seq int64) { w.seq = max(w.seq, seq) }

// add numbers m (of size bytes) and puts it in the window, dropping the oldest messages beyond the
// bounds (never m itself).
func (w *logWindow) add(m wire.LogDetails, size int) {
	w.seq++
	w.messages, w.sizes, w.bytes = append(w.messages, m), append(w.sizes, size), w.bytes+size
	drop := 0
	for len(w.messages)-drop > 1 && (len(w.messages)-drop > wire.MaxLogWindowMessages || w.bytes > wire.MaxLogWindowBytes) {
		w.bytes -= w.sizes[drop]
		drop++
	}
	w.messages, w.sizes = w.messages[drop:], w.sizes[drop:]
	w.shot = nil
}

// window returns the window (shared: never modified, by the caller either), or nil before the
// first message.
func (w *logWindow) window() *wire.LogWindow {
	if len(w.messages) == 0 {
		return nil
	}
	if w.shot == nil {
		w.shot = &wire.LogWindow{Seq: w.seq, Messages: slices.Clone(w.messages)}
	}
	return w.shot
}

// logSize is the bytes m takes in a window's JSON: its encoding and a separator.
func logSize(m wire.LogDetails) int {
	b, err := json.Marshal(m)
	if err != nil { // valid strings and JSON data (toolcore.Log's): unreachable
		return wire.MaxLogWindowBytes
	}
	return len(b) + 1
}

// lastLogSeq returns the number of the latest message the previous attempt's last heartbeat
// carried (its third details payload), or 0 (also outside an activity).
func lastLogSeq(ctx context.Context) int64 {
	if !activity.IsActivity(ctx) || !activity.HasHeartbeatDetails(ctx) {
		return 0
	}
	var progress, cp json.RawMessage
	var w *wire.LogWindow
	if err := activity.GetHeartbeatDetails(ctx, &progress, &cp, &w); err != nil || w == nil {
		return 0
	}
	return w.Seq
}

// log is the tool's log window recorder: it numbers the message after the latest progress report,
// puts it in the window and wakes the loop without ever blocking the tool.
func (h *heartbeats) log(m toolcore.LogMessage) {
	d := wire.LogDetails{Level: string(m.Level), Message: m.Message, Data: m.Data}
	size := logSize(d) // outside the lock: a beat's details are taken under it
	h.poke(func(c *cadence) {
		d.After = h.progress.seq
		h.logs.add(d, size)
		c.record()
	})
}

// latestLogs returns the log window, nil before the first message: the ExecuteTool result
// carries it, so the messages logged since the last beat outlive the attempt's heartbeat details.
func (h *heartbeats) latestLogs() *wire.LogWindow {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.window()
}

// toolLogs is an attempt's toolcore.Execution.OnLog: each message goes to the worker's log at its
// level (debug; info and notice; warning; error and above) and, when window is not nil (the
// attempt heartbeats), to the attempt's log window.
func toolLogs(ctx context.Context, toolCallID, toolName string, window func(toolcore.LogMessage)) func(toolcore.LogMessage) {
	logger := activity.GetLogger(ctx)
	return func(m toolcore.LogMessage) {
		kv := []any{"toolCallId", toolCallID, "toolName", toolName, "level", string(m.Level), "message", m.Message}
		if len(m.Data) > 0 {
			kv = append(kv, "data", string(m.Data))
		}
		switch s := m.Level.Severity(); {
		case s <= toolcore.LogDebug.Severity():
			logger.Debug("Tool log", kv...)
		case s <= toolcore.LogNotice.Severity():
			logger.Info("Tool log", kv...)
		case s == toolcore.LogWarning.Severity():
			logger.Warn("Tool log", kv...)
		default:
			logger.Error("Tool log", kv...)
		}
		if window != nil {
			window(m)
		}
	}
}
