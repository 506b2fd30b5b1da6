package faults_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/wire"
)

// TestUndoSurvivesWorkerKill: an agent run (faults.BookingAgent on the faultworker) books three
// effects, fails, and undoes them, last booked first. The worker is killed with SIGKILL while the
// second compensation holds after cancelling its booking, and restarted: the compensation runs
// again under the same key and does not cancel twice. Each booking is compensated exactly once
// (ledger), in reverse order of booking, and the agent's history replays.
func TestUndoSurvivesWorkerKill(t *testing.T) {
	f := newFixture(t, sharedDev(t))
	tg, sdk := f.client(t)
	doomed := f.startWorker(t, false)
	began := time.Now()
	fig := figures{Scenario: "undo-survives-worker-kill", Detail: map[string]int{}}

	bookings := []string{"undo-b1", "undo-b2", "undo-b3"}
	// The last booking's compensation may finish; the second one's holds after its effect.
	f.open(t, faults.UndoGate(bookings[2]))
	ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
	defer cancel()
	agentID := "booking-agent-" + f.queue
	run, err := sdk.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: agentID, TaskQueue: f.queue}, faults.BookingAgentName,
		faults.BookingInput{Bookings: bookings, Failing: "undo-fail", TaskQueue: f.queue})
	require.NoError(t, err)
	f.watch.wait(t, "the second compensation cancels its booking", func(tl faults.Tally) bool {
		return tl.Of(bookings[1], faults.KindUndo) == 1
	})
	doomed.kill(t)
	fig.Faults++
	replacement := f.startWorker(t, false)
	f.open(t, faults.UndoGate(bookings[1]))
	f.open(t, faults.UndoGate(bookings[0]))

	var res wire.UndoResult
	require.NoError(t, run.Get(ctx, &res))
	records := f.watch.snapshot(t)
	tally := faults.Count(records)
	fig.Calls = len(bookings)

	var statuses []wire.UndoStatus
	var undone []string
	for _, s := range res.Steps {
		statuses = append(statuses, s.Status)
		undone = append(undone, s.Effect.ToolCallID)
	}
	assert.Equal(t, []wire.UndoStatus{wire.UndoCompensated, wire.UndoCompensated, wire.UndoCompensated}, statuses)
	assert.Equal(t, []string{bookings[2], bookings[1], bookings[0]}, undone, "last booked, first undone")
	var order []string
	for _, r := range records {
		if r.Kind == faults.KindUndo {
			order = append(order, r.Call)
			assert.Equal(t, "toolcall-"+r.Call+"/undo", r.Key, "the compensation's key")
		}
	}
	assert.Equal(t, []string{bookings[2], bookings[1], bookings[0]}, order, "the ledger's cancellations, in reverse order of booking")
	for _, id := range bookings {
		if effects, undos := tally.Of(id, faults.KindEffect), tally.Of(id, faults.KindUndo); effects != 1 || undos != 1 {
			fig.Duplicated++
			t.Errorf("%s: %d bookings and %d cancellations, want exactly 1 and 1", id, effects, undos)
		}
	}
	runs := tally.Of(bookings[1], faults.KindUndoRun)
	assert.GreaterOrEqual(t, runs, 2, "the killed compensation ran again on the replacement")
	fig.Detail["compensationAttemptsOfTheKilledOne"] = runs
	fig.Detail["compensated"] = res.Count(wire.UndoCompensated)

	hist, err := tg.History(ctx, agentID, "")
	require.NoError(t, err)
	reg, err := faults.Registry(faults.Config{Ledger: filepath.Join(t.TempDir(), "replay.jsonl")})
	require.NoError(t, err)
	assert.NoError(t, replay.History(hist, replay.Options{Registry: reg, Workflows: func(r sdkworker.WorkflowRegistry) {
		r.RegisterWorkflowWithOptions(faults.BookingAgent, workflow.RegisterOptions{Name: faults.BookingAgentName})
	}}), "the agent's history, undo included, replays")
	replacement.interrupt(t)
	report(t, fig, began)
}
