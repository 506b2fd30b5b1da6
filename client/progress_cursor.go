package client

import (
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// progressCursor is where a reader of progress windows (wire.ProgressWindow) stands: it picks from
// each window it reads the reports it has not handed out yet, by their numbers.
type progressCursor struct {
	source  string // the ExecuteTool activity whose numbering seq counts in
	seq     int64  // number of the report handed out last; 0: none numbered yet
	skipped int64  // reports lost: out of the window before a read saw them
}

// next returns the reports of w, read from activity source, after the one handed out last,
// oldest first. A window of another activity (a call that ran its tool again, after
// reconciliation), or one numbered below the last report handed out (an attempt that could not
// continue the numbering), starts the count again. An unnumbered window (recorded before
// windows) gives its one report: the watch does not deliver it again if it was delivered last.
func (c *progressCursor) next(source string, w wire.ProgressWindow) []toolcore.Progress {
	var out []toolcore.Progress
	for _, r := range c.nextNumbered(source, w) {
		out = append(out, toolcore.Progress(r.ProgressDetails))
	}
	return out
}

// nextNumbered is next with each report's number (0 for an unnumbered window's).
func (c *progressCursor) nextNumbered(source string, w wire.ProgressWindow) []wire.NumberedProgress {
	if w.Seq == 0 {
		return []wire.NumberedProgress{{ProgressDetails: w.ProgressDetails}}
	}
	if source != c.source || w.Seq < c.seq {
		c.source, c.seq = source, 0
	}
	var out []wire.NumberedProgress
	for _, r := range w.Reports() {
		if r.Seq <= c.seq {
			continue
		}
		c.skipped += r.Seq - c.seq - 1 // the reports between, lost
		c.seq = r.Seq
		out = append(out, r)
	}
	return out
}
