package worker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/blobs"
)

// sweepRecorder records the cutoffs it is swept with.
type sweepRecorder struct {
	blobs.Store
	cutoffs chan time.Time
}

func (s sweepRecorder) Sweep(_ context.Context, cutoff time.Time) (int, error) {
	select {
	case s.cutoffs <- cutoff:
	default:
	}
	return 0, nil
}

// The worker's sweeper sweeps its part store at start, by the retention it was given plus
// blobs.SweepGrace, and halt waits for it to stop; without a store it does nothing.
func TestPartsSweeperSweepsFromStartToHalt(t *testing.T) {
	store := sweepRecorder{cutoffs: make(chan time.Time, 1)}
	s := &partsSweeper{store: store, retention: 72 * time.Hour, logger: zap.NewNop()}
	before := time.Now()

	s.start()
	s.start() // once
	cutoff := <-store.cutoffs
	s.halt()

	assert.WithinRange(t, cutoff, before.Add(-72*time.Hour-blobs.SweepGrace), time.Now().Add(-72*time.Hour-blobs.SweepGrace))
	(&partsSweeper{}).start() // no store: nothing to sweep
	(&partsSweeper{}).halt()
	var none *partsSweeper
	none.halt()
}
