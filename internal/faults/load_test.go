package faults_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
)

// loadCase is one kind of call in the load mix and what it must end with.
type loadCase struct {
	name    string
	tool    string
	args    faults.Args
	kind    faults.Terminal
	code    toolcore.ErrorCode // 0: a success
	message string             // the error message, when code is set
	runs    int                // attempts the tool must have made
}

// loadMix is the mix of calls TestLoad runs; unknownTool is the TOOL_NOT_FOUND message of a call
// to "no_such_tool" on its queue.
func loadMix(unknownTool string) []loadCase {
	pad := strings.Repeat("<pad>", 800)
	return []loadCase{
		{name: "unsafe-ok", tool: faults.ToolUnsafe, kind: faults.TerminalResult, runs: 1},
		{name: "idempotent-ok", tool: faults.ToolIdempotent, kind: faults.TerminalResult, runs: 1},
		{name: "readonly-ok", tool: faults.ToolReadOnly, kind: faults.TerminalResult, runs: 1},
		{name: "readonly-padded-ok", tool: faults.ToolReadOnly, args: faults.Args{Pad: pad}, kind: faults.TerminalResult, runs: 1},
		{name: "unsafe-error", tool: faults.ToolUnsafe, args: faults.Args{Outcome: faults.OutcomeError}, kind: faults.TerminalResult,
			code: toolcore.CodeToolExecutionFailed, message: faults.ErrorMessage, runs: 1},
		{name: "readonly-panic", tool: faults.ToolReadOnly, args: faults.Args{Outcome: faults.OutcomePanic}, kind: faults.TerminalResult,
			code: toolcore.CodeToolExecutionFailed, message: faults.PanicMessage, runs: 1},
		{name: "idempotent-fatal", tool: faults.ToolIdempotent, args: faults.Args{Outcome: faults.OutcomeFatal}, kind: faults.TerminalFatal, runs: 1},
		{name: "idempotent-transient", tool: faults.ToolIdempotent, args: faults.Args{Outcome: faults.OutcomeTransient}, kind: faults.TerminalResult, runs: 2},
		{name: "unsafe-transient", tool: faults.ToolUnsafe, args: faults.Args{Outcome: faults.OutcomeTransient}, kind: faults.TerminalResult,
			code: toolcore.CodeToolExecutionFailed, message: faults.TransientMessage, runs: 1},
		{name: "rejected", tool: faults.ToolReadOnly, args: faults.Args{Outcome: faults.OutcomeReject}, kind: faults.TerminalResult,
			code: toolcore.CodeToolArgumentsInvalid, message: faults.RejectReason},
		{name: "unknown-tool", tool: "no_such_tool", kind: faults.TerminalResult,
			code: toolcore.CodeToolNotFound, message: unknownTool},
	}
}

// TestLoad runs thousands of calls (hundreds in the short form) at high concurrency across two
// worker processes with mixed outcomes. Afterwards every call ID has exactly one execution, closed
// with the outcome its arguments chose; every result links to its call; and the effects counted in
// the ledger equal the successful executions.
func TestLoad(t *testing.T) {
	sz := sizes()
	f := newFixture(t, sharedDev(t))
	cl, sdk := f.client(t)
	f.startWorker(t, false)
	f.startWorker(t, false)
	mix := loadMix(f.unknownToolMessage(t, "no_such_tool"))
	fig := figures{Scenario: "load", Detail: map[string]int{}}

	calls := make([]toolcore.ToolCall, sz.loadCalls)
	cases := make([]loadCase, sz.loadCalls)
	for i := range calls {
		cases[i] = mix[i%len(mix)]
		calls[i] = call(t, fmt.Sprintf("load-%05d-%s", i, cases[i].name), cases[i].tool, cases[i].args)
	}
	got := make([]outcome, len(calls))
	began := time.Now()
	sem := make(chan struct{}, sz.loadConcurrency)
	var wg sync.WaitGroup
	for i, c := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
			defer cancel()
			res, err := cl.Execute(ctx, c)
			got[i] = outcome{call: c, res: res, err: err, kind: faults.Classify(res, err), hung: ctx.Err() != nil}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	fig.Detail["callsPerSecond"] = int(float64(len(calls)) / elapsed.Seconds())

	records := f.watch.snapshot(t)
	tally := faults.Count(records)
	fig.Calls = len(calls)
	successes, effects := 0, 0
	for i, o := range got {
		want, id := cases[i], o.call.ID()
		runs, eff := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect)
		effects += eff
		switch {
		case o.hung:
			fig.Hung++
			t.Errorf("%s: no outcome", id)
			continue
		case o.kind != want.kind:
			fig.Lost++
			t.Errorf("%s: got %v (%v), want %v", id, o.kind, o.err, want.kind)
			continue
		case o.kind == faults.TerminalResult && !linked(o.res, o.call):
			fig.Lost++
			t.Errorf("%s: result not linked: %+v", id, o.res)
			continue
		}
		fig.Detail[want.name]++
		if o.kind == faults.TerminalResult && want.code == 0 {
			out, ok := effectOutput(o.res)
			if assert.True(t, ok, "%s: %s", id, o.res.Content()) {
				successes++
				assert.Equal(t, want.runs, out.Attempt, "%s: the attempt that succeeded", id)
				assert.Equal(t, "toolcall-"+id, out.Key, id)
			}
		}
		if want.code != 0 {
			assert.Equal(t, want.code, o.res.ErrorCode(), id)
			assert.Equal(t, want.message, o.res.ErrorMessage(), id)
		}
		if runs != want.runs || eff > 1 || (want.code == 0 && want.kind == faults.TerminalResult) != (eff == 1) {
			fig.Duplicated++
			t.Errorf("%s: %d runs and %d effects, want %d runs", id, runs, eff, want.runs)
		}
	}
	assert.Equal(t, successes, effects, "effects counted in the ledger = successful executions")
	fig.Detail["successes"] = successes
	fig.Detail["effects"] = effects
	pids := map[int]int{}
	for _, r := range records {
		if r.Kind == faults.KindRun {
			pids[r.PID]++
		}
	}
	counts := make([]int, 0, len(pids))
	for _, n := range pids {
		counts = append(counts, n)
	}
	slices.Sort(counts)
	for i, n := range counts {
		fig.Detail[fmt.Sprintf("runsOnWorker%d", i+1)] = n
	}

	// Every call ID has exactly one execution, closed, in visibility.
	want := map[string]enumspb.WorkflowExecutionStatus{}
	for i, c := range calls {
		st := enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
		if cases[i].kind == faults.TerminalFatal {
			st = enumspb.WORKFLOW_EXECUTION_STATUS_FAILED
		}
		want["toolcall-"+c.ID()] = st
	}
	var seen map[string][]enumspb.WorkflowExecutionStatus
	require.Eventually(t, func() bool {
		seen = listExecutions(t, sdk, fmt.Sprintf("TaskQueue = '%s'", f.queue))
		total := 0
		for _, s := range seen {
			total += len(s)
			if slices.Contains(s, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING) {
				return false // visibility lags the close
			}
		}
		return total >= len(want)
	}, outcomeTimeout, 200*time.Millisecond, "visibility lists every call")
	for id, st := range want {
		if assert.Len(t, seen[id], 1, "%s: executions", id) {
			assert.Equal(t, st, seen[id][0], id)
		}
	}
	assert.Len(t, seen, len(want), "no execution beyond the calls")
	report(t, fig, began)
}

// listExecutions lists the executions matching query: workflow ID -> statuses.
func listExecutions(t *testing.T, sdk interface {
	ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
}, query string) map[string][]enumspb.WorkflowExecutionStatus {
	t.Helper()
	out := map[string][]enumspb.WorkflowExecutionStatus{}
	var token []byte
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		resp, err := sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: "default", PageSize: 1000, Query: query, NextPageToken: token,
		})
		cancel()
		require.NoError(t, err, query)
		for _, e := range resp.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			out[id] = append(out[id], e.GetStatus())
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out
		}
	}
}
