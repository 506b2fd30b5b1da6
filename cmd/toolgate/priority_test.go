package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/wire"
)

// TestStatusPriorityLine: toolgate status shows a call's priority on one line: the level (or the
// server's default 3), then the fairness key (quoted, escaped) and weight when set; --json has
// the same values; a call without a priority has no line and no field. (Issue 24.)
func TestStatusPriorityLine(t *testing.T) {
	tests := []struct {
		name string
		p    wire.Priority
		want string // the line's value; "" for no line
	}{
		{name: "unset", p: wire.Priority{}},
		{name: "level only", p: wire.Priority{Level: 1}, want: "1"},
		{name: "key only", p: wire.Priority{FairnessKey: "tenant-7"}, want: `3 (default), fairness key "tenant-7"`},
		{name: "all", p: wire.Priority{Level: 5, FairnessKey: "agent/run-1", FairnessWeight: 2.5},
			want: `5, fairness key "agent/run-1", weight 2.5`},
		{name: "hostile key", p: wire.Priority{Level: 2, FairnessKey: "a\x1b[31m\nb"}, want: `2, fairness key "a\x1b[31m\nb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tgclient.Status{WorkflowID: "toolcall-c1", ToolCallID: "c1", ToolName: "echo", State: tgclient.Running,
				Attempt: 1, Priority: tt.p}
			var text, js bytes.Buffer
			require.NoError(t, writeStatus(&text, st, nil, false))
			require.NoError(t, writeStatus(&js, st, nil, true))
			var got statusJSON
			require.NoError(t, json.Unmarshal(js.Bytes(), &got))
			if tt.want == "" {
				assert.NotContains(t, text.String(), "priority")
				assert.NotContains(t, js.String(), `"priority"`)
				assert.Nil(t, got.Priority)
				return
			}
			assert.Equal(t, tt.want, priorityText(tt.p))
			assert.Contains(t, text.String(), "\npriority  "+tt.want+"\n")
			assert.NotContains(t, text.String(), "\x1b", "no raw control byte reaches the terminal")
			require.NotNil(t, got.Priority)
			assert.Equal(t, tt.p, *got.Priority)
		})
	}
}
