package client

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// logs is the log window of messages from..to, message k logged after progress report after[k-from].
func logs(from, to int64, after ...int64) wire.LogWindow {
	w := wire.LogWindow{Seq: to}
	for k := from; k <= to; k++ {
		w.Messages = append(w.Messages, wire.LogDetails{Level: "info", Message: string(rune('a' + k - 1)), After: after[k-from]})
	}
	return w
}

// said is what a sequence of talk says: "p<n>" for report n, the message for a log.
func said(ts []talk) []string {
	var out []string
	for _, t := range ts {
		if t.progress != nil {
			out = append(out, "p"+string(rune('0'+t.progress.Completed)))
		} else {
			out = append(out, t.log.Message)
		}
	}
	return out
}

// A reader of log windows hands out every message once, by number, and merges them with the
// progress reports of the same read in the order the tool made them.
func TestLogCursorMergesWithProgress(t *testing.T) {
	var pc progressCursor
	var lc logCursor
	read := func(source string, p wire.ProgressWindow, l wire.LogWindow) []string {
		return said(merged(pc.nextNumbered(source, p), lc.next(source, l)))
	}
	// a (before any report), p1, b, c, p2, d
	assert.Equal(t, []string{"a", "p1", "b", "c", "p2", "d"}, read("5", window(1, 2), logs(1, 4, 0, 1, 1, 2)))
	assert.Empty(t, read("5", window(1, 2), logs(1, 4, 0, 1, 1, 2)), "the same windows again: nothing new")
	// p3, e, p4 (the log window overlaps the last read)
	assert.Equal(t, []string{"p3", "e", "p4"}, read("5", window(2, 4), logs(3, 5, 1, 2, 3)))
	assert.Zero(t, lc.skipped)

	assert.Equal(t, []string{"h"}, read("5", window(4, 4), logs(8, 8, 4)), "overflowed: what is there")
	assert.Equal(t, int64(2), lc.skipped, "messages 6 and 7 were lost")

	assert.Equal(t, []string{"a", "p1"}, read("9", window(1, 1), logs(1, 1, 0)), "another activity: from its start")

	m := merged(nil, []wire.NumberedLog{{Seq: 1, LogDetails: wire.LogDetails{Level: "warning", Message: "w", Data: []byte(`{"k":1}`)}}})
	assert.Equal(t, &toolcore.LogMessage{Level: toolcore.LogWarning, Message: "w", Data: []byte(`{"k":1}`)}, m[0].log)
}
