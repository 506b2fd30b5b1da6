package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
)

// inlineHistories are the recorded histories of the agent fixtures.InlineRoundWorkflow (go run
// ./cmd/toolgate/internal/recordhistories -run inline): its rounds of calls run inline
// (workflows.Inline) on the toolgate worker, one ExecuteTool activity per call that reaches
// its tool and no child workflow.
var inlineHistories = []string{"fatal.json", "parallel.json", "retried.json"}

// replayInline replays a recorded inline agent history with the agent validating in reg.
func replayInline(reg *toolcore.Registry, file string) error {
	replayer := worker.NewWorkflowReplayer()
	fixtures.RegisterInlineRoundWorkflow(replayer, reg)
	return replayer.ReplayWorkflowHistoryFromJSONFile(discardLogger(), filepath.Join(historiesDir, "inline", file))
}

// TestReplayRecordedInlineHistories replays each inline agent history: a parallel round with
// outcomes of every kind (ok, not found, invalid arguments, a zero call and a repeated ID as
// contract errors), a ReadOnly call retried twice within its one activity, and a fatal error
// stopping the round (the sequential call after it never scheduled). It fails when the list
// of recorded files changes.
func TestReplayRecordedInlineHistories(t *testing.T) {
	require.ElementsMatch(t, inlineHistories, recordedFiles(t, "inline"))
	reg := recordedRegistry(t)
	for _, file := range inlineHistories {
		t.Run(file, func(t *testing.T) {
			assert.NoError(t, replayInline(reg, file))
		})
	}
	// Only the calls that passed validation reached an activity, and no call ran as a child.
	for file, want := range map[string][]int32{"parallel.json": {1, 1}, "retried.json": {3}, "fatal.json": {1, 1, 1}} {
		attempts, children := inlineActivities(t, file)
		assert.Equal(t, want, attempts, "%s: ExecuteTool attempts per activity", file)
		assert.Zero(t, children, "%s: child workflows", file)
	}
}

// TestReplayDetectsInlineChanges proves the inline replay test can fail: validation runs in the
// agent's workflow code, so an agent whose registry lost a tool schedules fewer activities
// than its history recorded.
func TestReplayDetectsInlineChanges(t *testing.T) {
	tools, err := toolbox.Tools(toolbox.Config{})
	require.NoError(t, err)
	var kept []toolcore.Tool
	for _, tool := range append(tools, fixtures.Tools()...) {
		if tool.Name() != toolbox.NameEcho {
			kept = append(kept, tool)
		}
	}
	assert.ErrorContains(t, replayInline(newRegistry(t, kept...), "parallel.json"), "TMPRL1100", "a non-determinism error")
}

// inlineActivities are the attempts each ExecuteTool activity of a recorded inline history
// started with (the last), in history order, and the child workflows it initiated.
func inlineActivities(t *testing.T, file string) (attempts []int32, children int) {
	t.Helper()
	f, err := os.Open(filepath.Join(historiesDir, "inline", file))
	require.NoError(t, err)
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	for _, e := range hist.GetEvents() {
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil {
			attempts = append(attempts, a.GetAttempt())
		}
		if e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil {
			children++
		}
	}
	return attempts, children
}
