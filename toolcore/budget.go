package toolcore

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Budgets. A budget bounds what one agent run (workflows.WithBudget) or one MCP session
// (`toolgate mcp --budget-*`) may start: calls in total, calls of each tool, wall-clock time since
// it began, and cost units (Options.Cost). A call is charged when it starts, before anything of it
// runs; a call over any limit is not charged and does not start: it ends with the
// BUDGET_EXCEEDED result (BudgetExceededResult). The ledger is pure: it reads no clock of its own
// (the caller passes now: workflow.Now in workflow code), so replay charges the same calls.

// Bounds of BudgetLimits and BudgetReport.
const (
	// MaxBudgetTools bounds the tools BudgetLimits.CallsPerTool names.
	MaxBudgetTools = 1000
	// MaxReportedTools bounds the tools without a limit of their own that a BudgetReport lists
	// in Used.CallsPerTool (name order); BudgetReport.ToolsOmitted counts the rest.
	MaxReportedTools = 100
)

// BudgetLimits are the limits of a budget. Every limit works at its zero value: 0 is no limit.
type BudgetLimits struct {
	// Calls bounds the calls started in total. Optional: default 0 (no limit).
	Calls int
	// CallsPerTool bounds the calls started of each named tool (at most MaxBudgetTools names); a
	// tool's 0, or a tool it does not name, has no limit of its own. To forbid a tool, use policy.
	// Optional: default nil.
	CallsPerTool map[string]int
	// WallClock bounds the time from the budget's start to a call's start. Optional: default 0
	// (no limit).
	WallClock time.Duration
	// CostUnits bounds the sum of the Options.Cost of the calls started. Optional: default 0 (no
	// limit).
	CostUnits int64
}

// IsZero reports whether the limits limit nothing.
func (b BudgetLimits) IsZero() bool {
	if b.Calls != 0 || b.WallClock != 0 || b.CostUnits != 0 {
		return false
	}
	for _, n := range b.CallsPerTool {
		if n != 0 {
			return false
		}
	}
	return true
}

// Check rejects negative limits and more than MaxBudgetTools tools.
func (b BudgetLimits) Check() error {
	switch {
	case b.Calls < 0:
		return fmt.Errorf("budget Calls %d must not be negative", b.Calls)
	case b.WallClock < 0:
		return fmt.Errorf("budget WallClock %s must not be negative", b.WallClock)
	case b.CostUnits < 0:
		return fmt.Errorf("budget CostUnits %d must not be negative", b.CostUnits)
	case len(b.CallsPerTool) > MaxBudgetTools:
		return fmt.Errorf("budget CallsPerTool names %d tools, more than %d", len(b.CallsPerTool), MaxBudgetTools)
	}
	for _, name := range slices.Sorted(maps.Keys(b.CallsPerTool)) {
		if n := b.CallsPerTool[name]; n < 0 {
			return fmt.Errorf("budget CallsPerTool[%s] %d must not be negative", quoteShort(name), n)
		}
	}
	return nil
}

// BudgetLimit names the limit of a budget that refused a call.
type BudgetLimit string

// The limits of a budget, as BudgetExceeded.Limit names them.
const (
	BudgetLimitCalls     BudgetLimit = "calls"
	BudgetLimitToolCalls BudgetLimit = "callsPerTool"
	BudgetLimitWallClock BudgetLimit = "wallClock"
	BudgetLimitCostUnits BudgetLimit = "costUnits"
)

// BudgetExceeded says which limit refused a call, and how far the budget had got.
type BudgetExceeded struct {
	// Limit is the limit that refused the call.
	Limit BudgetLimit
	// Tool is the called tool's name.
	Tool string
	// Used is what the budget had spent of Limit before this call: calls (of Tool for
	// BudgetLimitToolCalls), cost units, or the wall-clock time in milliseconds.
	Used int64
	// Max is Limit's value, in Used's unit.
	Max int64
	// Cost is the call's Options.Cost; CostUnknown when the budget could not learn it.
	Cost int64
	// CostUnknown says the tool's cost is unknown where a cost limit applies: refused, because an
	// unknown cost cannot be checked against the limit.
	CostUnknown bool
}

// Message is the model-readable text of the BUDGET_EXCEEDED result: which limit, used of
// limit, and that the call did not run. scope names what the budget belongs to ("agent run",
// "MCP session"). Tool names are cut to MaxNameBytes.
func (e BudgetExceeded) Message(scope string) string {
	tool := strconv.Quote(cutName(e.Tool))
	var msg string
	switch e.Limit {
	case BudgetLimitCalls:
		msg = fmt.Sprintf("the %s has started %d of its %d tool calls", scope, e.Used, e.Max)
	case BudgetLimitToolCalls:
		msg = fmt.Sprintf("the %s has started %d of its %d calls of tool %s", scope, e.Used, e.Max, tool)
	case BudgetLimitWallClock:
		msg = fmt.Sprintf("the %s has run %s of its %s wall-clock budget", scope,
			time.Duration(e.Used)*time.Millisecond, time.Duration(e.Max)*time.Millisecond)
	case BudgetLimitCostUnits:
		if e.CostUnknown {
			msg = fmt.Sprintf("the cost of tool %s is unknown to the %s's budget of %d cost units", tool, scope, e.Max)
		} else {
			msg = fmt.Sprintf("a call of tool %s costs %d cost units and the %s has spent %d of its %d", tool, e.Cost, scope, e.Used, e.Max)
		}
	default:
		msg = fmt.Sprintf("the %s's budget refused the call", scope)
	}
	return "budget exceeded (" + string(e.Limit) + "): " + msg + "; the tool did not run"
}

// BudgetExceededResult is the BUDGET_EXCEEDED result of call: e.Message(scope), bounded like
// every error message.
func BudgetExceededResult(call ToolCall, scope string, e BudgetExceeded) Result {
	return ErrorResult(call, CodeBudgetExceeded, e.Message(scope))
}

// BudgetLedger is the account of one budget: its limits, its start and what it has spent. Not
// safe for concurrent use (workflow code is single-threaded; the MCP front locks it).
type BudgetLedger struct {
	limits  BudgetLimits
	start   time.Time
	calls   int
	perTool map[string]int
	cost    int64
}

// NewBudgetLedger opens the account of limits (checked with BudgetLimits.Check) starting at
// start. The ledger keeps its own copy of the limits.
func NewBudgetLedger(limits BudgetLimits, start time.Time) (*BudgetLedger, error) {
	if err := limits.Check(); err != nil {
		return nil, err
	}
	if limits.CallsPerTool != nil {
		limits.CallsPerTool = maps.Clone(limits.CallsPerTool)
	}
	return &BudgetLedger{limits: limits, start: start, perTool: map[string]int{}}, nil
}

// Limits returns the ledger's limits (a copy).
func (l *BudgetLedger) Limits() BudgetLimits {
	c := l.limits
	if c.CallsPerTool != nil {
		c.CallsPerTool = maps.Clone(c.CallsPerTool)
	}
	return c
}

// Start is when the budget began: the origin of its wall clock.
func (l *BudgetLedger) Start() time.Time { return l.start }

// Spend charges one call of tool, costing cost units, started at now; or, when a limit refuses
// it, charges nothing and returns that limit (Check's).
func (l *BudgetLedger) Spend(tool string, cost int64, now time.Time) *BudgetExceeded {
	if ex := l.Check(tool, cost, now); ex != nil {
		return ex
	}
	l.calls++
	l.perTool[tool]++
	l.cost += max(cost, 0)
	return nil
}

// Check returns the limit that refuses one call of tool, costing cost units, started at now (the
// first of wall clock, calls, calls of the tool, cost units), or nil when the call fits. It
// charges nothing. A negative cost is unknown: refused where a cost limit applies, free
// otherwise.
func (l *BudgetLedger) Check(tool string, cost int64, now time.Time) *BudgetExceeded {
	refuse := func(limit BudgetLimit, used, most int64) *BudgetExceeded {
		return &BudgetExceeded{Limit: limit, Tool: tool, Used: used, Max: most, Cost: max(cost, 0), CostUnknown: cost < 0}
	}
	if w := l.limits.WallClock; w > 0 {
		if elapsed := now.Sub(l.start); elapsed >= w {
			return refuse(BudgetLimitWallClock, elapsed.Milliseconds(), w.Milliseconds())
		}
	}
	if n := l.limits.Calls; n > 0 && l.calls >= n {
		return refuse(BudgetLimitCalls, int64(l.calls), int64(n))
	}
	if n := l.limits.CallsPerTool[tool]; n > 0 && l.perTool[tool] >= n {
		return refuse(BudgetLimitToolCalls, int64(l.perTool[tool]), int64(n))
	}
	if c := l.limits.CostUnits; c > 0 && (cost < 0 || cost > c-l.cost) {
		return refuse(BudgetLimitCostUnits, l.cost, c)
	}
	return nil
}

// Counts returns the calls charged: in total and per tool (a copy).
func (l *BudgetLedger) Counts() (total int, perTool map[string]int) {
	return l.calls, maps.Clone(l.perTool)
}

// CostUsed returns the cost units charged.
func (l *BudgetLedger) CostUsed() int64 { return l.cost }

// BudgetAmounts are amounts of each limit of a budget. In BudgetReport.Limits and .Remaining an
// absent amount is no limit; Used has every amount but CallsPerTool's tools without calls.
type BudgetAmounts struct {
	Calls        *int64           `json:"calls,omitempty"`
	CallsPerTool map[string]int64 `json:"callsPerTool,omitempty"`
	WallClockMs  *int64           `json:"wallClockMs,omitempty"`
	CostUnits    *int64           `json:"costUnits,omitempty"`
}

// BudgetReport is what a budget query answers (wire.QueryBudget, the MCP front's budget):
//
//	{"limits":{...},"used":{...},"remaining":{...},"toolsOmitted"?:n}
//
// each of them a BudgetAmounts ("calls", "callsPerTool", "wallClockMs", "costUnits"). Remaining
// is never negative.
type BudgetReport struct {
	Limits    BudgetAmounts `json:"limits"`
	Used      BudgetAmounts `json:"used"`
	Remaining BudgetAmounts `json:"remaining"`
	// ToolsOmitted counts the tools with calls but no limit of their own that Used.CallsPerTool
	// leaves out (it lists at most MaxReportedTools of them, in name order).
	ToolsOmitted int `json:"toolsOmitted,omitempty"`
}

// Report returns the ledger's limits, what it has used and what remains at now.
func (l *BudgetLedger) Report(now time.Time) BudgetReport {
	var r BudgetReport
	elapsed := max(now.Sub(l.start).Milliseconds(), 0)
	r.Used = BudgetAmounts{Calls: ptr(int64(l.calls)), WallClockMs: ptr(elapsed), CostUnits: ptr(l.cost)}
	if n := l.limits.Calls; n > 0 {
		r.Limits.Calls, r.Remaining.Calls = ptr(int64(n)), ptr(max(int64(n-l.calls), 0))
	}
	if w := l.limits.WallClock; w > 0 {
		r.Limits.WallClockMs, r.Remaining.WallClockMs = ptr(w.Milliseconds()), ptr(max(w.Milliseconds()-elapsed, 0))
	}
	if c := l.limits.CostUnits; c > 0 {
		r.Limits.CostUnits, r.Remaining.CostUnits = ptr(c), ptr(max(c-l.cost, 0))
	}
	used := map[string]int64{}
	for name, n := range l.limits.CallsPerTool {
		if n <= 0 {
			continue
		}
		if r.Limits.CallsPerTool == nil {
			r.Limits.CallsPerTool, r.Remaining.CallsPerTool = map[string]int64{}, map[string]int64{}
		}
		r.Limits.CallsPerTool[name] = int64(n)
		r.Remaining.CallsPerTool[name] = max(int64(n-l.perTool[name]), 0)
		if l.perTool[name] > 0 {
			used[name] = int64(l.perTool[name])
		}
	}
	listed := 0
	for _, name := range slices.Sorted(maps.Keys(l.perTool)) {
		if _, limited := used[name]; limited {
			continue
		}
		if listed == MaxReportedTools {
			r.ToolsOmitted++
			continue
		}
		used[name] = int64(l.perTool[name])
		listed++
	}
	if len(used) > 0 {
		r.Used.CallsPerTool = used
	}
	return r
}

func ptr(n int64) *int64 { return &n }
