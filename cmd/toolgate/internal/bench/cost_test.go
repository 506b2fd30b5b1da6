package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/worker"
)

// completeCost is a structurally complete cost phase of n runs per shape.
func completeCost(n int) Cost {
	c := Cost{Runs: n, Held: CostHeld{HoldSeconds: 12, HeartbeatTimeoutSeconds: 10, Heartbeats: 2, CadenceSeconds: 5, PerMinute: 12, CallActions: 3,
		Kinds: map[string]float64{worker.ActionWorkflowStart: 1, worker.ActionActivityAttempt: 1, worker.ActionSearchAttributeUpsert: 1}}}
	for _, s := range costShapes() {
		calls := costShapeCalls(s)
		row := CostRow{Shape: s, Calls: calls, Kinds: map[string]float64{worker.ActionWorkflowStart: 1}, P50Ms: 10, CPUMs: 10}
		row.Kinds[worker.ActionActivityAttempt] = float64(calls)
		row.Actions = sumKinds(row.Kinds)
		row.PerCall, row.ClientSeen, row.RatioBare = float64(calls), row.Actions, float64(calls)/2
		if s == CostToolgate {
			row.Kinds[worker.ActionSearchAttributeUpsert] = 1
			row.Actions, row.PerCall = 3, 3
		}
		c.Shapes = append(c.Shapes, row)
	}
	return c
}

// loadHistory reads a recorded history of testdata/histories.
func loadHistory(t *testing.T, name string) []*historypb.HistoryEvent {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "..", "testdata", "histories", name))
	require.NoError(t, err)
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	return h.GetEvents()
}

func TestCountActionsOfRecordedHistories(t *testing.T) {
	tests := []struct {
		file string
		want map[string]int
	}{
		// start + activity + the closing ToolOutcome upsert
		{"success.json", map[string]int{worker.ActionWorkflowStart: 1, worker.ActionActivityAttempt: 1, worker.ActionSearchAttributeUpsert: 1}},
		// a rejected call never schedules its activity
		{"arguments-invalid.json", map[string]int{worker.ActionWorkflowStart: 1, worker.ActionSearchAttributeUpsert: 1}},
		// three attempts: the started event carries the last attempt's number
		{"fixtures/retried.json", map[string]int{worker.ActionWorkflowStart: 1, worker.ActionActivityAttempt: 3, worker.ActionSearchAttributeUpsert: 1}},
		// local activities: once for their workflow task, whatever the attempts
		{"fixtures/local-retried.json", map[string]int{worker.ActionWorkflowStart: 1, worker.ActionLocalActivities: 1, worker.ActionSearchAttributeUpsert: 1}},
		// GetVersion's marker and its TemporalChangeVersion upsert are free; the approval's
		// timer, update and three ToolOutcome upserts are not
		{"fixtures/approval-approved.json", map[string]int{worker.ActionWorkflowStart: 1, worker.ActionSearchAttributeUpsert: 3,
			worker.ActionTimer: 1, worker.ActionUpdate: 1, worker.ActionActivityAttempt: 1}},
		// an agent: its start, two children started, two activities (the children's own
		// histories hold their activities and upserts)
		{"agent/agent.json", map[string]int{worker.ActionWorkflowStart: 1, worker.ActionChildWorkflowStart: 2, worker.ActionActivityAttempt: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			assert.Equal(t, tt.want, countActions(loadHistory(t, tt.file)))
		})
	}
}

func TestCheckAndWriteCost(t *testing.T) {
	r := completeReport()
	require.NoError(t, r.Check())
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	out := b.String()
	assert.Contains(t, out, CostInlineRound)
	assert.Contains(t, out, "workflow_start 1, activity_attempt 1, search_attribute_upsert 1")
	assert.Contains(t, out, "2 heartbeats in 12.0s held, one every 5.00s: 12 actions per minute held")
	assert.Contains(t, out, "goals: standalone ok call 3 (<= 2: MISSES); inline call 1 (1: meets); idle held call 12 a minute (<= 2: MISSES)")

	r.Cost.Shapes = r.Cost.Shapes[1:]
	assert.ErrorContains(t, r.Check(), "cost: incomplete")
	r = completeReport()
	r.Settings.Phases = []string{PhaseCost}
	r.Latency, r.Throughput, r.InFlight = nil, nil, InFlight{}
	assert.NoError(t, r.Check(), "phases not run are not checked")
	r.Cost.Held = CostHeld{}
	assert.ErrorContains(t, r.Check(), "cost: held call: incomplete")
}
