package faults_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// TestInlineWorkerKilled: an agent workflow (faults.InlineAgent, hosted by the faultworker with
// its registry) runs a round of calls of every side-effect class inline (workflows.Inline: one
// ExecuteTool activity per call, no child workflow). The worker process, which hosts both the
// agent and the tools, is SIGKILLed while every call's tool runs (each holds after its "run"
// record), and a replacement starts. The agent finishes its round on the replacement with one
// outcome per call: an Unsafe call ends with the outcome-unknown TOOL_EXECUTION_FAILED and its
// tool ran exactly once, with no effect; ReadOnly and Idempotent calls are retried and complete
// on the replacement (attempt 2; at most MaxAttempts on a starved machine) with exactly one
// effect under the inline idempotency key. The agent's history holds no child workflow and
// replays.
func TestInlineWorkerKilled(t *testing.T) {
	sz := sizes()
	f := newFixture(t, sharedDev(t))
	tg, sdk := f.client(t)
	doomed := f.startWorker(t, true)
	began := time.Now()
	fig := figures{Scenario: "inline-worker-killed", Detail: map[string]int{}}

	var calls []toolcore.ToolCall
	for _, tool := range []string{faults.ToolUnsafe, faults.ToolIdempotent, faults.ToolReadOnly} {
		for i := range sz.agentRoundCalls {
			calls = append(calls, call(t, fmt.Sprintf("inl-%s-%d", tool, i), tool, faults.Args{}))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
	defer cancel()
	agentID := "inline-agent-" + f.queue
	run, err := sdk.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: agentID, TaskQueue: f.queue}, faults.InlineAgentName,
		faults.InlineInput{Calls: calls, TaskQueue: f.queue})
	require.NoError(t, err)
	f.watch.wait(t, "every inline call's tool runs on the doomed worker", func(tl faults.Tally) bool {
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

	var lines []faults.AgentLine
	require.NoError(t, run.Get(ctx, &lines), "the agent finishes its round on the replacement")
	require.Len(t, lines, len(calls), "one outcome per call")
	records := f.watch.snapshot(t)
	tally := faults.Count(records)
	effectPID := map[string]int{}
	for _, r := range records {
		if r.Kind == faults.KindEffect {
			effectPID[r.Call] = r.PID
		}
	}
	fig.Calls = len(calls)
	for i, c := range calls {
		id, tool, line := c.ID(), c.Name(), lines[i]
		require.Equal(t, id, line.Call, "outcomes in round order")
		runs, effects := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect)
		var res toolcore.Result
		if line.Kind != faults.TerminalResult || res.UnmarshalJSON(line.Result) != nil || !linked(res, c) {
			fig.Lost++
			t.Errorf("%s: want a linked result, got %+v", id, line)
			continue
		}
		if tool == faults.ToolUnsafe {
			assert.Equal(t, toolcore.CodeToolExecutionFailed, res.ErrorCode(), id)
			assert.True(t, strings.HasPrefix(res.ErrorMessage(), workflows.OutcomeUnknownMessage), "%s: %s", id, res.ErrorMessage())
			if runs != 1 || effects != 0 {
				fig.Duplicated++
				t.Errorf("%s: unsafe tool ran %d times with %d effects, want 1 and 0", id, runs, effects)
			}
			fig.Detail["unsafeOutcomeUnknown"]++
			continue
		}
		out, ok := effectOutput(res)
		if assert.True(t, ok, "%s: want a success, got %s", id, res.Content()) {
			assert.GreaterOrEqual(t, out.Attempt, 2, "%s was retried", id)
			assert.LessOrEqual(t, out.Attempt, faults.RetriedAttempts, id)
			assert.Equal(t, workflows.InlineKey(agentID, id), out.Key, "the inline idempotency key")
			assert.Equal(t, replacement.cmd.Process.Pid, effectPID[id], "%s completed on the replacement", id)
		}
		if effects != 1 || runs < 2 || runs > faults.RetriedAttempts {
			fig.Duplicated++
			t.Errorf("%s: %d runs, %d effects; want 2 to %d runs and exactly 1 effect", id, runs, effects, faults.RetriedAttempts)
		}
		fig.Detail["retriedCompleted"]++
	}

	hist, err := tg.History(ctx, agentID, "")
	require.NoError(t, err)
	scheduled := 0
	for _, e := range hist.GetEvents() {
		if e.GetActivityTaskScheduledEventAttributes() != nil {
			scheduled++
		}
		assert.Nil(t, e.GetStartChildWorkflowExecutionInitiatedEventAttributes(), "an inline call started a child workflow")
	}
	assert.Equal(t, len(calls), scheduled, "one ExecuteTool activity per call, retries included")
	reg, err := faults.Registry(faults.Config{Ledger: filepath.Join(t.TempDir(), "replay.jsonl")})
	require.NoError(t, err)
	assert.NoError(t, replay.History(hist, replay.Options{Registry: reg, Workflows: func(r sdkworker.WorkflowRegistry) {
		r.RegisterWorkflowWithOptions(faults.InlineAgent(reg), workflow.RegisterOptions{Name: faults.InlineAgentName})
	}}), "the inline agent's history replays")
	replacement.interrupt(t)
	report(t, fig, began)
}
