package wire

import "strings"

// Names of the custom search attributes, exactly as registered on the namespace. All are Keyword
// attributes (ToolSubject is declared in principal.go).
const (
	// SearchAttributeToolName holds the tool's name, set by the client when it starts the
	// workflow and upserted by the workflow when it ends.
	SearchAttributeToolName = "ToolName"
	// SearchAttributeToolCallID holds the call's ID, set and upserted like ToolName.
	SearchAttributeToolCallID = "ToolCallId"
	// SearchAttributeToolOutcome holds how the call ended (the Outcome values below, or a result
	// error code), upserted by the workflow just before it closes; unset for an ok call started
	// with OutcomeRuleOKUnset (see QueryOKCalls).
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

// The standalone call at the price of a bare workflow (issue 27): a call whose input payload has
// the metadata MetadataOutcomeRule = OutcomeRuleOKUnset never records an ok outcome in
// ToolOutcome (an upsert is a billable action; attributes given at start are not), so a short ok
// call whose start carries ToolName and ToolCallId costs the start and the activity, like a
// hand-written one; one started without them upserts them alone at close (since issue 35; before,
// with "ok"). Every other outcome is upserted as before. The rule travels
// in the start (not a workflow.GetVersion, which would add a marker and a TemporalChangeVersion
// upsert to every call's history), so histories recorded before it, whose input lacks it, replay
// with their upsert.
// Payload metadata survives a payload codec (the codec restores it before the workflow reads it).
const (
	// MetadataOutcomeRule is the input payload's metadata key of the rule; toolgate's clients
	// (client.Execute, workflows.ExecuteToolCall) set it on every call they start.
	MetadataOutcomeRule = "toolgate-outcome-rule"
	// OutcomeRuleOKUnset is its value: ToolOutcome stays unset for an ok outcome.
	OutcomeRuleOKUnset = "ok-unset"

	// QueryOKCalls selects the ok calls in a visibility query (AND it with a ToolName or task
	// queue condition): completed ToolCallWorkflows without ToolOutcome (ok calls started with
	// the rule), or with "ok" (calls started without it). An error result is Completed too but
	// always carries its code.
	QueryOKCalls = "(ExecutionStatus = 'Completed' AND (" + SearchAttributeToolOutcome + " = '" + OutcomeOK + "' OR " +
		SearchAttributeToolOutcome + " IS NULL))"
)

// SearchAttributeNames returns the attribute names in a fixed order: ToolName, ToolCallId,
// ToolOutcome, ToolPrincipal, ToolSubject. The caller owns the slice.
func SearchAttributeNames() []string {
	return []string{SearchAttributeToolName, SearchAttributeToolCallID, SearchAttributeToolOutcome, SearchAttributeToolPrincipal, SearchAttributeToolSubject}
}

// QueryString is s as a string literal of a visibility query: in single quotes, each single
// quote in it escaped.
func QueryString(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
