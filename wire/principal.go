package wire

// Principals (docs/contract.md, "Principals"): whom a call runs for travels in the start of its
// ToolCallWorkflow, as the memo field MemoPrincipal (a toolcore.Principal as JSON), so it is in
// the call's history, shown by the Web UI, readable by any SDK's describe, and fixed for the
// run. An agent workflow started with the same memo field passes its principal on to the calls
// it makes (ExecuteToolCall, ExecuteRound, Inline), naming itself as the actor.
const (
	// MemoPrincipal is the memo key of a call's (or an agent run's) principal.
	MemoPrincipal = "toolgate.principal"
	// SearchAttributeToolSubject holds the principal's subject (a Keyword, set at start when the
	// namespace defines it), so "the calls of alice" is the query ToolSubject = 'alice'. The
	// issuer is in the memo; ToolPrincipal keeps MCP's ownership scope.
	SearchAttributeToolSubject = "ToolSubject"
)
