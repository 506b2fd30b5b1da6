package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolcore"
)

// roundHistories are the recorded histories of the parent fixtures.RoundWorkflow (go run
// ./cmd/toolgate/internal/recordhistories -run rounds): its rounds of calls run as child workflows.
var roundHistories = []string{"attached.json", "canceled.json", "fatal.json", "parallel.json", "sequential.json"}

// replayRound replays a recorded parent history with parent registered as the round workflow.
func replayRound(file string, parent func(workflow.Context, fixtures.RoundInput) ([][]fixtures.RoundOutcome, error)) error {
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(parent, workflow.RegisterOptions{Name: fixtures.RoundWorkflowName})
	return replayer.ReplayWorkflowHistoryFromJSONFile(discardLogger(), filepath.Join(historiesDir, "rounds", file))
}

// TestReplayRecordedRoundHistories replays each parent history: rounds in parallel (outcomes of
// every kind, an invalid call, a repeated ID), sequential rounds, a fatal error beside a running
// call with a sequential call after it, a call that already existed (attached through
// AwaitToolCall), and a parent canceled while its child's tool runs.
func TestReplayRecordedRoundHistories(t *testing.T) {
	require.ElementsMatch(t, roundHistories, recordedFiles(t, "rounds"))
	for _, file := range roundHistories {
		t.Run(file, func(t *testing.T) {
			assert.NoError(t, replayRound(file, fixtures.RoundWorkflow))
		})
	}
	// One step's children are started in source order, in one workflow task.
	assert.Equal(t, []string{"round-parallel/toolcall-a", "round-parallel/toolcall-b", "round-parallel/toolcall-c", "round-parallel/toolcall-d"},
		startedChildren(t, "parallel.json"))
	assert.Equal(t, []string{"round-fatal/toolcall-s1", "round-fatal/toolcall-f2", "round-fatal/toolcall-a3"},
		startedChildren(t, "fatal.json"), "the sequential call after the fatal one never started")
}

// TestReplayDetectsParentChanges proves the parent replay tests can fail: a parent that would
// start fewer children in a workflow task than its history recorded (a round made sequential, a
// sequential tool no longer known as one) is a non-determinism error on the recorded histories.
//
// Not every change is caught: the SDK finds a recorded child start by the child's workflow ID
// (a parent that scopes its calls differently fails, see examples/agent's replay test), so one
// step's children started in another order replay without error (harmless: each result still
// reaches its call), and so do children started earlier than recorded (sequential rounds made
// parallel: the extra starts match the later recorded ones). TestReplayRecordedRoundHistories
// pins the order the recorded parents used.
func TestReplayDetectsParentChanges(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		change func(*toolcore.RoundOptions)
	}{
		{name: "parallel round made sequential", file: "parallel.json", change: func(o *toolcore.RoundOptions) { o.Sequential = true }},
		{name: "sequential tool forgotten", file: "fatal.json", change: func(o *toolcore.RoundOptions) { o.Tools = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Error(t, replayRound(tt.file, fixtures.ChangedRoundWorkflow(tt.change)))
		})
	}
}

// startedChildren are the workflow IDs of the children a recorded parent history initiated, in
// history order.
func startedChildren(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(historiesDir, "rounds", file))
	require.NoError(t, err)
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	var ids []string
	for _, e := range hist.GetEvents() {
		if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
			ids = append(ids, a.GetWorkflowId())
		}
	}
	return ids
}
