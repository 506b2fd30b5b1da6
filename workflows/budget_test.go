package workflows_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// budgetRun is what one fixtures.BudgetRoundWorkflow run in the test environment produced.
type budgetRun struct {
	out        fixtures.BudgetOutput
	activities int                   // ExecuteTool attempts started (the children's and inline)
	children   int                   // ToolCallWorkflow children started
	query      toolcore.BudgetReport // the wire.QueryBudget answer after the run
}

// payCost is the Options.Cost of the "pay" tool of budgetRegistry.
const payCost = 4

// budgetRegistry is the recorded registry plus "pay", an Idempotent tool costing payCost units.
func budgetRegistry(t *testing.T) *toolcore.Registry {
	t.Helper()
	tools, err := toolbox.Tools(toolbox.Config{})
	require.NoError(t, err)
	pay := running("pay", toolcore.Options{SideEffect: toolcore.Idempotent, Cost: payCost},
		func(context.Context) (any, error) { return "paid", nil })
	return newRegistry(t, append(append(tools, fixtures.Tools()...), pay)...)
}

// runBudget runs fixtures.BudgetRoundWorkflow with in, on the toolgate workflows and the real
// ExecuteTool activity of budgetRegistry, counting what started.
func runBudget(t *testing.T, in fixtures.BudgetInput) budgetRun {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Hour})
	env.SetStartTime(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-budget", TaskQueue: wire.DefaultTaskQueue})
	reg := budgetRegistry(t)
	(&workflows.Workflows{Registry: reg}).Register(env)
	(&activities.Activities{Registry: reg}).Register(env)
	fixtures.RegisterBudgetRoundWorkflow(env, reg)
	var acts, children atomic.Int64
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { acts.Add(1) })
	env.SetOnChildWorkflowStartedListener(func(*workflow.Info, workflow.Context, converter.EncodedValues) { children.Add(1) })
	env.ExecuteWorkflow(fixtures.BudgetRoundWorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var r budgetRun
	require.NoError(t, env.GetWorkflowResult(&r.out))
	v, err := env.QueryWorkflow(wire.QueryBudget)
	require.NoError(t, err)
	require.NoError(t, v.Get(&r.query))
	r.activities, r.children = int(acts.Load()), int(children.Load())
	return r
}

// budgetRounds is one round per call of tool name, numbered ids c1, c2, ...
func budgetRounds(names ...string) [][]json.RawMessage {
	rounds := make([][]json.RawMessage, len(names))
	for i, name := range names {
		args := `{}`
		switch name {
		case toolbox.NameAdd:
			args = `{"left":1,"right":2}`
		case toolbox.NameEcho:
			args = `{"text":"hi"}`
		}
		rounds[i] = []json.RawMessage{call("c"+string(rune('1'+i)), name, args)}
	}
	return rounds
}

// codes is each round's outcome as a result's error code ("ok" for a success, the kind otherwise).
func codes(t *testing.T, rounds [][]fixtures.RoundOutcome) []string {
	t.Helper()
	var got []string
	for _, round := range rounds {
		for _, o := range round {
			switch {
			case o.Result == nil:
				got = append(got, o.Kind)
			case o.Result.IsError():
				got = append(got, o.Result.ErrorCode().String())
			default:
				got = append(got, "ok")
			}
		}
	}
	return got
}

// The "done when": a budget of 3 calls stops the fourth call of an agent run with
// BUDGET_EXCEEDED, as children and inline; the refused call starts no child and no activity, and
// is not charged.
func TestBudgetOfThreeCallsStopsTheFourth(t *testing.T) {
	tests := []struct {
		name         string
		inline       bool
		wantChildren int
	}{
		{name: "children", wantChildren: 3},
		{name: "inline", inline: true, wantChildren: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBudget(t, fixtures.BudgetInput{Calls: 3, Inline: tt.inline,
				RoundInput: fixtures.RoundInput{Rounds: budgetRounds(toolbox.NameAdd, toolbox.NameEcho, toolbox.NameAdd, toolbox.NameAdd)}})
			assert.Equal(t, []string{"ok", "ok", "ok", "BUDGET_EXCEEDED"}, codes(t, r.out.Rounds))
			refused := r.out.Rounds[3][0].Result
			assert.Equal(t, "c4", refused.ToolCallID(), "the result is linked to the refused call")
			assert.Equal(t, "budget exceeded (calls): the agent run has started 3 of its 3 tool calls; the tool did not run", refused.ErrorMessage())
			assert.Equal(t, 3, r.activities, "the fourth call scheduled no activity")
			assert.Equal(t, tt.wantChildren, r.children, "the fourth call started no child")
			require.NotNil(t, r.query.Used.Calls)
			assert.Equal(t, int64(3), *r.query.Used.Calls, "a refused call is not charged")
			require.NotNil(t, r.query.Remaining.Calls)
			assert.Equal(t, int64(0), *r.query.Remaining.Calls)
		})
	}
}

// In one round of parallel calls the calls are charged in source order: the first three start,
// the rest are refused.
func TestBudgetInOneRound(t *testing.T) {
	round := []json.RawMessage{
		call("a", toolbox.NameEcho, `{"text":"1"}`), call("b", toolbox.NameEcho, `{"text":"2"}`),
		call("c", toolbox.NameEcho, `{"text":"3"}`), call("d", toolbox.NameEcho, `{"text":"4"}`),
		call("e", toolbox.NameEcho, `{"text":"5"}`),
	}
	r := runBudget(t, fixtures.BudgetInput{Calls: 3, RoundInput: fixtures.RoundInput{Rounds: [][]json.RawMessage{round}}})
	assert.Equal(t, []string{"ok", "ok", "ok", "BUDGET_EXCEEDED", "BUDGET_EXCEEDED"}, codes(t, r.out.Rounds))
	assert.Equal(t, 3, r.children)
	assert.Equal(t, 3, r.activities)
}

// A tool's own limit refuses only that tool's calls; other tools go on.
func TestBudgetCallsPerTool(t *testing.T) {
	for _, inline := range []bool{false, true} {
		r := runBudget(t, fixtures.BudgetInput{CallsPerTool: map[string]int{toolbox.NameAdd: 1}, Inline: inline,
			RoundInput: fixtures.RoundInput{Rounds: budgetRounds(toolbox.NameAdd, toolbox.NameAdd, toolbox.NameEcho)}})
		assert.Equal(t, []string{"ok", "BUDGET_EXCEEDED", "ok"}, codes(t, r.out.Rounds), "inline %v", inline)
		assert.Contains(t, r.out.Rounds[1][0].Result.ErrorMessage(), `started 1 of its 1 calls of tool "add"`)
		assert.Equal(t, 2, r.activities)
		assert.Equal(t, map[string]int64{toolbox.NameAdd: 0}, r.query.Remaining.CallsPerTool)
	}
}

// Cost units: each call spends its tool's Options.Cost (from Budget.Tools for children, the
// Inline's Registry inline); a call that would overspend is refused, a free tool still runs.
func TestBudgetCostUnits(t *testing.T) {
	for _, inline := range []bool{false, true} {
		r := runBudget(t, fixtures.BudgetInput{CostUnits: 10, Inline: inline,
			RoundInput: fixtures.RoundInput{Rounds: budgetRounds("pay", "pay", "pay", toolbox.NameEcho)}})
		assert.Equal(t, []string{"ok", "ok", "BUDGET_EXCEEDED", "ok"}, codes(t, r.out.Rounds), "inline %v", inline)
		assert.Equal(t, `budget exceeded (costUnits): a call of tool "pay" costs 4 cost units and the agent run has spent 8 of its 10; the tool did not run`,
			r.out.Rounds[2][0].Result.ErrorMessage())
		assert.Equal(t, 3, r.activities)
		require.NotNil(t, r.query.Remaining.CostUnits)
		assert.Equal(t, int64(10-2*payCost), *r.query.Remaining.CostUnits)
	}
}

// A child call to a tool whose cost the run cannot learn is refused under a cost limit: an
// unchecked cost must not pass.
func TestBudgetUnknownCostIsRefused(t *testing.T) {
	r := runBudget(t, fixtures.BudgetInput{CostUnits: 10, RoundInput: fixtures.RoundInput{Rounds: budgetRounds("no_such_tool")}})
	assert.Equal(t, []string{"BUDGET_EXCEEDED"}, codes(t, r.out.Rounds))
	assert.Contains(t, r.out.Rounds[0][0].Result.ErrorMessage(), `the cost of tool "no_such_tool" is unknown`)
	assert.Zero(t, r.children)
}

// Wall clock: the run's clock is the test environment's (SetStartTime, timers): a call started
// after the budget's time is refused, one before runs.
func TestBudgetWallClock(t *testing.T) {
	for _, inline := range []bool{false, true} {
		r := runBudget(t, fixtures.BudgetInput{WallClockMs: time.Minute.Milliseconds(), PauseMs: (40 * time.Second).Milliseconds(), Inline: inline,
			RoundInput: fixtures.RoundInput{Rounds: budgetRounds(toolbox.NameEcho, toolbox.NameEcho, toolbox.NameEcho)}})
		assert.Equal(t, []string{"ok", "ok", "BUDGET_EXCEEDED"}, codes(t, r.out.Rounds), "inline %v", inline)
		assert.Contains(t, r.out.Rounds[2][0].Result.ErrorMessage(), "of its 1m0s wall-clock budget")
		assert.Equal(t, 2, r.activities)
		require.NotNil(t, r.query.Remaining.WallClockMs)
		assert.Equal(t, int64(0), *r.query.Remaining.WallClockMs)
	}
}

// The query answers the run's limits, what it used and what remains.
func TestBudgetQuery(t *testing.T) {
	r := runBudget(t, fixtures.BudgetInput{Calls: 5, CostUnits: 100, Inline: true,
		RoundInput: fixtures.RoundInput{Rounds: budgetRounds("pay", toolbox.NameEcho)}})
	data, err := json.Marshal(r.query)
	require.NoError(t, err)
	assert.JSONEq(t, `{"limits":{"calls":5,"costUnits":100},
		"used":{"calls":2,"callsPerTool":{"echo":1,"pay":1},"wallClockMs":0,"costUnits":4},
		"remaining":{"calls":3,"costUnits":96}}`, string(data))
	require.NotNil(t, r.out.Report)
	assert.Equal(t, r.query, *r.out.Report, "workflows.BudgetReport answers what the query does")
}

// A task scope nested in the run's budget: a call must fit both, and is charged to both; the
// query answers the run's budget.
func TestBudgetTaskScope(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	reg := budgetRegistry(t)
	(&activities.Activities{Registry: reg}).Register(env)
	inline := &workflows.Inline{Registry: reg}
	type counts struct {
		Results    []string       `json:"results"`
		ScopeCalls int            `json:"scopeCalls"`
		RunCalls   int            `json:"runCalls"`
		PerTool    map[string]int `json:"perTool"`
	}
	agent := func(ctx workflow.Context) (counts, error) {
		var c counts
		run, err := workflows.WithBudget(ctx, workflows.Budget{Calls: 3})
		if err != nil {
			return c, err
		}
		task, err := workflows.WithBudget(run, workflows.Budget{CallsPerTool: map[string]int{toolbox.NameEcho: 1}})
		if err != nil {
			return c, err
		}
		for i, ctx := range []workflow.Context{task, task, run, run, run} {
			res, err := inline.ExecuteToolCall(ctx, mustCall(t, call("c"+string(rune('1'+i)), toolbox.NameEcho, `{"text":"x"}`)))
			if err != nil {
				return c, err
			}
			c.Results = append(c.Results, res.ErrorCode().String())
		}
		c.ScopeCalls, _ = workflows.RunCallCounts(task)
		c.RunCalls, c.PerTool = workflows.RunCallCounts(run)
		return c, nil
	}
	env.RegisterWorkflowWithOptions(agent, workflow.RegisterOptions{Name: "agent"})
	env.ExecuteWorkflow("agent")
	require.NoError(t, env.GetWorkflowError())
	var got counts
	require.NoError(t, env.GetWorkflowResult(&got))
	ok := toolcore.ErrorCode(0).String()
	assert.Equal(t, []string{ok, "BUDGET_EXCEEDED", ok, ok, "BUDGET_EXCEEDED"}, got.Results)
	assert.Equal(t, 1, got.ScopeCalls)
	assert.Equal(t, 3, got.RunCalls)
	assert.Equal(t, map[string]int{toolbox.NameEcho: 3}, got.PerTool)
	v, err := env.QueryWorkflow(wire.QueryBudget)
	require.NoError(t, err)
	var report toolcore.BudgetReport
	require.NoError(t, v.Get(&report))
	require.NotNil(t, report.Limits.Calls)
	assert.Equal(t, int64(3), *report.Limits.Calls, "the query answers the run's budget, not the task scope's")
}

// An invalid budget is an error of WithBudget; without a budget nothing is counted.
func TestWithBudgetInvalid(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (int, error) {
		if total, perTool := workflows.RunCallCounts(ctx); total != 0 || perTool != nil {
			return total, nil
		}
		_, err := workflows.WithBudget(ctx, workflows.Budget{Calls: -1})
		return 0, err
	}, workflow.RegisterOptions{Name: "agent"})
	env.ExecuteWorkflow("agent")
	require.Error(t, env.GetWorkflowError())
	assert.Contains(t, env.GetWorkflowError().Error(), "budget Calls -1 must not be negative")
}

// An approval-gated call Inline runs as a child (its reviewer's updates go to the call's own
// workflow) is charged once: with a budget of one call it starts its child and ends as its
// approval decides, not BUDGET_EXCEEDED.
func TestBudgetChargesAnInlineApprovalCallOnce(t *testing.T) {
	r := runBudget(t, fixtures.BudgetInput{Calls: 1, Inline: true,
		RoundInput: fixtures.RoundInput{Rounds: budgetRounds(fixtures.ApproveExpires, toolbox.NameEcho)}})
	assert.Equal(t, []string{"TOOL_APPROVAL_EXPIRED", "BUDGET_EXCEEDED"}, codes(t, r.out.Rounds))
	assert.Equal(t, 1, r.children)
	assert.Equal(t, int64(1), *r.query.Used.Calls)
}
