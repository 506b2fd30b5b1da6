package faults_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// TestServerKilled: the dev server process is killed with SIGKILL while calls run (some done,
// some with their tool running, the rest queued) and restarted on the same data directory and
// port. The workers and the client stay up and reconnect. Every call started before the crash
// reaches exactly one outcome after the restart; an Unsafe tool runs at most once, and a
// repeated Idempotent or ReadOnly tool repeats with the same idempotency key.
func TestServerKilled(t *testing.T) {
	sz := sizes()
	dataDir := t.TempDir()
	dev := newDev(t, dataDir, "0")
	f := newFixture(t, dev)
	cl, _ := f.client(t)
	f.startWorker(t, false)
	f.startWorker(t, false)
	began := time.Now()
	fig := figures{Scenario: "server-killed", Detail: map[string]int{}}

	tools := []string{faults.ToolUnsafe, faults.ToolIdempotent, faults.ToolReadOnly}
	for round := range sz.serverKillRounds {
		gate := fmt.Sprintf("release-%d", round)
		var calls, gated []toolcore.ToolCall
		for i := range sz.serverKillCalls {
			tool := tools[i%len(tools)]
			a := faults.Args{}
			if i%2 == 1 {
				a.Gate = gate // running when the server dies
			}
			c := call(t, fmt.Sprintf("sk%d-%d-%s", round, i, tool), tool, a)
			calls = append(calls, c)
			if a.Gate != "" {
				gated = append(gated, c)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		for _, c := range calls {
			_, err := cl.Start(ctx, c)
			require.NoError(t, err)
		}
		cancel()
		f.watch.wait(t, "the gated tools run", func(tl faults.Tally) bool {
			for _, c := range gated {
				if tl.Of(c.ID(), faults.KindRun) == 0 {
					return false
				}
			}
			return true
		})

		dev.kill(t)
		fig.Faults++
		f.open(t, gate) // the tools finish while the server is down
		restarted, err := startDev(binaries.toolgate, dataDir, dev.port)
		require.NoError(t, err)
		t.Cleanup(restarted.stop)
		*dev = *restarted // the fixture and its workers keep the same address

		got := results(cl, calls)
		tally := faults.Count(f.watch.snapshot(t))
		fig.Calls += len(calls)
		for _, o := range got {
			id, tool := o.call.ID(), o.call.Name()
			runs, effects := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect)
			switch {
			case o.hung:
				fig.Hung++
				t.Errorf("%s: no outcome after the restart", id)
				continue
			case o.kind != faults.TerminalResult || !linked(o.res, o.call):
				fig.Lost++
				t.Errorf("%s: want a linked result, got %v (%v)", id, o.kind, o.err)
				continue
			}
			out, ok := effectOutput(o.res)
			switch {
			case ok:
				fig.Detail["ok"]++
				assert.Equal(t, "toolcall-"+id, out.Key, id)
			case tool == faults.ToolUnsafe && o.res.ErrorCode() == toolcore.CodeToolExecutionFailed:
				fig.Detail["unsafeOutcomeUnknown"]++
				assert.Contains(t, o.res.ErrorMessage(), workflows.OutcomeUnknownMessage, id)
			default:
				t.Errorf("%s: unexpected result %s", id, o.res.Content())
			}
			if runs > 1 {
				fig.Detail["repeatedRuns"]++
			}
			if (tool == faults.ToolUnsafe && (runs != 1 || effects > 1)) || effects > runs ||
				(ok && effects == 0) || runs > faults.RetriedAttempts {
				fig.Duplicated++
				t.Errorf("%s (%s): %d runs, %d effects", id, tool, runs, effects)
			}
		}
	}
	report(t, fig, began)
}
