package toolcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"context"
)

// MaxCheckpointBytes bounds the JSON of one checkpoint: it travels with every heartbeat.
const MaxCheckpointBytes = 16 << 10

// ErrCheckpointTooLarge is returned (wrapped) by Checkpoint for state whose JSON exceeds
// MaxCheckpointBytes; nothing is recorded then.
var ErrCheckpointTooLarge = errors.New("checkpoint too large")

// Checkpoint records v, the tool's resumable state, so that a later attempt of the same call
// (after a lost worker, a timeout or a transient error) can resume from it with LastCheckpoint
// instead of starting over. v is encoded with encoding/json (HTML escaping off) and must fit
// MaxCheckpointBytes. The durable path sends the latest checkpoint with the activity's
// heartbeats, so a checkpoint is kept only once a heartbeat carried it (one is sent at once, then
// at most every 500 ms): record state before the work it describes is irreversible, and make each
// step idempotent or check it on resume. Outside an execution, or with an executor that keeps no
// checkpoints (the in-process executor), it does nothing and returns nil.
func Checkpoint(ctx context.Context, v any) error {
	e := executionFrom(ctx)
	if e == nil || e.OnCheckpoint == nil {
		return nil
	}
	raw, err := encodeAccepted(v)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if len(raw) > MaxCheckpointBytes {
		return fmt.Errorf("checkpoint: %d bytes of JSON, limit %d: %w", len(raw), MaxCheckpointBytes, ErrCheckpointTooLarge)
	}
	defer func() { _ = recover() }()
	e.OnCheckpoint(bytes.Clone(raw))
	return nil
}

// LastCheckpoint decodes into v the last checkpoint recorded by an earlier attempt of this call
// and reports whether there was one. It is false on a first attempt, in process, and when no
// earlier attempt's checkpoint reached a heartbeat. Checkpoints recorded by the current attempt
// are not returned: the tool already knows them. In a Reconcile (the durable path), it returns
// the checkpoint the lost attempt's last heartbeat carried.
func LastCheckpoint(ctx context.Context, v any) (found bool, err error) {
	e := executionFrom(ctx)
	if e == nil || len(e.LastCheckpoint) == 0 || bytes.Equal(e.LastCheckpoint, []byte("null")) {
		return false, nil
	}
	if err := json.Unmarshal(e.LastCheckpoint, v); err != nil {
		return false, fmt.Errorf("decode last checkpoint: %w", err)
	}
	return true, nil
}
