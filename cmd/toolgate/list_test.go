package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListEscapesModelText: list's lines show a tool name and call ID (a model's or a caller's
// text) with every control character escaped, the tabs between fields kept, and a note; the
// summary line escapes an outcome value too.
func TestListEscapesModelText(t *testing.T) {
	started := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	require.NoError(t, writeCalls(&out, []callJSON{{WorkflowID: "toolcall-c\x1b[2J", ToolName: "bo\u202eok", ToolCallID: "c\x1b[2J",
		State: "completed", Outcome: "ok", Started: started}}))
	assert.Equal(t, "toolcall-c\\u001b[2J\tbo\\u202eok\tc\\u001b[2J\tcompleted\tok\t2026-12-06T12:00:00Z\t-\t"+
		"(escaped 3 control characters)\n", out.String())
	assert.Equal(t, "2 calls: 1 X\\u001b[31m (escaped 1 control character), 1 ok (listed 0; raise --limit for more)",
		countsText(countsJSON{Total: 2, ByOutcome: map[string]int64{"ok": 1, "X\x1b[31m": 1}}, 0, false))
}

// TestListFlags: --since and --until take a duration back from now or an RFC 3339 time; a bad
// status, a negative duration or an unknown outcome are refused before anything is asked.
func TestListFlags(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	f, err := listOptions{since: "1h", until: "2026-12-06T11:30:00Z", status: "failed", tool: "book"}.filter(now)
	require.NoError(t, err)
	assert.Equal(t, now.Add(-time.Hour), f.Since)
	assert.Equal(t, time.Date(2026, 12, 6, 11, 30, 0, 0, time.UTC), f.Until)
	assert.Equal(t, "failed", f.Status.String())
	for _, o := range []listOptions{{since: "-1h"}, {until: "yesterday"}, {status: "done"}} {
		_, err := o.filter(now)
		assert.Error(t, err, "%+v", o)
	}
}
