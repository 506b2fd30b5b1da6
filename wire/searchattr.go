package wire

// Names of the custom search attributes, exactly as registered on the namespace. All three are
// Keyword attributes.
const (
	// SearchAttributeToolName holds the tool's name, set by the client when it starts the
	// workflow and upserted by the workflow when it ends.
	SearchAttributeToolName = "ToolName"
	// SearchAttributeToolCallID holds the call's ID, set and upserted like ToolName.
	SearchAttributeToolCallID = "ToolCallId"
	// SearchAttributeToolOutcome holds how the call ended (the Outcome values below, or a result
	// error code), upserted by the workflow just before it closes.
	SearchAttributeToolOutcome = "ToolOutcome"
	// SearchAttributeToolPrincipal holds the scope of the principal that owns the call (package
	// mcp: the authenticated caller's), set by the client at start when it has one; MCP's
	// tasks/list lists by it.
	SearchAttributeToolPrincipal = "ToolPrincipal"
)

// Values of the ToolOutcome search attribute besides the result error codes (TOOL_NOT_FOUND,
// TOOL_ARGUMENTS_INVALID, ...).
const (
	// OutcomeOK: the tool returned a result that is not an error.
	OutcomeOK = "ok"
	// OutcomeCanceled: the call was canceled; the workflow ended Canceled.
	OutcomeCanceled = "canceled"
	// OutcomeFatal: a tool raised a NonRecoverableToolError; the workflow failed.
	OutcomeFatal = "fatal"
	// OutcomeInvalidToolCall: the input was not a tool call; the workflow failed.
	OutcomeInvalidToolCall = ErrTypeInvalidToolCall
)

// SearchAttributeNames returns the attribute names in a fixed order: ToolName, ToolCallId,
// ToolOutcome, ToolPrincipal. The caller owns the slice.
func SearchAttributeNames() []string {
	return []string{SearchAttributeToolName, SearchAttributeToolCallID, SearchAttributeToolOutcome, SearchAttributeToolPrincipal}
}
