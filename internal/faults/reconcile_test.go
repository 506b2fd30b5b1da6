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
	"github.com/toolgate/toolgate/wire"
)

// TestReconcileAfterWorkerKilled: an Unsafe tool that requires approval is approved, commits its
// effect, and its worker is killed with SIGKILL before it returns. On a replacement worker the
// workflow reconciles instead of reporting "outcome unknown": the result is the reconciled
// output, and the ledger holds exactly one run and one effect.
func TestReconcileAfterWorkerKilled(t *testing.T) {
	dev := sharedDev(t)
	rounds := 1
	if *soak {
		rounds = 5
	}
	began := time.Now()
	fig := figures{Scenario: "reconcile-after-worker-killed", Detail: map[string]int{}}
	for round := range rounds {
		f := newFixture(t, dev)
		cl, _ := f.client(t)
		doomed := f.startWorker(t, true)
		c := call(t, fmt.Sprintf("rc%d", round), faults.ToolReconciled, faults.Args{})
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		_, err := cl.Start(ctx, c)
		require.NoError(t, err)
		st := awaitApproval(ctx, t, cl, c.ID())
		_, err = cl.Decide(ctx, c.ID(), true, wire.ApprovalDecision{CallHash: st.CallHash, Reviewer: "faults"})
		require.NoError(t, err)
		cancel()
		f.watch.wait(t, "the approved tool commits its effect", func(tl faults.Tally) bool { return tl.Of(c.ID(), faults.KindEffect) == 1 })
		doomed.kill(t)
		fig.Faults++
		replacement := f.startWorker(t, false)

		o := results(cl, []toolcore.ToolCall{c})[0]
		tally := faults.Count(f.watch.snapshot(t))
		fig.Calls++
		switch {
		case o.hung:
			fig.Hung++
		case o.kind != faults.TerminalResult || !linked(o.res, o.call):
			fig.Lost++
			t.Errorf("%s: want a linked result, got %v (%v)", c.ID(), o.kind, o.err)
		default:
			var out faults.ReconciledOutput
			if assert.False(t, o.res.IsError(), o.res.Content()) && assert.NoError(t, json.Unmarshal([]byte(o.res.Content()), &out)) {
				assert.Equal(t, faults.ReconciledOutput{Call: c.ID(), Key: "toolcall-" + c.ID(), Reconciled: true}, out)
				fig.Detail["reconciled"]++
			}
		}
		if runs, effects := tally.Of(c.ID(), faults.KindRun), tally.Of(c.ID(), faults.KindEffect); runs != 1 || effects != 1 {
			fig.Duplicated++
			t.Errorf("%s: %d runs and %d effects, want exactly 1 and 1", c.ID(), runs, effects)
		}
		replacement.interrupt(t)
	}
	report(t, fig, began)
}

// awaitApproval polls the approval query until the call waits for a decision.
func awaitApproval(ctx context.Context, t *testing.T, cl *tgclient.Client, callID string) wire.ApprovalState {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := cl.Approval(ctx, callID)
		if err == nil && st.Waiting {
			return st
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, "the call never waited for approval", "%s: %v", callID, err)
		case <-tick.C:
		}
	}
}

// TestApprovalSurvivesRestarts: calls wait for approval while their worker and the dev server
// are killed with SIGKILL and restarted on the same data directory. The approval sent afterwards
// applies once: each approved tool commits exactly one effect, a second decision is refused.
func TestApprovalSurvivesRestarts(t *testing.T) {
	calls := 3
	if *soak {
		calls = 30
	}
	dataDir := t.TempDir()
	dev := newDev(t, dataDir, "0")
	f := newFixture(t, dev)
	cl, _ := f.client(t)
	worker := f.startWorker(t, false)
	began := time.Now()
	fig := figures{Scenario: "approval-survives-restarts", Detail: map[string]int{}}

	var waiting []toolcore.ToolCall
	hashes := map[string]string{}
	ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
	defer cancel()
	for i := range calls {
		c := call(t, fmt.Sprintf("ar-%d", i), faults.ToolReconciled, faults.Args{})
		_, err := cl.Start(ctx, c)
		require.NoError(t, err)
		hashes[c.ID()] = awaitApproval(ctx, t, cl, c.ID()).CallHash
		waiting = append(waiting, c)
	}

	worker.kill(t)
	dev.kill(t)
	fig.Faults += 2
	restarted, err := startDev(binaries.toolgate, dataDir, dev.port)
	require.NoError(t, err)
	t.Cleanup(restarted.stop)
	*dev = *restarted
	f.startWorker(t, false)

	for _, c := range waiting {
		st := awaitApproval(ctx, t, cl, c.ID())
		assert.Equal(t, hashes[c.ID()], st.CallHash, "the same call waits")
		_, err := cl.Decide(ctx, c.ID(), true, wire.ApprovalDecision{CallHash: st.CallHash, Reviewer: "faults"})
		require.NoError(t, err)
		_, err = cl.Decide(ctx, c.ID(), true, wire.ApprovalDecision{CallHash: st.CallHash, Reviewer: "again"})
		assert.ErrorIs(t, err, tgclient.ErrNotAwaitingApproval, "a second decision is refused")
	}
	got := results(cl, waiting)
	tally := faults.Count(f.watch.snapshot(t))
	fig.Calls += len(waiting)
	for _, o := range got {
		id := o.call.ID()
		switch {
		case o.hung:
			fig.Hung++
			continue
		case o.kind != faults.TerminalResult || !linked(o.res, o.call) || o.res.IsError():
			fig.Lost++
			t.Errorf("%s: want a successful linked result, got %v %s (%v)", id, o.kind, o.res.Content(), o.err)
			continue
		}
		if runs, effects := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect); runs != 1 || effects != 1 {
			fig.Duplicated++
			t.Errorf("%s: %d runs and %d effects, want exactly 1 and 1", id, runs, effects)
		}
		fig.Detail["approvedOnce"]++
	}
	report(t, fig, began)
}
