package main

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/toolcore"
)

// recordedHistory is a finished AgentWorkflow run of the default script (one round of add and echo
// in parallel, then the answer), recorded against `toolgate dev` by
//
//	go run ./examples/agent -id agent-recorded -history testdata/histories/agent/agent.json
//
// Re-record it after a deliberate change of the agent's commands; guard changes that running
// agents could see with workflow.GetVersion instead.
const recordedHistory = "../../testdata/histories/agent/agent.json"

// recordedID is the recorded run's workflow ID. The agent scopes its calls' workflow IDs by it,
// and the SDK finds a recorded child start by the child's workflow ID, so the replay must run
// under the original ID (the replayer's default is a placeholder).
const recordedID = "agent-recorded"

// replayAgent replays the recorded history with agent registered as AgentWorkflow, under
// workflow ID id.
func replayAgent(t *testing.T, agent func(workflow.Context, AgentInput) (AgentResult, error), id string) error {
	t.Helper()
	f, err := os.Open(recordedHistory)
	require.NoError(t, err)
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(agent, workflow.RegisterOptions{Name: AgentWorkflowName})
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return replayer.ReplayWorkflowHistoryWithOptions(logger, hist, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id},
	})
}

func TestReplayRecordedAgentHistory(t *testing.T) {
	assert.NoError(t, replayAgent(t, AgentWorkflow, recordedID))

	// Package replay, as README's replay test uses it, finds the recorded ID in the history.
	assert.NoError(t, replay.File(recordedHistory, replay.Options{
		Workflows: func(r worker.WorkflowRegistry) {
			r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: AgentWorkflowName})
		},
	}))
}

// TestReplayDetectsAgentChanges proves the agent's replay test can fail: an agent whose round
// would start its calls one at a time cannot replay a run that started them together, and a run
// replayed under another workflow ID scopes its calls differently.
func TestReplayDetectsAgentChanges(t *testing.T) {
	sequential := func(ctx workflow.Context, in AgentInput) (AgentResult, error) {
		return agentLoop(ctx, in, toolcore.RoundOptions{Sequential: true})
	}
	assert.Error(t, replayAgent(t, sequential, recordedID), "round made sequential")

	assert.ErrorContains(t, replayAgent(t, AgentWorkflow, "another-agent"), recordedID+"/toolcall-call-add", "another workflow ID")
}
