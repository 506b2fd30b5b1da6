package workflows

import (
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Names of the wire contract, declared in package wire (the one place of every wire name) and
// repeated here for callers of this package. Changing any of them breaks running callers and
// recorded histories.
const (
	// ToolCallWorkflowName is the workflow type every caller starts: wire.ToolCallWorkflowName.
	ToolCallWorkflowName = wire.ToolCallWorkflowName
	// DefaultTaskQueue is the task queue workers poll and clients start on unless configured:
	// wire.DefaultTaskQueue.
	DefaultTaskQueue = wire.DefaultTaskQueue
	// ErrTypeInvalidToolCall is the ApplicationError type of a workflow failed by malformed
	// input: wire.ErrTypeInvalidToolCall.
	ErrTypeInvalidToolCall = wire.ErrTypeInvalidToolCall
	// ErrTypeNonRecoverable is the ApplicationError type of a workflow failed by a genuine
	// toolcore.NonRecoverableToolError (message = its text): wire.ErrTypeNonRecoverable, the
	// type the activity returns too.
	ErrTypeNonRecoverable = wire.ErrTypeNonRecoverable
)

// Names of the tool catalog (see ToolCatalogWorkflow).
const (
	// ToolCatalogWorkflowName is the workflow type that returns the worker's tool set:
	// wire.ToolCatalogWorkflowName.
	ToolCatalogWorkflowName = wire.ToolCatalogWorkflowName
	// ToolCatalogWorkflowIDPrefix prefixes the catalog workflow's ID, "toolcatalog-<task queue>":
	// wire.ToolCatalogWorkflowIDPrefix.
	ToolCatalogWorkflowIDPrefix = wire.ToolCatalogWorkflowIDPrefix
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

// Names of tool calls started from workflow code, declared in package wire.
const (
	// AwaitToolCallName is the activity a parent runs to attach to an existing call:
	// wire.AwaitToolCallName. Workers running parents register it with
	// client.(*Client).RegisterAwaitToolCall.
	AwaitToolCallName = wire.AwaitToolCallName
	// The ApplicationError types AwaitToolCall fails with (wire.ErrTypeCall*).
	ErrTypeCallConflict   = wire.ErrTypeCallConflict
	ErrTypeCallCanceled   = wire.ErrTypeCallCanceled
	ErrTypeCallTerminated = wire.ErrTypeCallTerminated
	ErrTypeCallTimedOut   = wire.ErrTypeCallTimedOut
	ErrTypeCallNotFound   = wire.ErrTypeCallNotFound
)

// AwaitToolCallInput is the input of the AwaitToolCall activity (wire.AwaitToolCallInput).
type AwaitToolCallInput = wire.AwaitToolCallInput

// The result of AwaitToolCall is the call's toolcore.Result.
