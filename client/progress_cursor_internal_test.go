package client

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// window is the progress window of reports from..to (Completed k), numbered k.
func window(from, to int64) wire.ProgressWindow {
	w := wire.ProgressWindow{ProgressDetails: wire.ProgressDetails{Completed: to}, Seq: to}
	for k := from; k < to; k++ {
		w.Earlier = append(w.Earlier, wire.ProgressDetails{Completed: k})
	}
	return w
}

func completed(ps []toolcore.Progress) []int64 {
	var out []int64
	for _, p := range ps {
		out = append(out, p.Completed)
	}
	return out
}

// A reader of progress windows hands out every report once, in order, by number: overlapping
// windows give only what is new, a window read again gives nothing, a window that overflowed
// between two reads gives what it holds and counts the reports lost, another activity (or an
// attempt that numbered anew) starts over, and an unnumbered window (recorded before windows)
// gives its one report.
func TestProgressCursor(t *testing.T) {
	var c progressCursor
	assert.Equal(t, []int64{1, 2, 3}, completed(c.next("5", window(1, 3))))
	assert.Empty(t, c.next("5", window(1, 3)), "the same window again: nothing new")
	assert.Equal(t, []int64{4, 5, 6}, completed(c.next("5", window(2, 6))), "overlapping: only the new reports")
	assert.Zero(t, c.skipped)

	assert.Equal(t, []int64{10, 11}, completed(c.next("5", window(10, 11))), "overflowed: what is there")
	assert.Equal(t, int64(3), c.skipped, "reports 7 to 9 were lost")

	assert.Equal(t, []int64{1, 2}, completed(c.next("9", window(1, 2))), "another activity: from its start")
	assert.Equal(t, []int64{1}, completed(c.next("9", window(1, 1))), "numbered anew within one: from the start")
	assert.Equal(t, int64(3), c.skipped)

	old := wire.ProgressWindow{ProgressDetails: wire.ProgressDetails{Completed: 4, Total: 8}}
	assert.Equal(t, []toolcore.Progress{{Completed: 4, Total: 8}}, c.next("9", old), "unnumbered: its one report")
	assert.Equal(t, []toolcore.Progress{{Completed: 4, Total: 8}}, c.next("9", old),
		"again (the watch does not deliver a report equal to the one delivered last)")

	var late progressCursor
	assert.Equal(t, []int64{300}, completed(late.next("5", window(300, 300))))
	assert.Equal(t, int64(299), late.skipped, "a first read that finds the window moved on")
}
