package faults_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// drainStopTimeout is the workers' --stop-timeout here: short, so the held calls are drained.
const drainStopTimeout = 300 * time.Millisecond

// TestRollingRestartDrains: two workers are restarted one at a time, three rounds, with SIGTERM
// (a deploy), while calls run: calls held on a gate across every roll, and short calls started
// just before each stop. Each stopped worker lets its short calls finish, then drains the held
// ones (the stop timeout passes): ReadOnly and Idempotent calls go on at once on the other worker
// and end ok on attempt 1 (a drained attempt does not count), Unsafe ones end outcome-unknown
// after their one run. No attempt waits for a heartbeat timeout: no history has an
// ActivityTaskTimedOut event. A drained call's recorded history replays.
func TestRollingRestartDrains(t *testing.T) {
	dev := sharedDev(t)
	sz := sizes()
	began := time.Now()
	f := newFixture(t, dev)
	cl, sdk := f.client(t)
	ctx := t.Context()

	start := func() *proc { return f.startDrainingWorker(t) }
	workers := []*proc{start(), start()}

	var held, unsafe, short []toolcore.ToolCall
	for i := range sz.drainHeldCalls {
		tool := []string{faults.ToolIdempotent, faults.ToolReadOnly}[i%2]
		held = append(held, call(t, fmt.Sprintf("held-%d", i), tool, faults.Args{Gate: "go"}))
	}
	unsafe = append(unsafe, call(t, "held-unsafe", faults.ToolUnsafe, faults.Args{Gate: "go"}))
	for _, c := range append(slices.Clone(held), unsafe...) {
		_, err := cl.Start(ctx, c)
		require.NoError(t, err)
	}
	f.watch.wait(t, "every held call running", func(tl faults.Tally) bool {
		for _, c := range append(slices.Clone(held), unsafe...) {
			if tl.Of(c.ID(), faults.KindRun) == 0 {
				return false
			}
		}
		return true
	})

	rolls := 0
	var resumeMax time.Duration
	for round := range 3 {
		for slot := range workers {
			victim := workers[slot]
			// Calls that start just before the stop finish on the stopping worker or the other.
			for i := range 2 {
				c := call(t, fmt.Sprintf("short-%d-%d-%d", round, slot, i), faults.ToolIdempotent, faults.Args{})
				_, err := cl.Start(ctx, c)
				require.NoError(t, err)
				short = append(short, c)
			}
			before := f.watch.snapshot(t)
			var moved []string
			for _, c := range held {
				if lastRunPID(before, c.ID()) == victim.cmd.Process.Pid {
					moved = append(moved, c.ID())
				}
			}
			runs := faults.Count(before)
			stopped := time.Now()
			require.NoError(t, victim.cmd.Process.Signal(syscall.SIGTERM))
			require.Zero(t, victim.waitExit(t, readyTimeout), "a drained worker exits 0: %s", victim.stderrText())
			rolls++
			// The drained calls run again on the other worker before the next roll.
			f.watch.wait(t, fmt.Sprintf("roll %d: the %d drained calls running again", rolls, len(moved)), func(tl faults.Tally) bool {
				for _, id := range moved {
					if tl.Of(id, faults.KindRun) <= runs.Of(id, faults.KindRun) {
						return false
					}
				}
				return true
			})
			// A figure, not an assertion: SIGTERM to every drained call running elsewhere, which
			// includes the stop timeout.
			resumeMax = max(resumeMax, time.Since(stopped))
			workers[slot] = start()
		}
	}

	f.open(t, "go")
	all := append(append(slices.Clone(held), unsafe...), short...)
	outs := results(cl, all)
	tally := faults.Count(f.watch.snapshot(t))
	drainedEvents := 0
	for _, o := range outs {
		require.False(t, o.hung, "%s hung", o.call.ID())
		require.Equal(t, faults.TerminalResult, o.kind, "%s: %v", o.call.ID(), o.err)
		h := callHistory(t, sdk, o.call.ID())
		for _, e := range h.GetEvents() {
			assert.NotEqual(t, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, e.GetEventType(), "%s waited for a timeout", o.call.ID())
			if a := e.GetActivityTaskFailedEventAttributes(); a != nil && a.GetFailure().GetApplicationFailureInfo().GetType() == wire.ErrTypeDrained {
				drainedEvents++
			}
		}
		if o.call.Name() == faults.ToolUnsafe {
			assert.True(t, o.res.IsError(), "%s", o.res.Content())
			assert.Contains(t, o.res.Content(), workflows.OutcomeUnknownMessage+" (interrupted:")
			assert.Equal(t, 1, tally.Of(o.call.ID(), faults.KindRun), "an unsafe call runs once")
			continue
		}
		out, ok := effectOutput(o.res)
		require.True(t, ok, "%s: %s", o.call.ID(), o.res.Content())
		assert.Equal(t, 1, out.Attempt, "%s: drained attempts do not count", o.call.ID())
		assert.Equal(t, 1, tally.Of(o.call.ID(), faults.KindEffect), "%s: one effect", o.call.ID())
	}
	assert.GreaterOrEqual(t, drainedEvents, len(held), "every held call was drained at least once")

	// A drained call's history, as the server recorded it, replays on this build.
	reg, err := faults.Registry(faults.Config{Ledger: filepath.Join(t.TempDir(), "replay.jsonl")})
	require.NoError(t, err)
	require.NoError(t, replay.History(callHistory(t, sdk, held[0].ID()), replay.Options{Registry: reg}))

	report(t, figures{Scenario: "rolling-restart", Calls: len(all), Faults: rolls,
		Detail: map[string]int{"drainedAttempts": drainedEvents, "resumeMaxMs": int(resumeMax.Milliseconds()),
			"stopTimeoutMs": int(drainStopTimeout.Milliseconds())}}, began)
}

// startDrainingWorker starts a faultworker with a short stop timeout and waits until it polls.
func (f *fixture) startDrainingWorker(t *testing.T) *proc {
	t.Helper()
	_, fw := built(t)
	p := start(t, "faultworker", fw, "worker", "-address", f.dev.frontend, "-task-queue", f.queue, "-ledger", f.ledger,
		"-stop-timeout", drainStopTimeout.String())
	p.waitLines(t, "ready", readyTimeout, func(lines []string) bool { return len(lines) > 0 && strings.HasPrefix(lines[0], "ready ") })
	return p
}

// lastRunPID is the process of the call's latest run record, or 0.
func lastRunPID(records []faults.Record, callID string) int {
	pid := 0
	for _, r := range records {
		if r.Call == callID && r.Kind == faults.KindRun {
			pid = r.PID
		}
	}
	return pid
}

// callHistory is the recorded history of the call's workflow.
func callHistory(t *testing.T, sdk client.Client, callID string) *historypb.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := sdk.GetWorkflowHistory(ctx, wire.WorkflowID("", callID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, e)
	}
	return h
}
