package wire

// The tasks extension of MCP 2026-07-28 (SEP-2663, io.modelcontextprotocol/tasks): the names
// toolgate's MCP server reads and writes besides those of the 2025-11-25 tasks utility.
const (
	// MCPMethodTasksUpdate delivers a task's inputResponses (an approval decision).
	MCPMethodTasksUpdate = "tasks/update"
	// MCPTaskInputRequired is the status of a task waiting for its caller's input.
	MCPTaskInputRequired = "input_required"
	// MCPResultTypeTask and MCPResultTypeComplete are the resultType of a CreateTaskResult and of
	// every other result of a 2026-07-28 request.
	MCPResultTypeTask     = "task"
	MCPResultTypeComplete = "complete"
	// MCPCodeMissingRequiredClientCapability is the JSON-RPC error code of a request that needs a
	// capability (the tasks extension) its _meta does not declare (SEP-2575).
	MCPCodeMissingRequiredClientCapability = -32021
	// MCPApprovalInputPrefix starts the inputRequests key of a call's approval; the call hash
	// follows, so a decision names the exact call it decides.
	MCPApprovalInputPrefix = "toolgate-approval:"
	// MCPConsentInputPrefix starts the inputRequests key of a call's wait for its principal's
	// consent (a URL-mode elicitation); its elicitationId follows, the same for every look at
	// one request. The answer needs no action: the call goes on once the consent arrives.
	MCPConsentInputPrefix = "toolgate-consent:"
)

// Per-tool task support (tools/list execution.taskSupport).
const (
	MCPTaskSupportForbidden = "forbidden"
	MCPTaskSupportOptional  = "optional"
	MCPTaskSupportRequired  = "required"
)
