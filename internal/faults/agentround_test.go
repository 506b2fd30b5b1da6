package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// exampleAgent is the example agent (examples/agent), built once per test binary.
var exampleAgent struct {
	once sync.Once
	path string
	err  error
}

func builtAgent(t *testing.T) string {
	t.Helper()
	built(t) // skips under -short
	exampleAgent.once.Do(func() {
		exampleAgent.path, exampleAgent.err = testbin.Build("./examples/agent", "agent")
	})
	require.NoError(t, exampleAgent.err)
	return exampleAgent.path
}

// agentScript is the JSON script of examples/agent: the model's turns in order.
type agentScript struct {
	Turns []agentTurn `json:"turns"`
}

type agentTurn struct {
	Text      string              `json:"text,omitempty"`
	ToolCalls []toolcore.ToolCall `json:"toolCalls,omitempty"`
}

// agentResult is what examples/agent -json prints.
// agentResultOf waits for the agent process p to exit 0 and returns the one JSON result it
// printed.
func agentResultOf(t *testing.T, p *proc) agentResult {
	t.Helper()
	require.Equal(t, 0, p.waitExit(t, outcomeTimeout), p.stderrText())
	lines := p.stdoutLines()
	require.Len(t, lines, 1, "the agent prints one JSON result")
	var res agentResult
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &res), lines[0])
	return res
}

type agentResult struct {
	WorkflowID   string `json:"workflowId"`
	Answer       string `json:"answer"`
	Turns        int    `json:"turns"`
	Conversation []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"toolCallId"`
		IsError    bool   `json:"isError"`
	} `json:"conversation"`
}

// TestAgentRoundWorkerKilled: the example agent workflow (examples/agent, a real process) runs a
// round of calls of every side-effect class as child workflows; while every call's tool is held
// on the toolgate worker, both the tool worker and the agent process are killed with SIGKILL.
// A replacement worker and a second agent process with the same workflow ID (which resumes the
// run) finish the conversation: the agent runs its next round and answers. Every call has exactly
// one outcome in the conversation and one closed child workflow; no Unsafe tool ran twice (its
// outcome is unknown: it was running when its worker died), and retried tools committed their
// effect exactly once.
func TestAgentRoundWorkerKilled(t *testing.T) {
	agent := builtAgent(t)
	sz := sizes()
	f := newFixture(t, sharedDev(t))
	began := time.Now()
	fig := figures{Scenario: "agent-round-worker-killed", Detail: map[string]int{}}
	doomed := f.startWorker(t, true)

	classes := []string{faults.ToolUnsafe, faults.ToolIdempotent, faults.ToolReadOnly}
	var held, after []toolcore.ToolCall
	for _, tool := range classes {
		for i := range sz.agentRoundCalls {
			held = append(held, call(t, fmt.Sprintf("r1-%s-%d", tool, i), tool, faults.Args{}))
		}
		after = append(after, call(t, "r2-"+tool, tool, faults.Args{}))
	}
	script := agentScript{Turns: []agentTurn{
		{Text: "first round", ToolCalls: held},
		{Text: "second round", ToolCalls: after},
		{Text: "done: {{r2-" + faults.ToolIdempotent + "}}"},
	}}
	data, err := json.Marshal(script)
	require.NoError(t, err)
	scriptPath := filepath.Join(f.dir, "script.json")
	require.NoError(t, os.WriteFile(scriptPath, data, 0o600))
	agentID := "agent-" + f.queue
	args := []string{"-address", f.dev.frontend, "-task-queue", f.queue + "-agent", "-tool-task-queue", f.queue,
		"-id", agentID, "-script", scriptPath, "-json", "-timeout", outcomeTimeout.String()}

	first := start(t, "first agent", agent, args...)
	f.watch.wait(t, "every call of the round runs on the doomed worker", func(tl faults.Tally) bool {
		for _, c := range held {
			if tl.Of(c.ID(), faults.KindRun) == 0 {
				return false
			}
		}
		return true
	})
	first.kill(t)
	doomed.kill(t)
	fig.Faults += 2
	replacement := f.startWorker(t, false)
	res := agentResultOf(t, start(t, "second agent", agent, args...))
	assert.Equal(t, agentID, res.WorkflowID)
	assert.Equal(t, 3, res.Turns)
	assert.True(t, strings.HasPrefix(res.Answer, "done: {") && strings.Contains(res.Answer, `"call":"r2-`+faults.ToolIdempotent+`"`),
		"the answer quotes the second round: %s", res.Answer)

	outcomes := map[string][]string{} // call ID -> tool message contents
	errored := map[string]bool{}
	for _, m := range res.Conversation {
		if m.Role == "tool" {
			outcomes[m.ToolCallID] = append(outcomes[m.ToolCallID], m.Content)
			errored[m.ToolCallID] = m.IsError
		}
	}
	sdk := sdkClient(t, f.dev)
	tally := faults.Count(f.watch.snapshot(t))
	all := append(append([]toolcore.ToolCall(nil), held...), after...)
	fig.Calls = len(all)
	for i, c := range all {
		id := c.ID()
		wasHeld := i < len(held)
		if len(outcomes[id]) != 1 {
			fig.Lost++
			t.Errorf("%s: %d outcomes in the conversation, want 1: %q", id, len(outcomes[id]), outcomes[id])
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		d, err := sdk.DescribeWorkflowExecution(ctx, agentID+"/toolcall-"+id, "")
		cancel()
		if assert.NoError(t, err, id) {
			info := d.GetWorkflowExecutionInfo()
			assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, info.GetStatus(), id)
			assert.Equal(t, agentID, info.GetParentExecution().GetWorkflowId(), "%s is a child of the agent", id)
		}
		content := outcomes[id][0]
		runs, effects := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect)
		if c.Name() == faults.ToolUnsafe {
			maxEffects := 1
			if wasHeld {
				// It ran on the doomed worker, which holds every attempt: no effect, and the
				// outcome is unknown (the worker died with the tool running).
				maxEffects = 0
				assert.True(t, errored[id], "%s: %s", id, content)
				assert.Contains(t, content, workflows.OutcomeUnknownMessage, id)
				fig.Detail["unsafeOutcomeUnknown"]++
			}
			if runs != 1 || effects > maxEffects {
				fig.Duplicated++
				t.Errorf("%s: the unsafe tool ran %d times with %d effects, want once with at most %d", id, runs, effects, maxEffects)
			}
			continue
		}
		var out faults.EffectOutput
		if assert.False(t, errored[id], "%s: %s", id, content) && assert.NoError(t, json.Unmarshal([]byte(content), &out), content) {
			assert.Equal(t, id, out.Call)
			if wasHeld {
				// Attempt 2 on the replacement (3 when a starved machine timed out attempt 1's
				// heartbeats before the kill).
				assert.GreaterOrEqual(t, out.Attempt, 2, "%s completed on the replacement", id)
				fig.Detail["retriedCompleted"]++
			}
		}
		if effects != 1 || runs > faults.RetriedAttempts {
			fig.Duplicated++
			t.Errorf("%s: %d runs, %d effects; want at most %d runs and exactly 1 effect", id, runs, effects, faults.RetriedAttempts)
		}
	}
	replacement.interrupt(t)
	report(t, fig, began)
}
