package client

import (
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
	var d wire.ProgressDetails
	if err := c.opts.DataConverter.FromPayload(details.GetPayloads()[0], &d); err != nil {
		return toolcore.Progress{}, false, err
	}
	return toolcore.Progress(d), true, nil
}
