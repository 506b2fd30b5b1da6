package client

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/wire"
)

// TestCallFilterQuery: each field of a CallFilter adds its condition to the query, values quoted;
// ok selects both recorded forms of an ok call (ToolOutcome "ok" and unset, contract section 9),
// error every error result; a filter no call can match is an error.
func TestCallFilterQuery(t *testing.T) {
	const base = "WorkflowType = 'ToolCallWorkflow'"
	since := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		give    CallFilter
		want    string
		wantErr string
	}{
		{name: "zero", give: CallFilter{}, want: base},
		{name: "tool, quote escaped", give: CallFilter{Tool: "bo'ok"}, want: base + ` AND ToolName = 'bo\'ok'`},
		{name: "ok, both forms", give: CallFilter{Outcome: "ok"},
			want: base + " AND (ExecutionStatus = 'Completed' AND (ToolOutcome = 'ok' OR ToolOutcome IS NULL))"},
		{name: "error", give: CallFilter{Outcome: "error"},
			want: base + " AND (ExecutionStatus = 'Completed' AND ToolOutcome IS NOT NULL AND ToolOutcome != 'ok')"},
		{name: "a code", give: CallFilter{Outcome: "TOOL_EXECUTION_FAILED"}, want: base + " AND ToolOutcome = 'TOOL_EXECUTION_FAILED'"},
		{name: "canceled", give: CallFilter{Outcome: "canceled"}, want: base + " AND ExecutionStatus = 'Canceled'"},
		{name: "principal, agent run, queue", give: CallFilter{Principal: "alice", AgentRun: "agent-1", TaskQueue: "q", Owner: "mcp-x"},
			want: base + " AND ToolSubject = 'alice' AND ToolPrincipal = 'mcp-x' AND ParentWorkflowId = 'agent-1' AND TaskQueue = 'q'"},
		{name: "window and status", give: CallFilter{Since: since, Until: since.Add(time.Hour), Status: Completed},
			want: base + " AND StartTime >= '2026-12-06T10:00:00Z' AND StartTime < '2026-12-06T11:00:00Z' AND ExecutionStatus = 'Completed'"},
		{name: "not an outcome", give: CallFilter{Outcome: "ok' OR 1=1"}, wantErr: `outcome "ok' OR 1=1" is no ToolOutcome value`},
		{name: "too long", give: CallFilter{Tool: strings.Repeat("x", 1025)}, wantErr: "ToolName filter is 1025 bytes, over 1024"},
		{name: "empty window", give: CallFilter{Since: since, Until: since}, wantErr: "is not after since"},
		{name: "bad status", give: CallFilter{Status: 99}, wantErr: "unknown status 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.give.Query()
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	ok, err := CallFilter{Outcome: wire.OutcomeOK}.Query()
	require.NoError(t, err)
	assert.Contains(t, ok, wire.QueryOKCalls, "the one ok query")
}

// TestErrorCodes: CountCalls counts every result error code toolcore names, by name.
func TestErrorCodes(t *testing.T) {
	codes := errorCodes()
	assert.Contains(t, codes, "TOOL_EXECUTION_FAILED")
	assert.Contains(t, codes, "POLICY_DENIED")
	for _, c := range codes {
		assert.Regexp(t, `^[A-Z_]+$`, c)
	}
}

// TestParseState is the inverse of State.String.
func TestParseState(t *testing.T) {
	for st := Running; st <= TimedOut; st++ {
		got, ok := ParseState(st.String())
		assert.True(t, ok)
		assert.Equal(t, st, got)
	}
	_, ok := ParseState("done")
	assert.False(t, ok)
}
