package metrics

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestCallQueries: a round counts the queue's running ToolCallWorkflows, those awaiting approval
// only where the namespace has ToolOutcome, and as stuck those started before the threshold that
// do not wait for approval; task queue names are quoted.
func TestCallQueries(t *testing.T) {
	stuckBefore := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	running := `WorkflowType = 'ToolCallWorkflow' AND TaskQueue = 'q\'s' AND ExecutionStatus = 'Running'`
	tests := []struct {
		name             string
		searchAttributes bool
		want             map[string]string
	}{
		{
			name:             "with the search attributes",
			searchAttributes: true,
			want: map[string]string{
				"running":           running,
				"awaiting approval": running + ` AND ToolOutcome = 'awaiting_approval'`,
				"stuck":             running + ` AND StartTime < '2026-12-06T01:00:00Z' AND (ToolOutcome IS NULL OR ToolOutcome != 'awaiting_approval')`,
			},
		},
		{
			name: "without them",
			want: map[string]string{
				"running": running,
				"stuck":   running + ` AND StartTime < '2026-12-06T01:00:00Z'`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, q := range callQueries("q's", stuckBefore, tt.searchAttributes) {
				got[q.name] = q.query
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
