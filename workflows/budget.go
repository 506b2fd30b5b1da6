package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Budget bounds what one agent run may start through ExecuteToolCall, ExecuteRound and Inline:
// calls in total, calls of each tool, wall-clock time since the run started, and cost units
// (each tool's Options.Cost). Every limit works at its zero value: 0 is no limit. Give it to the
// run with WithBudget.
type Budget struct {
	// Calls bounds the calls the run starts in total. Optional: default 0 (no limit).
	Calls int
	// CallsPerTool bounds the calls the run starts of each named tool (at most
	// toolcore.MaxBudgetTools); a tool's 0, or a tool it does not name, has no limit of its own.
	// Optional: default nil.
	CallsPerTool map[string]int
	// WallClock bounds the time from the run's start (its WorkflowStartTime) to a call's start
	// (workflow.Now). Optional: default 0 (no limit).
	WallClock time.Duration
	// CostUnits bounds the sum of the Options.Cost of the calls the run starts. Optional:
	// default 0 (no limit).
	CostUnits int64
	// Tools holds the definitions whose Options.Cost a call the run starts as a child workflow
	// (ExecuteToolCall, ExecuteRound) is charged: the agent's workflow code does not run those
	// tools. Inline calls are charged the cost in the Inline's Registry, and a round's
	// RoundOptions.Tools serves when Tools is nil. A call whose tool none of them holds has an
	// unknown cost: refused (BUDGET_EXCEEDED) when CostUnits is set, free otherwise. Optional:
	// default nil.
	Tools *toolcore.Registry
}

// limits returns the budget's limits as toolcore's ledger takes them.
func (b Budget) limits() toolcore.BudgetLimits {
	return toolcore.BudgetLimits{Calls: b.Calls, CallsPerTool: b.CallsPerTool, WallClock: b.WallClock, CostUnits: b.CostUnits}
}

// runBudget is the state of one WithBudget in an agent run: its ledger, where its tools' costs
// come from, and the budget it is nested in. It lives in the run's workflow memory and is
// rebuilt by replay: every count comes from workflow code, every time from workflow.Now.
type runBudget struct {
	ledger *toolcore.BudgetLedger
	tools  *toolcore.Registry
	outer  *runBudget
	scope  string
}

type (
	budgetKey        struct{}
	budgetChargedKey struct{}
	roundToolsKey    struct{}
)

// WithBudget returns a context whose ExecuteToolCall, ExecuteRound and Inline calls spend from b.
// A call is charged when it starts, before anything of it runs: before its child workflow is
// started (a call that attaches to an existing run of the same call ID counts too: the refused
// start is a start), or before an inline call is validated; whatever its outcome, it stays
// charged. A call over any limit starts nothing (no child, no activity), is not charged, and
// returns the BUDGET_EXCEEDED result linked to it (toolcore.BudgetExceededResult), which the
// model reads like any error result; ExecuteRound gives it as that call's OutcomeResult.
//
// The first WithBudget of a run is the run's budget: its wall clock starts at the run's
// WorkflowStartTime, and the run answers the query wire.QueryBudget ("toolgate.budget") with its
// toolcore.BudgetReport (limits, used, remaining). A WithBudget on a context that already has one
// opens a task scope inside it: its wall clock starts at workflow.Now, and a call must fit both
// (it is charged to both). Changing the limits or the Tools' costs of a running agent run
// changes which calls replay starts: guard such a change with workflow.GetVersion, like a
// validator's. A budget does not carry over a continue-as-new: pass what remains in the new
// run's input.
//
// An invalid budget (a negative limit, more than toolcore.MaxBudgetTools tools) is an error.
func WithBudget(ctx workflow.Context, b Budget) (workflow.Context, error) {
	outer := budgetFrom(ctx)
	start, scope := workflow.GetInfo(ctx).WorkflowStartTime, wire.BudgetScopeAgentRun
	if outer != nil {
		start, scope = workflow.Now(ctx), wire.BudgetScopeTask
	}
	ledger, err := toolcore.NewBudgetLedger(b.limits(), start)
	if err != nil {
		return ctx, fmt.Errorf("workflows.WithBudget: %w", err)
	}
	rb := &runBudget{ledger: ledger, tools: b.Tools, outer: outer, scope: scope}
	if outer == nil {
		err := workflow.SetQueryHandler(ctx, wire.QueryBudget, func() (toolcore.BudgetReport, error) {
			return ledger.Report(workflow.Now(ctx)), nil
		})
		if err != nil {
			return ctx, fmt.Errorf("workflows.WithBudget: query handler: %w", err)
		}
	}
	return workflow.WithValue(ctx, budgetKey{}, rb), nil
}

func budgetFrom(ctx workflow.Context) *runBudget {
	rb, _ := ctx.Value(budgetKey{}).(*runBudget)
	return rb
}

// BudgetReport returns the report of the budget of ctx (the innermost WithBudget): its limits,
// what it has used and what remains now; false when ctx has no budget.
func BudgetReport(ctx workflow.Context) (toolcore.BudgetReport, bool) {
	rb := budgetFrom(ctx)
	if rb == nil {
		return toolcore.BudgetReport{}, false
	}
	return rb.ledger.Report(workflow.Now(ctx)), true
}

// RunCallCounts returns the calls charged to the budget of ctx (the innermost WithBudget), in
// total and per tool (a copy): deterministic, from workflow code only. Without a budget it
// returns (0, nil): give the run an unlimited Budget{} to count its calls.
func RunCallCounts(ctx workflow.Context) (total int, perTool map[string]int) {
	rb := budgetFrom(ctx)
	if rb == nil {
		return 0, nil
	}
	return rb.ledger.Counts()
}

// withRoundTools returns ctx carrying a round's tool set, where a budget without Tools finds the
// cost of the round's child calls.
func withRoundTools(ctx workflow.Context, tools *toolcore.Registry) workflow.Context {
	if tools == nil || budgetFrom(ctx) == nil {
		return ctx
	}
	return workflow.WithValue(ctx, roundToolsKey{}, tools)
}

// spendBudget charges call to every budget of ctx (innermost first to outermost) when it fits
// them all, and returns ctx marked as charged, so a call Inline runs as a child is charged once.
// When a limit refuses it, it charges nothing and returns the BUDGET_EXCEEDED result: the call
// must start nothing. tools is the registry the call runs in (Inline's), nil for a child call.
func spendBudget(ctx workflow.Context, call toolcore.ToolCall, tools *toolcore.Registry) (workflow.Context, toolcore.Result, bool) {
	rb := budgetFrom(ctx)
	if rb == nil {
		return ctx, toolcore.Result{}, false
	}
	if charged, _ := ctx.Value(budgetChargedKey{}).(bool); charged || ctx.Err() != nil {
		// Charged already, or canceled: the call ends canceled and starts nothing.
		return ctx, toolcore.Result{}, false
	}
	now := workflow.Now(ctx)
	roundTools, _ := ctx.Value(roundToolsKey{}).(*toolcore.Registry)
	for b := rb; b != nil; b = b.outer {
		// Check every budget before charging any, so a refused call is charged nowhere.
		if ex := b.ledger.Check(call.Name(), b.cost(call.Name(), tools, roundTools), now); ex != nil {
			return ctx, toolcore.BudgetExceededResult(call, b.scope, *ex), true
		}
	}
	for b := rb; b != nil; b = b.outer {
		b.ledger.Spend(call.Name(), b.cost(call.Name(), tools, roundTools), now)
	}
	return workflow.WithValue(ctx, budgetChargedKey{}, true), toolcore.Result{}, false
}

// cost is the Options.Cost of tool: from the registry an inline call runs in (0 for a tool it
// does not hold: the call ends TOOL_NOT_FOUND, nothing runs), else the budget's Tools, else the
// round's; -1 (unknown) when none holds it.
func (b *runBudget) cost(name string, inline, round *toolcore.Registry) int64 {
	if inline != nil {
		t, _ := inline.Get(name)
		if t.IsZero() {
			return 0
		}
		return t.Options().Cost
	}
	for _, reg := range []*toolcore.Registry{b.tools, round} {
		if reg == nil {
			continue
		}
		if t, ok := reg.Get(name); ok {
			return t.Options().Cost
		}
	}
	return -1
}
