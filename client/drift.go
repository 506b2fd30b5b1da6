package client

import (
	"context"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// DriftKind says how a running call's recorded tool definition relates to a build.
type DriftKind uint8

// The zero DriftKind is invalid.
const (
	_ DriftKind = iota
	// DriftChanged: the build has the tool with another definition hash.
	DriftChanged
	// DriftRemoved: the build has no tool of that name.
	DriftRemoved
	// DriftUnrecorded: the call's history records no definition hash (recorded by a build that
	// did not record it), so it cannot be compared.
	DriftUnrecorded
)

// String returns "changed", "removed" or "unrecorded".
func (k DriftKind) String() string {
	switch k {
	case DriftChanged:
		return "changed"
	case DriftRemoved:
		return "removed"
	case DriftUnrecorded:
		return "unrecorded"
	}
	return fmt.Sprintf("DriftKind(%d)", uint8(k))
}

// DriftedCall is a running call whose tool definition differs from the build's.
type DriftedCall struct {
	WorkflowID string
	RunID      string
	ToolCallID string
	ToolName   string
	Kind       DriftKind
	// RecordedHash is the definition hash in the call's history ("" when unrecorded).
	RecordedHash string
	// CurrentHash is the build's definition hash ("" when the tool was removed).
	CurrentHash string
}

// DriftReport is the result of Drift.
type DriftReport struct {
	// Running counts the running calls on the task queue.
	Running int
	// Scheduled counts those whose tool was already validated and scheduled (the others have not
	// been validated yet: the worker that picks them up decides with its own build).
	Scheduled int
	// Drifted lists the scheduled calls whose definition differs, in workflow ID order.
	Drifted []DriftedCall
}

// Drift lists the running ToolCallWorkflows on the client's task queue and compares the
// definition hash each one's history recorded when its tool was scheduled (the ExecuteTool
// input's definitionHash) with reg, the tool set of a build. A changed definition matters for a
// running call: replaying its history with that build may reach another validation verdict (a
// non-determinism error), and a retried attempt runs the new code. Reads visibility (one list)
// and one history per running call.
func (c *Client) Drift(ctx context.Context, reg *toolcore.Registry) (DriftReport, error) {
	query := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = %s",
		wire.ToolCallWorkflowName, wire.QueryString(c.opts.TaskQueue))
	var report DriftReport
	var token []byte
	for {
		resp, err := c.sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: c.opts.Namespace, Query: query, NextPageToken: token,
		})
		if err != nil {
			return DriftReport{}, fmt.Errorf("list running calls: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			report.Running++
			id, runID := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
			in, scheduled, err := c.scheduledInput(ctx, id, runID)
			if err != nil {
				return DriftReport{}, err
			}
			if !scheduled {
				continue
			}
			report.Scheduled++
			d := DriftedCall{WorkflowID: id, RunID: runID, ToolCallID: in.ToolCallID, ToolName: in.ToolName, RecordedHash: in.DefinitionHash}
			tool, ok := reg.Get(in.ToolName)
			switch {
			case !ok:
				d.Kind = DriftRemoved
			case in.DefinitionHash == "":
				d.Kind, d.CurrentHash = DriftUnrecorded, tool.DefinitionHash()
			case in.DefinitionHash != tool.DefinitionHash():
				d.Kind, d.CurrentHash = DriftChanged, tool.DefinitionHash()
			default:
				continue
			}
			report.Drifted = append(report.Drifted, d)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	slices.SortFunc(report.Drifted, func(a, b DriftedCall) int { return strings.Compare(a.WorkflowID, b.WorkflowID) })
	return report, nil
}

// scheduledInput returns the input of the call's first ExecuteTool activity; scheduled is false
// when the history has none yet.
func (c *Client) scheduledInput(ctx context.Context, workflowID, runID string) (in scheduledTool, scheduled bool, err error) {
	iter := c.sdk.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		event, err := iter.Next()
		if err != nil {
			return in, false, fmt.Errorf("read history of %s: %w", workflowID, err)
		}
		attrs := event.GetActivityTaskScheduledEventAttributes()
		if attrs == nil || attrs.GetActivityType().GetName() != wire.ExecuteToolName {
			continue
		}
		payloads := attrs.GetInput().GetPayloads()
		if len(payloads) == 0 {
			return in, false, fmt.Errorf("read history of %s: ExecuteTool scheduled without input", workflowID)
		}
		if err := c.opts.DataConverter.FromPayload(payloads[0], &in); err != nil {
			return in, false, fmt.Errorf("read history of %s: decode ExecuteTool input: %w", workflowID, err)
		}
		return in, true, nil
	}
	return in, false, nil
}

// scheduledTool decodes the fields Drift needs of the ExecuteTool input recorded in history
// (activities.ExecuteToolInput, without importing it).
type scheduledTool struct {
	ToolCallID     string `json:"toolCallId"`
	ToolName       string `json:"toolName"`
	DefinitionHash string `json:"definitionHash"`
}
