package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
)

// TestCheckpointSurvivesTwoKills: an Idempotent tool processes items, checkpointing after each.
// Its worker is killed with SIGKILL twice, each time once `status` shows the checkpoint after
// the attempt's second item; the third attempt resumes from the checkpoint and finishes. The
// ledger holds every item exactly once.
func TestCheckpointSurvivesTwoKills(t *testing.T) {
	dev := sharedDev(t)
	rounds := 1
	if *soak {
		rounds = 3
	}
	began := time.Now()
	fig := figures{Scenario: "checkpoint-survives-two-kills", Detail: map[string]int{}}
	for round := range rounds {
		f := newFixture(t, dev)
		cl, _ := f.client(t)
		c := call(t, fmt.Sprintf("cp%d", round), faults.ToolCheckpointed, faults.Args{})
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		doomed := f.startWorker(t, true)
		_, err := cl.Start(ctx, c)
		require.NoError(t, err)
		for _, next := range []int{2, 4} {
			awaitCheckpoint(ctx, t, cl, c.ID(), next)
			doomed.kill(t)
			fig.Faults++
			if next == 2 {
				doomed = f.startWorker(t, true)
			}
		}
		cancel()
		last := f.startWorker(t, false)

		o := results(cl, []toolcore.ToolCall{c})[0]
		tally := faults.Count(f.watch.snapshot(t))
		fig.Calls++
		switch {
		case o.hung:
			fig.Hung++
		case o.kind != faults.TerminalResult || !linked(o.res, o.call) || o.res.IsError():
			fig.Lost++
			t.Errorf("%s: want a successful linked result, got %v %s (%v)", c.ID(), o.kind, o.res.Content(), o.err)
		default:
			var out faults.CheckpointedOutput
			if assert.NoError(t, json.Unmarshal([]byte(o.res.Content()), &out)) {
				assert.Equal(t, 4, out.ResumedFrom, "the last attempt resumed from the checkpoint")
				fig.Detail["resumed"]++
			}
		}
		for i := range faults.CheckpointItems {
			if n := tally.Of(c.ID(), faults.ItemKind(i)); n != 1 {
				fig.Duplicated++
				t.Errorf("%s: item %d processed %d times, want exactly once", c.ID(), i, n)
			}
		}
		last.interrupt(t)
	}
	report(t, fig, began)
}

// awaitCheckpoint polls the call's status until its running attempt's checkpoint says next.
func awaitCheckpoint(ctx context.Context, t *testing.T, cl *tgclient.Client, callID string, next int) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := cl.Status(ctx, callID)
		var cp faults.CheckpointState
		if err == nil && st.Checkpoint != nil && json.Unmarshal(st.Checkpoint, &cp) == nil && cp.Next == next {
			return
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, "status never showed the checkpoint", "%s: want next %d, last status %+v (%v)", callID, next, st, err)
		case <-tick.C:
		}
	}
}
