package client

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/mocks"

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

// TestCountCallsAddsUp: CountCalls puts each call under one outcome, counts inside a status
// bounded by the status's count and the rest of a status its remainder (an error code toolcore
// does not name is "error"), so the counts add up to the total even when visibility moves between
// the requests; a server without GROUP BY ExecutionStatus is counted one status at a time.
func TestCountCallsAddsUp(t *testing.T) {
	byStatus := map[string]int64{"Completed": 5, "Running": 2, "Failed": 1, "Canceled": 1}
	tests := []struct {
		name    string
		groupBy bool
		ok      int64 // what the ok count answers, of 5 completed
		want    map[string]int64
	}{
		{name: "GROUP BY", groupBy: true, ok: 3,
			want: map[string]int64{"ok": 3, "TOOL_EXECUTION_FAILED": 1, "error": 1, "awaiting_approval": 1, "running": 1, "fatal": 1, "canceled": 1}},
		{name: "one count per status", groupBy: false, ok: 3,
			want: map[string]int64{"ok": 3, "TOOL_EXECUTION_FAILED": 1, "error": 1, "awaiting_approval": 1, "running": 1, "fatal": 1, "canceled": 1}},
		{name: "visibility moved: more ok than completed", groupBy: true, ok: 6,
			want: map[string]int64{"ok": 5, "awaiting_approval": 1, "running": 1, "fatal": 1, "canceled": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			byOutcome := map[string]int64{ // answers by the condition a query adds
				"ToolOutcome = 'ok' OR":                 tt.ok,
				"ToolOutcome = 'TOOL_EXECUTION_FAILED'": 1,
				"ToolOutcome = 'awaiting_approval'":     1,
				"ToolOutcome = 'fatal'":                 1,
			}
			count := func(q string) int64 {
				for cond, n := range byOutcome {
					if strings.Contains(q, cond) {
						return n
					}
				}
				if strings.Contains(q, "ToolOutcome") {
					return 0
				}
				for status, n := range byStatus {
					if strings.Contains(q, "ExecutionStatus = '"+status+"'") {
						return n
					}
				}
				return 0
			}
			sdk := mocks.NewClient(t)
			sdk.On("CountWorkflow", mock.Anything, mock.Anything).Return(
				func(_ context.Context, req *workflowservice.CountWorkflowExecutionsRequest) (*workflowservice.CountWorkflowExecutionsResponse, error) {
					q := req.GetQuery()
					if !strings.HasPrefix(q, "WorkflowType = 'ToolCallWorkflow' AND ToolName = 'book'") {
						return nil, fmt.Errorf("query %q lost the filter", q)
					}
					if !strings.HasSuffix(q, " GROUP BY ExecutionStatus") {
						return &workflowservice.CountWorkflowExecutionsResponse{Count: count(q)}, nil
					}
					if !tt.groupBy {
						return nil, serviceerror.NewInvalidArgument("GROUP BY clause is not supported")
					}
					resp := &workflowservice.CountWorkflowExecutionsResponse{}
					for status, n := range byStatus {
						p, err := converter.GetDefaultDataConverter().ToPayload(status)
						if err != nil {
							return nil, err
						}
						resp.Count += n
						resp.Groups = append(resp.Groups, &workflowservice.CountWorkflowExecutionsResponse_AggregationGroup{
							GroupValues: []*commonpb.Payload{p}, Count: n})
					}
					return resp, nil
				})
			got, err := New(sdk, Options{}).CountCalls(t.Context(), CallFilter{Tool: "book"})
			require.NoError(t, err)
			assert.Equal(t, CallCounts{Total: 9, ByOutcome: tt.want}, got)
		})
	}
}
