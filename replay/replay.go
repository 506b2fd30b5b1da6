// Package replay replays recorded workflow histories (toolgate's tool calls, and a user's agent
// workflows) against this build's workflow code and a given tool registry, so a test catches a
// change that would break calls in flight before it is deployed. Replay runs no tool and needs
// no server.
package replay

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// Options configure a replay.
type Options struct {
	// Registry holds the tools the recording worker had. Required for tool-call histories.
	Registry *toolcore.Registry
	// DataConverter decodes the payloads. Optional: default the SDK's (codec users pass theirs).
	DataConverter converter.DataConverter
	// Logger receives the replayer's lines. Optional: default the SDK's.
	Logger log.Logger
	// Workflows registers the user's own workflows (an agent workflow) for agent histories.
	// Optional.
	Workflows func(r sdkworker.WorkflowRegistry)
}

// maxListed bounds the tool names a MissingToolError lists.
const maxListed = 20

// MissingToolError says a history calls a tool the registry lacks.
type MissingToolError struct {
	Tool      string   // the tool the history calls
	Available []string // the registry's tool names, sorted
}

// Error is one line: history calls tool "X"; this build's registry has: a, b, c.
func (e *MissingToolError) Error() string {
	return fmt.Sprintf("history calls tool %q; this build's registry has: %s", e.Tool, listNames(e.Available))
}

func listNames(names []string) string {
	if len(names) == 0 {
		return "(no tools)"
	}
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-maxListed)
}

// File replays a JSON history file (as toolgate history, the Temporal CLI or the Web UI export it).
func File(path string, opts Options) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open history: %w", err)
	}
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("decode history: %w", err)
	}
	return History(hist, opts)
}

// History replays h with toolgate's workflows configured as the recording worker's were (it
// reads from h whether that worker upserted search attributes) and the user's own workflows,
// under the workflow ID and run ID h recorded. A history with a payload encrypted by a key that
// opts.DataConverter cannot decrypt fails with a *MissingKeyError before anything replays.
func History(h *historypb.History, opts Options) error {
	if len(h.GetEvents()) == 0 {
		return fmt.Errorf("decode history: no events")
	}
	if opts.DataConverter == nil {
		opts.DataConverter = converter.GetDefaultDataConverter()
	}
	if err := checkKeys(h, opts.DataConverter); err != nil {
		return err
	}
	reg := opts.Registry
	if reg == nil {
		reg, _ = toolcore.NewRegistry()
	}
	snapshot := reg.Snapshot()
	replayer, err := sdkworker.NewWorkflowReplayerWithOptions(sdkworker.WorkflowReplayerOptions{DataConverter: opts.DataConverter})
	if err != nil {
		return fmt.Errorf("create replayer: %w", err)
	}
	wf := &workflows.Workflows{Registry: snapshot, SearchAttributes: UpsertsSearchAttributes(h)}
	wf.Register(replayer)
	if opts.Workflows != nil {
		opts.Workflows(replayer)
	}
	start := h.Events[0].GetWorkflowExecutionStartedEventAttributes()
	replayOpts := sdkworker.ReplayWorkflowHistoryOptions{OriginalExecution: recordedExecution(start)}
	missing := missingTool(opts.DataConverter, snapshot, start)
	if missing == nil {
		return replayer.ReplayWorkflowHistoryWithOptions(opts.Logger, h, replayOpts)
	}
	// The registry lacks the called tool. A run that never got past the lookup (it recorded
	// TOOL_NOT_FOUND) replays against any registry; any other fails with the SDK's TMPRL1100
	// panic and stack trace, kept out of the logger: the missing tool is the one-line reason.
	if replayer.ReplayWorkflowHistoryWithOptions(discardLogger(), h, replayOpts) != nil {
		return missing
	}
	return nil
}

// missingTool returns a *MissingToolError when start is a ToolCallWorkflow's whose tool
// snapshot lacks, and nil otherwise (or when the input cannot be read).
func missingTool(dc converter.DataConverter, snapshot *toolcore.Registry, start *historypb.WorkflowExecutionStartedEventAttributes) *MissingToolError {
	if start.GetWorkflowType().GetName() != wire.ToolCallWorkflowName {
		return nil
	}
	name := calledTool(dc, start)
	if name == "" {
		return nil
	}
	if _, ok := snapshot.Get(name); ok {
		return nil
	}
	return &MissingToolError{Tool: name, Available: snapshot.Names()}
}

func discardLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// recordedExecution is the execution h recorded, from its start event: the workflow ID (an
// agent that scopes its calls by its own ID makes the same child starts only under it, as the
// SDK finds a recorded child start by the child's workflow ID) and the run ID. A history from a
// server that did not write the workflow ID there replays under the SDK's placeholder ID.
func recordedExecution(start *historypb.WorkflowExecutionStartedEventAttributes) workflow.Execution {
	return workflow.Execution{ID: start.GetWorkflowId(), RunID: start.GetOriginalExecutionRunId()}
}

// calledTool returns the tool name of a ToolCallWorkflow's input, or "" when it cannot be read.
func calledTool(dc converter.DataConverter, start *historypb.WorkflowExecutionStartedEventAttributes) string {
	payloads := start.GetInput().GetPayloads()
	if len(payloads) == 0 {
		return ""
	}
	var call struct {
		Name string `json:"name"`
	}
	if err := dc.FromPayload(payloads[0], &call); err != nil {
		return ""
	}
	return call.Name
}

// UpsertsSearchAttributes reports whether the recording worker upserted search attributes,
// which it does only when the namespace has them; replay must do the same to make the same
// commands.
func UpsertsSearchAttributes(h *historypb.History) bool {
	for _, e := range h.GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES {
			return true
		}
	}
	return false
}
