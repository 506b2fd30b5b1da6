package client

import (
	"bytes"
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// sameCallQueue returns nil when the run's recorded input is the call whose canonical JSON is
// canonical, an wire.ErrCallConflict saying what differs when it is another call (or unreadable),
// and a plain error when the history could not be read; and the task queue the run was started
// on. Cost: one history read of the run.
func (c *Client) sameCallQueue(ctx context.Context, workflowID, runID string, canonical []byte) (queue string, err error) {
	recorded, err := c.recordedCall(ctx, workflowID, runID)
	if err != nil {
		return "", err
	}
	if recorded.err != nil {
		return recorded.taskQueue, conflictError(workflowID, recorded.err.Error())
	}
	if bytes.Equal(recorded.canonical, canonical) {
		return recorded.taskQueue, nil
	}
	submitted, err := toolcore.ParseToolCall(canonical)
	if err != nil {
		return recorded.taskQueue, err
	}
	return recorded.taskQueue, conflictError(workflowID, describeDifference(recorded.call, submitted))
}

// recorded is the call a run was started with, and the task queue it was started on. err says
// why it is not a usable call (another workflow type, an undecodable or malformed input); call
// and canonical are then zero.
type recorded struct {
	call      toolcore.ToolCall
	canonical []byte
	taskQueue string
	err       error
}

// recordedCall reads the first history event of the run (runID "" is the latest run). The
// returned error is for a failed read only.
func (c *Client) recordedCall(ctx context.Context, workflowID, runID string) (recorded, error) {
	iter := c.sdk.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	event, err := firstEvent(iter, workflowID)
	if err != nil {
		return recorded{}, err
	}
	return c.recordedOf(event), nil
}

// firstEvent reads the first event of a run's history, a missing run as wire.ErrNotFound.
func firstEvent(iter client.HistoryEventIterator, workflowID string) (*historypb.HistoryEvent, error) {
	if !iter.HasNext() {
		return nil, fmt.Errorf("read history of %s: %w", workflowID, wire.ErrNotFound)
	}
	event, err := iter.Next()
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("read history of %s: %w", workflowID, wire.ErrNotFound)
		}
		return nil, fmt.Errorf("read history of %s: %w", workflowID, err)
	}
	return event, nil
}

// recordedOf is the call a run's first history event records.
func (c *Client) recordedOf(event *historypb.HistoryEvent) recorded {
	attrs := event.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil {
		return recorded{err: fmt.Errorf("first history event is %v, not a workflow start", event.GetEventType())}
	}
	queue := attrs.GetTaskQueue().GetName()
	if name := attrs.GetWorkflowType().GetName(); name != wire.ToolCallWorkflowName {
		return recorded{taskQueue: queue, err: fmt.Errorf("the ID belongs to a %q workflow, not %s", name, wire.ToolCallWorkflowName)}
	}
	payloads := attrs.GetInput().GetPayloads()
	if len(payloads) != 1 {
		return recorded{taskQueue: queue, err: fmt.Errorf("recorded input has %d payloads, want 1", len(payloads))}
	}
	var raw converter.RawValue
	if err := c.opts.DataConverter.FromPayload(payloads[0], &raw); err != nil {
		return recorded{taskQueue: queue, err: fmt.Errorf("decode recorded input: %w", err)}
	}
	// Same rule as the workflow's decoding: JSON or raw bytes of the call JSON.
	switch encoding := string(raw.Payload().GetMetadata()[converter.MetadataEncoding]); encoding {
	case converter.MetadataEncodingJSON, converter.MetadataEncodingBinary:
	default:
		return recorded{taskQueue: queue, err: fmt.Errorf("recorded input has encoding %q", encoding)}
	}
	call, err := toolcore.ParseToolCall(raw.Payload().GetData())
	if err != nil {
		return recorded{taskQueue: queue, err: fmt.Errorf("recorded input is not a valid call: %w", err)}
	}
	canonical, err := call.MarshalJSON()
	if err != nil {
		return recorded{taskQueue: queue, err: fmt.Errorf("encode recorded call: %w", err)}
	}
	return recorded{call: call, canonical: canonical, taskQueue: queue}
}

// describeDifference names what differs between two calls with the same workflow ID; it never
// quotes arguments (they may be large or sensitive).
func describeDifference(recorded, submitted toolcore.ToolCall) string {
	switch {
	case recorded.ID() != submitted.ID():
		return fmt.Sprintf("recorded call has ID %q, submitted %q", recorded.ID(), submitted.ID())
	case recorded.Name() != submitted.Name():
		return fmt.Sprintf("recorded call is tool %q, submitted %q", recorded.Name(), submitted.Name())
	default:
		return fmt.Sprintf("recorded call to %q has different arguments", recorded.Name())
	}
}
