package faults_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// agentLines decodes the agent's stdout lines by call ID; a call with two lines is an error.
func agentLines(t *testing.T, lines []string) map[string]faults.AgentLine {
	t.Helper()
	byCall := map[string]faults.AgentLine{}
	for _, l := range lines {
		var a faults.AgentLine
		require.NoError(t, json.Unmarshal([]byte(l), &a), l)
		_, dup := byCall[a.Call]
		require.False(t, dup, "two outcomes for %s", a.Call)
		byCall[a.Call] = a
	}
	return byCall
}

// TestAgentKilled: an agent process (faultworker agent, which runs calls with client.Execute) is
// killed with SIGKILL after starting its calls: some have finished, the rest have their tool
// running. A new agent resubmitting the same calls gets the recorded results, byte for byte for
// those the first agent saw, and no tool runs a second time.
//
// On a starved machine the heartbeat timeout of the test tools can expire for a running tool;
// an Unsafe one then ends outcome-unknown (at most one run) and a retryable one is retried with
// the same idempotency key. Neither is caused by the resubmission, and both are counted.
func TestAgentKilled(t *testing.T) {
	_, fw := built(t)
	sz := sizes()
	f := newFixture(t, sharedDev(t))
	f.startWorker(t, false)
	began := time.Now()
	fig := figures{Scenario: "agent-killed", Detail: map[string]int{}}

	tools := []string{faults.ToolUnsafe, faults.ToolIdempotent, faults.ToolReadOnly}
	var calls, early, late []toolcore.ToolCall
	var file []byte
	for i := range sz.agentKillCalls {
		tool := tools[i%len(tools)]
		a := faults.Args{}
		if i%2 == 1 {
			a.Gate = "late" // still running when the agent dies
		}
		c := call(t, "ak-"+strconv.Itoa(i)+"-"+tool, tool, a)
		calls = append(calls, c)
		if a.Gate == "" {
			early = append(early, c)
		} else {
			late = append(late, c)
		}
		data, err := c.MarshalJSON()
		require.NoError(t, err)
		file = append(append(file, data...), '\n')
	}
	callsPath := filepath.Join(f.dir, "calls.jsonl")
	require.NoError(t, os.WriteFile(callsPath, file, 0o600))
	agentArgs := []string{"agent", "-address", f.dev.frontend, "-task-queue", f.queue, "-calls", callsPath,
		"-concurrency", strconv.Itoa(len(calls))}

	first := start(t, "first agent", fw, agentArgs...)
	seen := agentLines(t, first.waitLines(t, "the early calls' outcomes", outcomeTimeout, func(lines []string) bool {
		return len(lines) >= len(early)
	}))
	f.watch.wait(t, "the late calls' tools run", func(tl faults.Tally) bool {
		for _, c := range late {
			if tl.Of(c.ID(), faults.KindRun) == 0 {
				return false
			}
		}
		return true
	})
	first.kill(t)
	fig.Faults++
	for _, c := range late {
		// A late call can only have ended early with the outcome-unknown result of an Unsafe
		// tool whose heartbeats a starved machine delayed past their timeout.
		if line, done := seen[c.ID()]; done {
			var res toolcore.Result
			require.NoError(t, json.Unmarshal(line.Result, &res), "%s ended before its gate opened: %+v", c.ID(), line)
			require.Equal(t, faults.ToolUnsafe, c.Name(), "%s ended before its gate opened: %+v", c.ID(), line)
			require.True(t, strings.HasPrefix(res.ErrorMessage(), workflows.OutcomeUnknownMessage), "%+v", line)
		}
	}
	f.open(t, "late")

	second := start(t, "second agent", fw, agentArgs...)
	require.Equal(t, 0, second.waitExit(t, outcomeTimeout), second.stderrText())
	again := agentLines(t, second.stdoutLines())
	tally := faults.Count(f.watch.snapshot(t))
	fig.Calls = len(calls)
	for _, c := range calls {
		id := c.ID()
		line, ok := again[id]
		if !ok {
			fig.Lost++
			t.Errorf("%s: no outcome from the second agent", id)
			continue
		}
		var res toolcore.Result
		if line.Kind != faults.TerminalResult || json.Unmarshal(line.Result, &res) != nil || !linked(res, c) {
			fig.Lost++
			t.Errorf("%s: want a linked result, got %+v", id, line)
			continue
		}
		if before, ok := seen[id]; ok {
			fig.Detail["sameResultAsFirstAgent"]++
			assert.Equal(t, string(before.Result), string(line.Result), "%s: the recorded result, byte for byte", id)
		}
		runs, effects := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect)
		_, success := effectOutput(res)
		unknown := c.Name() == faults.ToolUnsafe && strings.HasPrefix(res.ErrorMessage(), workflows.OutcomeUnknownMessage)
		switch {
		case success:
		case unknown:
			fig.Detail["unsafeOutcomeUnknownUnderLoad"]++
		default:
			t.Errorf("%s: want a success, got %s", id, res.Content())
		}
		// Exactly one run and effect; a retryable tool may repeat only when a starved machine
		// timed out its heartbeats, never because of the resubmission.
		maxRuns := 1
		if c.Name() != faults.ToolUnsafe {
			maxRuns = faults.RetriedAttempts
		}
		if runs < 1 || runs > maxRuns || effects > runs || (success && effects == 0) || (c.Name() == faults.ToolUnsafe && effects > 1) {
			fig.Duplicated++
			t.Errorf("%s: %d runs, %d effects", id, runs, effects)
		}
		if runs > 1 {
			fig.Detail["retriedUnderLoad"]++
		}
	}
	fig.Detail["finishedBeforeKill"] = len(seen)
	fig.Detail["runningAtKill"] = len(late)
	assert.Len(t, again, len(calls), fmt.Sprintf("one outcome per call, got %d", len(again)))
	report(t, fig, began)
}
