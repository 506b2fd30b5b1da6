package wire

// Names of an agent run's budget (workflows.WithBudget, docs/budgets.md).
const (
	// QueryBudget is the query an agent run with a budget answers: its limits, what it has used
	// and what remains, as the JSON object
	// {"limits":{...},"used":{...},"remaining":{...},"toolsOmitted"?:n}, each part holding
	// "calls", "callsPerTool" ({"<tool>":n}), "wallClockMs" and "costUnits" (toolcore.BudgetReport;
	// in limits and remaining an absent amount is no limit).
	QueryBudget = "toolgate.budget"
	// BudgetScopeAgentRun, BudgetScopeTask and BudgetScopeMCPSession name what a budget belongs
	// to in the BUDGET_EXCEEDED message the model reads: an agent run's budget, a task scope
	// nested in it, an MCP session's.
	BudgetScopeAgentRun   = "agent run"
	BudgetScopeTask       = "task scope"
	BudgetScopeMCPSession = "MCP session"
	// MCPBudgetMeta is the _meta key of a tools/call result that carries the budget's report
	// (the QueryBudget shape) where `toolgate mcp` runs with a budget.
	MCPBudgetMeta = "io.toolgate/budget"
)
