package workflows_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// The histories were recorded from the embedded server by
//
//	go run ./cmd/toolgate/internal/recordhistories
//
// (from the module root); re-record them after a deliberate change of the workflow's commands,
// and guard changes that calls in flight could see with workflow.GetVersion instead.
const historiesDir = "../testdata/histories"

// recordedRegistry is the registry the histories were recorded with: the toolbox at its default
// configuration plus the fixtures.
func recordedRegistry(t *testing.T) *toolcore.Registry {
	t.Helper()
	tools, err := toolbox.Tools(toolbox.Config{})
	require.NoError(t, err)
	return newRegistry(t, append(tools, fixtures.Tools()...)...)
}

func replay(reg *toolcore.Registry, searchAttributes bool, file string) error {
	replayer := worker.NewWorkflowReplayer()
	(&workflows.Workflows{Registry: reg, SearchAttributes: searchAttributes}).Register(replayer)
	return replayer.ReplayWorkflowHistoryFromJSONFile(discardLogger(), file)
}

func discardLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func TestReplayRecordedHistories(t *testing.T) {
	want := []string{
		"arguments-invalid.json", "canceled-before-start.json", "canceled.json", "invalid-call.json",
		"not-found.json", "success.json", "principal.json",
		"fixtures/approval-approved.json", "fixtures/approval-canceled.json", "fixtures/approval-expired.json",
		"fixtures/approval-rejected.json", "fixtures/checkpointed.json", "fixtures/reconciled.json",
		"fixtures/reconciled-checkpoint.json",
		"fixtures/execution-failed.json", "fixtures/fatal.json", "fixtures/outcome-unknown.json",
		"fixtures/retried.json", "fixtures/serialization-failed.json", "fixtures/validation-failed.json",
		"fixtures/local-retried.json", "fixtures/approval-edited.json",
		"fixtures/consent-given.json", "fixtures/consent-refused.json", "fixtures/ask-answered.json",
	}
	top, err := filepath.Glob(filepath.Join(historiesDir, "*.json"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(historiesDir, "fixtures", "*.json"))
	require.NoError(t, err)
	var got []string
	for _, f := range append(top, more...) {
		rel, err := filepath.Rel(historiesDir, f)
		require.NoError(t, err)
		got = append(got, filepath.ToSlash(rel))
	}
	require.ElementsMatch(t, want, got, "one history per outcome kind")

	reg := recordedRegistry(t)
	for _, file := range got {
		t.Run(file, func(t *testing.T) {
			assert.NoError(t, replay(reg, true, filepath.Join(historiesDir, file)))
		})
	}
}

// TestReplayDetectsIncompatibleChanges proves the replay tests can fail: code that would decide
// differently on a recorded call is a non-determinism error.
func TestReplayDetectsIncompatibleChanges(t *testing.T) {
	rejectAll := toolcore.MustDefine(toolcore.Definition[empty]{
		Name:        toolbox.NameAdd,
		Description: "add, with a validator that changed its verdict",
		Validate:    func(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Reject[empty]("no longer accepted") },
		Execute:     func(context.Context, empty) (any, error) { return nil, nil },
	})
	tests := []struct {
		name             string
		reg              *toolcore.Registry
		searchAttributes bool
	}{
		{name: "validator verdict changed", reg: newRegistry(t, rejectAll), searchAttributes: true},
		{name: "tool removed", reg: newRegistry(t), searchAttributes: true},
		{name: "search attribute upsert dropped", reg: recordedRegistry(t), searchAttributes: false},
	}
	// A Local tool's history has a marker where an activity's has a scheduled activity: a tool
	// that gained or lost Options.Local cannot replay the other's history.
	flakyNotLocal := fixtures.Tools()
	for i, tool := range flakyNotLocal {
		if tool.Name() == fixtures.LocalFlaky {
			flakyNotLocal[i] = toolcore.MustDefine(toolcore.Definition[empty]{
				Name:        fixtures.LocalFlaky,
				Description: "the local fixture without Local",
				Validate:    func(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Accept(empty{}) },
				Execute:     func(context.Context, empty) (any, error) { return nil, nil },
				Options:     toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3},
			})
		}
	}
	t.Run("Local dropped", func(t *testing.T) {
		assert.Error(t, replay(newRegistry(t, flakyNotLocal...), true, filepath.Join(historiesDir, "fixtures", "local-retried.json")))
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Error(t, replay(tt.reg, tt.searchAttributes, filepath.Join(historiesDir, "success.json")))
		})
	}
}

// TestReplayEditedApproval: the recorded history of an approval with edited arguments holds the
// model's arguments (the input) and the approved ones with both hashes (the update's record),
// and the result the model read starts with ReviewerEditNote; it replays.
func TestReplayEditedApproval(t *testing.T) {
	file := filepath.Join(historiesDir, "fixtures", "approval-edited.json")
	require.NoError(t, replay(recordedRegistry(t), true, file))
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	hist, err := sdkclient.HistoryFromJSON(f, sdkclient.HistoryJSONOptions{})
	require.NoError(t, err)
	var rec wire.ApprovalRecord
	var result toolcore.Result
	var input json.RawMessage
	for _, e := range hist.GetEvents() {
		if a := e.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			input = a.GetInput().GetPayloads()[0].GetData()
		}
		if a := e.GetWorkflowExecutionUpdateCompletedEventAttributes(); a != nil {
			require.NoError(t, json.Unmarshal(a.GetOutcome().GetSuccess().GetPayloads()[0].GetData(), &rec))
		}
		if a := e.GetWorkflowExecutionCompletedEventAttributes(); a != nil {
			require.NoError(t, json.Unmarshal(a.GetResult().GetPayloads()[0].GetData(), &result))
		}
	}
	call, err := toolcore.ParseToolCall(input)
	require.NoError(t, err)
	tool, ok := recordedRegistry(t).Get(call.Name())
	require.True(t, ok)
	edited, err := toolcore.NewToolCall(call.ID(), call.Name(), rec.Arguments)
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(call.Arguments().Raw()), "the model's arguments")
	assert.Equal(t, `{"amount":100}`, string(rec.Arguments), "the approved arguments")
	assert.Equal(t, toolcore.CallHash(tool, call), rec.CallHash)
	assert.Equal(t, toolcore.CallHash(tool, edited), rec.ApprovedCallHash)
	assert.Equal(t, toolcore.ReviewerEditNote("recorder", rec.Arguments)+"\n"+`{"done":true}`, result.Content())
}

// TestReplayUndoHistory: an UndoWorkflow history (recordhistories -run undo: two bookings
// compensated last first, each compensation retried once, an echo without a compensation
// skipped) replays against the current code.
func TestReplayUndoHistory(t *testing.T) {
	require.NoError(t, replay(recordedRegistry(t), true, filepath.Join(historiesDir, "undo", "undo.json")))
}

// recordedFiles lists the base names of the recorded histories in dir under historiesDir, so a
// replay test fails when a history is added or removed without it.
func recordedFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(historiesDir, dir, "*.json"))
	require.NoError(t, err)
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	return got
}
