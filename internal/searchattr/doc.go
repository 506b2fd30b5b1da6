// Package searchattr registers and checks the custom search attributes toolgate needs on a
// namespace; their names are declared in package wire. It imports only the Temporal API enums,
// so the durable path (workflows, worker, client) and the embedded dev server share it without
// the durable path linking the server.
//
// # Attributes
//
// All four are Keyword attributes:
//
//   - ToolName (wire.SearchAttributeToolName): the tool's name, set by the client when it starts
//     the workflow.
//   - ToolCallId (wire.SearchAttributeToolCallID): the call's ID, set by the client when it
//     starts the workflow.
//   - ToolOutcome (wire.SearchAttributeToolOutcome): a result error code, "canceled" or "fatal",
//     upserted by the workflow when it ends, or a wait ("awaiting_approval", ...) while it waits;
//     an ok call leaves it unset, or records "ok" when started without wire.OutcomeRuleOKUnset
//     (docs/contract.md section 5 rule 9; client.CallFilter treats both alike).
//   - ToolPrincipal (wire.SearchAttributeToolPrincipal): the scope of the principal owning the
//     call, set by a client with Options.Principal (package mcp, per authenticated caller) when
//     it starts the workflow; a namespace without it still runs calls, and MCP's tasks/list
//     then lists nothing.
//
// # Registration
//
// [Missing] (and [MissingIn], which lists a namespace's attributes first) is the one check of a
// namespace against the set: the dev server, the worker and the client all use it.
//
// [Definitions] is the map an OperatorService AddSearchAttributes request (or the SQLite
// namespace setup of the dev server) takes. A workflow must never upsert an attribute the
// namespace lacks: the server fails the workflow task, and the workflow is stuck.
package searchattr
