// Package searchattr names the custom search attributes toolgate registers on a namespace. It
// imports only the Temporal API enums, so the durable path (workflows, worker, client) and the
// embedded dev server can share the names without the durable path linking the server.
//
// # Attributes
//
// All three are Keyword attributes:
//
//   - [ToolName]: the tool's name, set by the client when it starts the workflow.
//   - [ToolCallID] ("ToolCallId"): the call's ID, set by the client when it starts the workflow.
//   - [ToolOutcome]: "ok", a result error code, "canceled" or "fatal", upserted by the workflow
//     when it ends.
//
// # Registration
//
// [Definitions] is the map an OperatorService AddSearchAttributes request (or the SQLite
// namespace setup of the dev server) takes. A workflow must never upsert an attribute the
// namespace lacks: the server fails the workflow task, and the workflow is stuck.
package searchattr
