package wire

// ProgressDetails is one progress report of a running tool, JSON
// {"completed":3,"total":6,"message":"..."}. It has the fields of toolcore.Progress, so each
// converts to the other.
type ProgressDetails struct {
	Completed int64  `json:"completed"`
	Total     int64  `json:"total,omitempty"`
	Message   string `json:"message,omitempty"`
}

// MaxProgressMessageBytes bounds ProgressDetails.Message: the activity keeps at most this many
// bytes of valid UTF-8.
const MaxProgressMessageBytes = 1024

// ProgressWindow is what an ExecuteTool activity's heartbeat details carry as their first payload
// (a heartbeat without details means no report yet), and its result as FinalProgress: the tool's
// latest reports, numbered, so a reader that reads less often than heartbeats are sent (or misses
// one) still gets every report, in order, each once. JSON
//
//	{"completed":100,"total":100,"seq":100,"earlier":[{"completed":98,"total":100},{"completed":99,"total":100}]}
//
// The latest report's fields are at the top level, so a reader of the older shape (a bare
// ProgressDetails) reads the latest report, and the older shape, recorded before reports were
// numbered, decodes as a window of one without a number (Seq 0).
//
// The window holds at most MaxProgressWindowReports reports and MaxProgressWindowBytes of their
// JSON, the latest always: an older report leaves it when a newer one would exceed either bound.
// A reader that last delivered report n and reads a window whose first number is above n+1 lost
// the reports in between (more than the bound were made between its two reads).
type ProgressWindow struct {
	ProgressDetails // the latest report
	// Seq numbers the latest report: the activity's n-th report (counted over its attempts, each
	// continuing from the previous attempt's last heartbeat) has n. 0: unnumbered (older shape).
	Seq int64 `json:"seq,omitempty"`
	// Earlier are the reports before the latest still in the window, oldest first, numbered
	// Seq-len(Earlier) to Seq-1.
	Earlier []ProgressDetails `json:"earlier,omitempty"`
}

// Bounds of a ProgressWindow: the reports it holds, and the bytes of their JSON (each report's
// encoding plus one separator).
const (
	MaxProgressWindowReports = 256
	MaxProgressWindowBytes   = 16 << 10
)

// NumberedProgress is one report of a window with its number (0: unnumbered).
type NumberedProgress struct {
	Seq int64
	ProgressDetails
}

// Reports returns the window's reports, oldest first, each with its number (0 for all of an
// unnumbered window, and for a number a malformed window would put below 1).
func (w ProgressWindow) Reports() []NumberedProgress {
	out := make([]NumberedProgress, 0, len(w.Earlier)+1)
	n := w.Seq - int64(len(w.Earlier))
	for _, p := range w.Earlier {
		out = append(out, NumberedProgress{Seq: max(n, 0), ProgressDetails: p})
		n++
	}
	return append(out, NumberedProgress{Seq: w.Seq, ProgressDetails: w.ProgressDetails})
}

// FinalProgress is the part of the ExecuteTool activity's result that carries the progress window
// of the attempt that returned it when the tool returned (the member "progress", absent when the
// tool reported none; a bare ProgressDetails in results recorded before windows). Heartbeat
// details are throttled and vanish when the attempt ends, so the reports a tool makes just before
// it returns reach a caller only here, in the run's history.
type FinalProgress struct {
	Progress *ProgressWindow `json:"progress,omitempty"`
	// Logs is the attempt's log window (LogWindow) when the tool returned, absent when it logged
	// nothing.
	Logs *LogWindow `json:"logs,omitempty"`
}
