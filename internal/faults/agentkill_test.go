package faults_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
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
		_, done := seen[c.ID()]
		require.False(t, done, "%s finished before the gate opened", c.ID())
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
		if _, ok := effectOutput(res); !ok {
			t.Errorf("%s: want a success, got %s", id, res.Content())
		}
		if before, ok := seen[id]; ok {
			fig.Detail["sameResultAsFirstAgent"]++
			assert.Equal(t, string(before.Result), string(line.Result), "%s: the recorded result, byte for byte", id)
		}
		if runs, effects := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect); runs != 1 || effects != 1 {
			fig.Duplicated++
			t.Errorf("%s: %d runs, %d effects; want 1 and 1", id, runs, effects)
		}
	}
	fig.Detail["finishedBeforeKill"] = len(seen)
	fig.Detail["runningAtKill"] = len(late)
	assert.Len(t, again, len(calls), fmt.Sprintf("one outcome per call, got %d", len(again)))
	report(t, fig, began)
}
