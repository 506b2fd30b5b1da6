package activities

import (
	"context"
	"encoding/json"

	"go.temporal.io/sdk/activity"

	"github.com/toolgate/toolgate/wire"
)

// lastCheckpoint returns the checkpoint the previous attempt's last heartbeat carried (the
// second details payload, wire.CheckpointDetails), or nil.
func lastCheckpoint(ctx context.Context) json.RawMessage {
	if !activity.HasHeartbeatDetails(ctx) {
		return nil
	}
	var progress *wire.ProgressDetails
	var cp json.RawMessage
	if err := activity.GetHeartbeatDetails(ctx, &progress, &cp); err != nil || len(cp) == 0 || string(cp) == "null" {
		return nil
	}
	return cp
}

// saveCheckpoint is the tool's checkpoint recorder: the latest checkpoint goes with every
// following heartbeat, and one beat is sent at once.
func (h *heartbeats) saveCheckpoint(cp json.RawMessage) {
	h.poke(func(c *cadence) {
		h.checkpoint = cp
		c.pending = true
	})
}
