// Package mcp serves toolgate's tools over the Model Context Protocol (MCP), with the official Go
// SDK (github.com/modelcontextprotocol/go-sdk): every tools/call runs as one ToolCallWorkflow
// through package client, so a call survives the MCP server process. It also mounts remote MCP
// servers' tools as toolgate tools.
//
// # Server
//
// NewServer lists the given tools (a worker's catalog from client.ListTools, or a local
// registry's Infos) with their input and output schemas and the annotations of their side-effect
// class (package tooldefs), and answers tools/call:
//
//   - The call's result content becomes one text content; isError is the result's isError (an
//     error result, such as TOOL_ARGUMENTS_INVALID or TOOL_EXECUTION_FAILED, is a tool execution
//     error the model reads, as the MCP spec asks). A successful result of a tool with an output
//     schema also carries the content as structuredContent.
//   - A broken contract (*toolcore.ContractError, INVALID_TOOL_CALL) and an idempotency key reused
//     for another call (wire.ErrCallConflict) are JSON-RPC error -32602 (invalid params).
//   - A fatal *toolcore.NonRecoverableToolError is JSON-RPC error -32603 (internal error) whose
//     data is {"type":"NonRecoverableToolError"}: stop the agent run. Calls canceled by someone
//     else, terminated or timed out are -32603 with data {"type":"Canceled"|"Terminated"|
//     "TimedOut"}; any other failure is -32603 without data.
//
// # Progress, cancellation, durability
//
// When the request carries a progress token, the tool's progress is sent as
// notifications/progress, every report once and in order: read from the running attempt's
// heartbeat details (its window of numbered reports) every ProgressInterval, and once the call has
// closed, before the result, the rest from history (the completed attempt's result carries the
// window), so the reports a tool makes just before returning always arrive (docs/contract.md,
// section 10 rule 6, with the window's bound). notifications/cancelled for the request
// cancels the workflow and waits until it has closed, so the tool has seen its context canceled.
// A connection that merely goes away (the client or the MCP server dies) cancels nothing: the
// workflow goes on.
//
// The request's _meta may carry IdempotencyKeyMeta ("io.toolgate/idempotencyKey", a string): it
// is the tool call ID, so the workflow ID is <principal scope>/toolcall-<key> (see Principals
// below). A client retrying a call with the same key (after a timeout, a dropped connection or a
// restart of the MCP server) attaches to the recorded run and gets its outcome: the tool does
// not run again. Without a key each call gets a fresh ID ("mcp-<random hex>").
//
// # Principals and authorization
//
// Every call and task belongs to the principal of the request that created it: with
// HTTPOptions.Verifier (JWTVerifier, StaticTokenVerifier; go-sdk's auth.RequireBearerToken
// answers 401 without a valid token), the token's issuer and subject (PrincipalOf); otherwise
// (stdio, unauthenticated loopback HTTP) the server's own. Its PrincipalScope ("mcp", or "mcp-"
// and a hash) scopes the workflow IDs of its calls under the client's scope, and the client sets
// the ToolPrincipal search attribute to it, so every toolgate mcp process enforces the binding
// after a restart too: tasks/get, tasks/result and tasks/cancel answer "not found" for another
// principal's task or a workflow that is not a ToolCallWorkflow, tasks/list lists only the
// caller's, and one principal's idempotency keys never name another's calls (nor those of
// toolgate call). ProtectedResourceHandler serves the RFC 9728 metadata a 401 points to.
//
// A token's principal is also whom its calls run for: each call starts with client.WithPrincipal
// (issuer, subject, and the tenant, name and groups of the claims Options.PrincipalClaims names;
// AuthenticatedBy "mcp"), so the tool reads it with toolcore.CallPrincipal and history records
// it; its fairness key is the principal's own and its _meta priority and weight are clamped to
// its Grant (Options.Grants). Over HTTP each principal has caps of its own on sessions,
// standalone streams and requests in flight, and a share of the global session cap
// (HTTPOptions.MaxSessionsPerPrincipal and the others: 429 beyond them). The server's own
// principal starts calls with no principal and the _meta it asks for.
//
// # Tasks
//
// The server implements the tasks utility of MCP 2025-11-25 (the io.modelcontextprotocol/tasks
// extension) through the Go SDK's extension points: a task-augmented tools/call answers at once
// with a task whose ID is the workflow ID, and tasks/get, tasks/result, tasks/list and
// tasks/cancel read and act on Temporal, so a task outlives the MCP server process. Serve stdio
// through Transport (HTTPHandler does it for HTTP): it keeps the request's "task" member, which
// the SDK's request type drops.
//
// # Budgets
//
// Options.Budget bounds the tools/call requests of each session (calls, the tools' cost units,
// wall clock), and of each principal's stateless requests for a window: a call over it is
// answered at once with the BUDGET_EXCEEDED result (isError true) and starts nothing, and results
// carry what remains in _meta io.toolgate/budget (budget.go, docs/budgets.md).
//
// # Remote MCP servers as tools
//
// Mount connects to an MCP server (Target: a command over stdio, or a streamable HTTP URL) and
// defines each of its tools as the toolgate tool PREFIX_NAME, to register with a worker: the
// remote input schema, a side-effect class from the annotations (SideEffectOf), and a call that
// runs tools/call in the ExecuteTool activity (as a task, polled durably across attempts, when
// the remote tool requires tasks). See Mount for the mapping of results and failures.
//
// # Transports
//
// Serve any SDK transport wrapped by Transport (Transport(&mcp.StdioTransport{}) for a local
// agent) with Server.Run, or mount HTTPHandler, the streamable HTTP transport with the spec's
// Origin and Host checks, optional bearer authentication, one body limit read once (413), idle
// session expiry and a bound on live sessions (503). Serve it with the http.Server of a
// ConnLimiter (LimitConns(ln, ConnOptions{}).Server(h)), as toolgate mcp --listen does, so that
// unauthenticated connections cannot queue ahead of authenticated ones: they hold no connection
// slot, are bounded per remote address and in total (the oldest closed for a newcomer) and live
// UnauthenticatedTimeout unless a request on them authenticates. A refused request gets the
// challenge the MCP spec asks for and a fixed body; its reason goes to HTTPOptions.Logger only.
package mcp
