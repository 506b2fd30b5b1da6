package workflows

import (
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/toolcore"
)

// Catalog is ToolCatalogWorkflow's result: the tool set of the worker that ran it, in name order.
type Catalog struct {
	// TaskQueue is the task queue the catalog workflow ran on.
	TaskQueue string `json:"taskQueue"`
	// Tools are the worker's tools, name order, with schemas and definition hashes.
	Tools []toolcore.ToolInfo `json:"tools"`
}

// Input is the workflow's single argument: one payload holding the tool-call wire JSON
// {"type":"toolCall","id":"...","name":"...","arguments":{...}}. It is a converter.RawValue so
// that decoding the payload can never fail the workflow task: the workflow reads the bytes and
// snapshots them with toolcore.ParseToolCall itself. Go callers may pass a toolcore.ToolCall or
// a json.RawMessage of the call to ExecuteWorkflow instead; both encode to the same payload.
type Input = converter.RawValue

// The workflow's result is a toolcore.Result, which encodes to the tool-result message wire JSON
// {"id":"tool-result-...","role":"toolResult","toolCallId":"...","toolName":"...","content":"...","isError":false}.
