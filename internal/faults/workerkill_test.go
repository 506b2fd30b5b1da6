package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// outcome is what the client got for one call.
type outcome struct {
	call toolcore.ToolCall
	res  toolcore.Result
	err  error
	kind faults.Terminal
	hung bool
}

// results waits for the outcome of every call with client.Result, concurrently; a call without
// an outcome after outcomeTimeout is hung.
func results(cl *tgclient.Client, calls []toolcore.ToolCall) []outcome {
	out := make([]outcome, len(calls))
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i, c := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
			defer cancel()
			res, err := cl.Result(ctx, c.ID())
			out[i] = outcome{call: c, res: res, err: err, kind: faults.Classify(res, err), hung: ctx.Err() != nil}
		})
	}
	wg.Wait()
	return out
}

// linked reports whether res is the result message of c.
func linked(res toolcore.Result, c toolcore.ToolCall) bool {
	return !res.IsZero() && res.ToolCallID() == c.ID() && res.ToolName() == c.Name() &&
		res.ID() == toolcore.ResultIDPrefix+c.ID()
}

// effectOutput decodes the content of a successful effect tool result.
func effectOutput(res toolcore.Result) (faults.EffectOutput, bool) {
	var out faults.EffectOutput
	if res.IsZero() || res.IsError() || json.Unmarshal([]byte(res.Content()), &out) != nil {
		return out, false
	}
	return out, true
}

// TestWorkerKilled: a worker process is killed with SIGKILL while every call's tool runs on it.
// ReadOnly and Idempotent calls complete on a replacement worker (attempt 2, or 3 on a starved
// machine); Unsafe calls end
// with the outcome-unknown TOOL_EXECUTION_FAILED, and their tool ran exactly once.
func TestWorkerKilled(t *testing.T) {
	dev := sharedDev(t)
	sz := sizes()
	began := time.Now()
	fig := figures{Scenario: "worker-killed", Detail: map[string]int{}}
	for round := range sz.workerKillRounds {
		f := newFixture(t, dev)
		cl, _ := f.client(t)
		doomed := f.startWorker(t, true)

		var calls []toolcore.ToolCall
		for _, tool := range []string{faults.ToolUnsafe, faults.ToolIdempotent, faults.ToolReadOnly} {
			for i := range sz.workerKillCalls {
				calls = append(calls, call(t, fmt.Sprintf("wk%d-%s-%d", round, tool, i), tool, faults.Args{}))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		for _, c := range calls {
			_, err := cl.Start(ctx, c)
			require.NoError(t, err)
		}
		cancel()
		f.watch.wait(t, "every tool runs on the doomed worker", func(tl faults.Tally) bool {
			for _, c := range calls {
				if tl.Of(c.ID(), faults.KindRun) == 0 {
					return false
				}
			}
			return true
		})
		doomed.kill(t)
		fig.Faults++
		replacement := f.startWorker(t, false)

		got := results(cl, calls)
		tally := faults.Count(f.watch.snapshot(t))
		fig.Calls += len(calls)
		for _, o := range got {
			id, tool := o.call.ID(), o.call.Name()
			runs, effects := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect)
			switch {
			case o.hung:
				fig.Hung++
				continue
			case o.kind != faults.TerminalResult || !linked(o.res, o.call):
				fig.Lost++
				t.Errorf("%s: want a linked result, got %v (%v)", id, o.kind, o.err)
				continue
			}
			if tool == faults.ToolUnsafe {
				assert.Equal(t, toolcore.CodeToolExecutionFailed, o.res.ErrorCode(), id)
				assert.True(t, strings.HasPrefix(o.res.ErrorMessage(), workflows.OutcomeUnknownMessage), "%s: %s", id, o.res.ErrorMessage())
				if runs != 1 || effects != 0 {
					fig.Duplicated++
					t.Errorf("%s: unsafe tool ran %d times with %d effects, want 1 and 0", id, runs, effects)
				}
				fig.Detail["unsafeOutcomeUnknown"]++
				continue
			}
			out, ok := effectOutput(o.res)
			if assert.True(t, ok, "%s: want a success, got %s", id, o.res.Content()) {
				// Attempt 2 normally; 3 when a starved machine delayed attempt 1's heartbeats
				// past their timeout before the kill, so attempt 2 also went to the doomed worker.
				assert.GreaterOrEqual(t, out.Attempt, 2, "%s completed on the replacement", id)
				assert.LessOrEqual(t, out.Attempt, faults.RetriedAttempts, id)
				assert.Equal(t, "toolcall-"+id, out.Key, "idempotency key")
			}
			if effects != 1 || runs > faults.RetriedAttempts {
				fig.Duplicated++
				t.Errorf("%s: %d runs, %d effects; want at most %d runs and exactly 1 effect", id, runs, effects, faults.RetriedAttempts)
			}
			fig.Detail["retriedCompleted"]++
		}
		replacement.interrupt(t)
	}
	report(t, fig, began)
}
