package wire

// MCP names toolgate reads and writes on the Model Context Protocol (package mcp, docs/contract.md
// section 10).
const (
	// MCPIdempotencyKeyMeta is the tools/call _meta key whose string value is the tool call ID: a
	// retried call with the same key attaches to the recorded run instead of running again. A
	// mounted remote MCP server receives the call's idempotency key under it.
	MCPIdempotencyKeyMeta = "io.toolgate/idempotencyKey"
	// MCPWorkflowIDMeta is the _meta key of a CallToolResult that names the call's workflow ID.
	MCPWorkflowIDMeta = "io.toolgate/workflowId"
	// MCPTaskMeta is the tools/call _meta key that asks for a task, with the value of the
	// request's "task" params member ({"ttl": ms}); toolgate's MCP transports move "task" there
	// (the Go SDK's request type has no such member). A client may also send it directly.
	MCPTaskMeta = "io.toolgate/task"
)

// The MCP tasks utility (MCP 2025-11-25, the io.modelcontextprotocol/tasks extension): the
// extension name, its methods and the _meta key relating a message to a task.
const (
	MCPTasksExtension    = "io.modelcontextprotocol/tasks"
	MCPRelatedTaskMeta   = "io.modelcontextprotocol/related-task"
	MCPMethodTasksGet    = "tasks/get"
	MCPMethodTasksResult = "tasks/result"
	MCPMethodTasksList   = "tasks/list"
	MCPMethodTasksCancel = "tasks/cancel"
)

// Task statuses of the MCP tasks utility.
const (
	MCPTaskWorking   = "working"
	MCPTaskCompleted = "completed"
	MCPTaskFailed    = "failed"
	MCPTaskCancelled = "cancelled"
)
