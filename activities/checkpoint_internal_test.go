package activities

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

func TestHeartbeatLoopCarriesTheCheckpoint(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Hour, log.send, log.relay) // the ticker never fires
	defer h.stop()
	ctx := toolcore.WithExecution(context.Background(), toolcore.Execution{OnCheckpoint: h.saveCheckpoint})

	assert.NoError(t, toolcore.Checkpoint(ctx, map[string]int{"next": 3}))
	assert.Equal(t, []any{(*wire.ProgressWindow)(nil), json.RawMessage(`{"next":3}`)}, <-log.next,
		"a checkpoint beats at once, after a null progress")

	h.report(toolcore.Progress{Completed: 3, Total: 9})
	assert.Equal(t, []any{&wire.ProgressWindow{ProgressDetails: wire.ProgressDetails{Completed: 3, Total: 9}, Seq: 1}, json.RawMessage(`{"next":3}`)}, <-log.next,
		"later beats repeat the checkpoint")
}

func TestCheckpointBounds(t *testing.T) {
	var got []json.RawMessage
	ctx := toolcore.WithExecution(context.Background(), toolcore.Execution{
		OnCheckpoint:   func(cp json.RawMessage) { got = append(got, cp) },
		LastCheckpoint: json.RawMessage(`{"next":7}`),
	})
	big := make([]byte, toolcore.MaxCheckpointBytes)
	assert.ErrorIs(t, toolcore.Checkpoint(ctx, string(big)), toolcore.ErrCheckpointTooLarge)
	assert.Error(t, toolcore.Checkpoint(ctx, make(chan int)), "not JSON")
	assert.Empty(t, got, "nothing recorded")

	var last struct{ Next int }
	found, err := toolcore.LastCheckpoint(ctx, &last)
	assert.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, 7, last.Next)

	found, err = toolcore.LastCheckpoint(context.Background(), &last)
	assert.NoError(t, err)
	assert.False(t, found, "no checkpoint outside an execution")
	assert.NoError(t, toolcore.Checkpoint(context.Background(), 1), "a no-op outside an execution")
}
