package activities

import (
	"context"
	"encoding/json"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/toolgate/toolgate/wire"
)

// Progress window bounds: wire.MaxProgressWindowReports reports, wire.MaxProgressWindowBytes of
// their JSON.
const (
	MaxProgressWindowReports = wire.MaxProgressWindowReports
	MaxProgressWindowBytes   = wire.MaxProgressWindowBytes
)

// progressWindow numbers an attempt's reports and keeps the latest of them within the window's
// bounds (wire.ProgressWindow): every heartbeat and the attempt's result carry them, so a reader
// gets every report made since its previous read as long as fewer than the bounds were made.
// Not safe for concurrent use (heartbeats.mu guards it).
type progressWindow struct {
	reports []wire.ProgressDetails // oldest first; the last is the latest report
	sizes   []int                  // the JSON bytes each report takes in the window
	bytes   int                    // sum of sizes
	seq     int64                  // the latest report's number; 0 before the first
	shot    *wire.ProgressWindow   // the window as last taken, nil when a report came since
}

// continueFrom makes the next report number seq+1: an attempt continues its activity's numbering
// from the previous attempt's last heartbeat.
func (w *progressWindow) continueFrom(seq int64) {
	w.seq = max(w.seq, seq)
}

// add numbers p and puts it in the window, dropping the oldest reports beyond the bounds (never
// p itself).
func (w *progressWindow) add(p wire.ProgressDetails) { w.addSized(p, reportSize(p)) }

// addSized is add with p's reportSize, measured by the caller (outside its lock).
func (w *progressWindow) addSized(p wire.ProgressDetails, size int) {
	w.seq++
	w.reports, w.sizes, w.bytes = append(w.reports, p), append(w.sizes, size), w.bytes+size
	drop := 0
	for len(w.reports)-drop > 1 && (len(w.reports)-drop > MaxProgressWindowReports || w.bytes > MaxProgressWindowBytes) {
		w.bytes -= w.sizes[drop]
		drop++
	}
	// Resliced: append copies the live reports to a new array when the old one is full, so memory
	// stays within a few bounds and adding costs O(1) amortized.
	w.reports, w.sizes = w.reports[drop:], w.sizes[drop:]
	w.shot = nil
}

// window returns the window (shared: never modified, by the caller either), or nil before the
// first report.
func (w *progressWindow) window() *wire.ProgressWindow {
	if len(w.reports) == 0 {
		return nil
	}
	if w.shot == nil {
		last := len(w.reports) - 1
		w.shot = &wire.ProgressWindow{ProgressDetails: w.reports[last], Seq: w.seq}
		if last > 0 {
			w.shot.Earlier = slices.Clone(w.reports[:last])
		}
	}
	return w.shot
}

// reportSize is the bytes p takes in a window's JSON: its encoding and a separator.
func reportSize(p wire.ProgressDetails) int {
	b, err := json.Marshal(p)
	if err != nil { // a struct of ints and a valid string: unreachable
		return MaxProgressWindowBytes
	}
	return len(b) + 1
}

// lastProgressSeq returns the number of the latest report the previous attempt's last heartbeat
// carried (its first details payload, a wire.ProgressWindow), or 0.
func lastProgressSeq(ctx context.Context) int64 {
	if !activity.HasHeartbeatDetails(ctx) {
		return 0
	}
	var w *wire.ProgressWindow
	if err := activity.GetHeartbeatDetails(ctx, &w); err != nil || w == nil {
		return 0
	}
	return w.Seq
}
