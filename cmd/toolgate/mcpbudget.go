package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/toolcore"
)

// mcpBudgetFlags are the --budget-* flags of `toolgate mcp`: the budget of each MCP session, and
// of each principal's stateless requests (docs/budgets.md).
type mcpBudgetFlags struct {
	calls   int
	perTool map[string]int
	cost    int64
	wall    time.Duration
}

func addMCPBudgetFlags(cmd *cobra.Command, b *mcpBudgetFlags) {
	fs := cmd.Flags()
	fs.IntVar(&b.calls, "budget-calls", 0, "tools/call requests each MCP session (or principal's stateless window) may start; the next is answered BUDGET_EXCEEDED (0: no limit)")
	fs.StringToIntVar(&b.perTool, "budget-tool-calls", nil, "TOOL=N: calls of TOOL each MCP session (or principal's stateless window) may start (repeat, or comma-separate)")
	fs.Int64Var(&b.cost, "budget-cost", 0, "cost units (each tool's Options.Cost) each MCP session (or principal's stateless window) may spend (0: no limit)")
	fs.DurationVar(&b.wall, "budget-wall", 0, "wall-clock time from a session's first call after which its calls are refused; a principal's stateless window (0: no limit)")
}

// limits are the flags' budget, checked: a negative value is bad input.
func (b mcpBudgetFlags) limits() (toolcore.BudgetLimits, error) {
	limits := toolcore.BudgetLimits{Calls: b.calls, CallsPerTool: b.perTool, CostUnits: b.cost, WallClock: b.wall}
	if err := limits.Check(); err != nil {
		return limits, badInput(err)
	}
	return limits, nil
}
