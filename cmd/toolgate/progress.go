package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
)

// progressMode says how call shows a running tool's progress on stderr.
type progressMode string

const (
	progressAuto  progressMode = "auto"  // bar when stderr is a terminal, else off
	progressBar   progressMode = "bar"   // one line redrawn in place
	progressPlain progressMode = "plain" // one "progress ..." line per change, for logs and scripts
	progressOff   progressMode = "off"
)

// resolveProgressMode turns auto into bar or off by whether w is a terminal.
func resolveProgressMode(m progressMode, w io.Writer) (progressMode, error) {
	switch m {
	case progressBar, progressPlain, progressOff:
		return m, nil
	case progressAuto:
		if isTerminal(w) {
			return progressBar, nil
		}
		return progressOff, nil
	default:
		return "", fmt.Errorf("--progress %q is none of auto, bar, plain, off", m)
	}
}

// isTerminal reports whether w is a terminal: a file the terminal ioctls answer for (a character
// device such as /dev/null is not one).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// barWidth is the number of cells between the brackets of the bar.
const barWidth = 30

// renderProgress is the text of one progress report: a bar with percentage when the total is
// known, the count otherwise, then the tool's message.
func renderProgress(p toolcore.Progress) string {
	var b strings.Builder
	if p.Total > 0 {
		done := min(max(p.Completed, 0), p.Total)
		filled := int(done * barWidth / p.Total)
		b.WriteString("[")
		b.WriteString(strings.Repeat("#", filled))
		b.WriteString(strings.Repeat(".", barWidth-filled))
		fmt.Fprintf(&b, "] %3d%% %d/%d", done*100/p.Total, p.Completed, p.Total)
	} else {
		fmt.Fprintf(&b, "[%s] %d", strings.Repeat("~", barWidth), p.Completed)
	}
	if msg := strings.TrimSpace(p.Message); msg != "" {
		b.WriteString(" ")
		b.WriteString(oneLine(msg, 80))
	}
	return b.String()
}

// oneLine keeps the first line of s, at most n runes.
func oneLine(s string, n int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	s, _ = safetext.Escape(s) // a tool's (or model's) text: no control sequence reaches the terminal
	return s
}

// progressView draws reports on w in one mode. Safe for one drawing goroutine plus clear.
type progressView struct {
	mu    sync.Mutex
	w     io.Writer
	mode  progressMode
	last  toolcore.Progress
	seen  bool
	drawn bool // a bar line is on screen and must be cleared before other output
}

func (v *progressView) show(p toolcore.Progress) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen && p == v.last {
		return
	}
	v.last, v.seen = p, true
	switch v.mode {
	case progressBar:
		fmt.Fprintf(v.w, "\r\x1b[K%s", renderProgress(p))
		v.drawn = true
	case progressPlain:
		fmt.Fprintf(v.w, "progress %s\n", renderProgress(p))
	}
}

// finish ends a drawn bar's line, so its last frame stays on screen above what follows.
func (v *progressView) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.drawn {
		fmt.Fprintln(v.w)
		v.drawn = false
	}
}

// clear removes a drawn bar so the next line starts clean.
func (v *progressView) clear() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.drawn {
		fmt.Fprint(v.w, "\r\x1b[K")
		v.drawn = false
	}
}

// println writes line on its own line of w, above a drawn bar (which it redraws).
func (v *progressView) println(line string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.drawn {
		fmt.Fprint(v.w, "\r\x1b[K")
	}
	fmt.Fprintln(v.w, line)
	if v.drawn {
		fmt.Fprintf(v.w, "\r\x1b[K%s", renderProgress(v.last))
	}
}

// hook is the client.Options.OnProgress that shows each report the call's Execute delivers, or
// nil (nothing is read) when progress is off.
func (v *progressView) hook() func(tgclient.ProgressEvent) {
	if v.mode == progressOff {
		return nil
	}
	return func(ev tgclient.ProgressEvent) { v.show(ev.Progress) }
}
