package activities

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/wire"
)

// The progress window numbers every report from 1 (or on from an earlier attempt's number), holds
// the latest MaxProgressWindowReports of them within MaxProgressWindowBytes, always the latest,
// oldest first, and hands out a window later reports do not change.
func TestProgressWindowBounds(t *testing.T) {
	var w progressWindow
	assert.Nil(t, w.window(), "no report, no window")

	w.add(wire.ProgressDetails{Completed: 1})
	one := w.window()
	assert.Equal(t, &wire.ProgressWindow{ProgressDetails: wire.ProgressDetails{Completed: 1}, Seq: 1}, one)

	const made = MaxProgressWindowReports + 44
	for k := int64(2); k <= made; k++ {
		w.add(wire.ProgressDetails{Completed: k, Total: made})
	}
	assert.Equal(t, &wire.ProgressWindow{ProgressDetails: wire.ProgressDetails{Completed: 1}, Seq: 1}, one,
		"a window handed out is never changed")
	got := w.window()
	require.Len(t, got.Reports(), MaxProgressWindowReports, "bounded by count")
	for i, r := range got.Reports() {
		want := int64(made - MaxProgressWindowReports + 1 + i)
		require.Equal(t, want, r.Seq, "numbered in order, the oldest gone")
		require.Equal(t, want, r.Completed, "each number is its report's")
	}
	assert.Same(t, got, w.window(), "the same window until the next report")

	// Large messages: the bytes bound holds fewer reports, never none.
	msg := strings.Repeat("x", wire.MaxProgressMessageBytes)
	for k := int64(1); k <= 40; k++ {
		w.add(wire.ProgressDetails{Completed: made + k, Message: msg})
	}
	got = w.window()
	b, err := json.Marshal(got)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), MaxProgressWindowBytes+64, "bounded by bytes (plus the window's own members)")
	assert.Greater(t, len(b)+reportSize(got.Earlier[0]), MaxProgressWindowBytes, "as many as fit")
	assert.Equal(t, int64(made+40), got.Seq)
	assert.Equal(t, int64(made+40), got.Completed, "the latest report is the window's own")
	reports := got.Reports()
	for i := 1; i < len(reports); i++ {
		require.Equal(t, reports[i-1].Seq+1, reports[i].Seq, "consecutive numbers")
	}

	// A later attempt numbers on from the previous attempt's last heartbeat.
	var next progressWindow
	next.continueFrom(made + 40)
	next.add(wire.ProgressDetails{Completed: 7})
	assert.Equal(t, int64(made+41), next.window().Seq)
}
