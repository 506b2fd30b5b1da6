package activities

import (
	"context"
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

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
		c.record()
	})
}

// savedCheckpoint is the latest checkpoint of the attempt (recorded or carried on), or nil.
func (h *heartbeats) savedCheckpoint() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.checkpoint
}

// interruptedWithCheckpoint gives the wire.ErrTypeInterrupted error of an attempt the worker cut
// off its checkpoint cp as details: no heartbeat timeout carries it to the workflow, which hands
// it to the Reconcile of an Unsafe tool. Any other err, or no cp, is returned as it is.
func interruptedWithCheckpoint(err error, cp json.RawMessage) error {
	var appErr *temporal.ApplicationError
	if len(cp) == 0 || !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeInterrupted {
		return err
	}
	return temporal.NewApplicationError(appErr.Message(), wire.ErrTypeInterrupted, cp)
}
