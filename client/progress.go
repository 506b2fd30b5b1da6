package client

import (
	"encoding/json"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

const executeToolName = wire.ExecuteToolName

type pendingActivity = *workflowpb.PendingActivityInfo

// decodeProgress decodes heartbeat details: the first payload is the latest report, a
// wire.ProgressDetails. ok is false when there are none (the tool has not reported progress).
func (c *Client) decodeProgress(details *commonpb.Payloads) (p toolcore.Progress, ok bool, err error) {
	if len(details.GetPayloads()) == 0 {
		return toolcore.Progress{}, false, nil
	}
	var d *wire.ProgressDetails // nil for the null a checkpoint without progress sends
	if err := c.opts.DataConverter.FromPayload(details.GetPayloads()[0], &d); err != nil {
		return toolcore.Progress{}, false, err
	}
	if d == nil {
		return toolcore.Progress{}, false, nil
	}
	return toolcore.Progress(*d), true, nil
}

// decodeCheckpoint returns the checkpoint in heartbeat details (wire.CheckpointDetailsIndex), or
// nil when the tool has recorded none.
func (c *Client) decodeCheckpoint(details *commonpb.Payloads) (json.RawMessage, error) {
	payloads := details.GetPayloads()
	if len(payloads) <= wire.CheckpointDetailsIndex {
		return nil, nil
	}
	var cp json.RawMessage
	if err := c.opts.DataConverter.FromPayload(payloads[wire.CheckpointDetailsIndex], &cp); err != nil {
		return nil, err
	}
	if string(cp) == "null" {
		return nil, nil
	}
	return cp, nil
}
