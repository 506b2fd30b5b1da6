package blobs

import (
	"context"
	"time"
)

// SweepGrace is added to the retention before a blob is swept: a part is stored before its call
// closes, and the namespace keeps the call's history for the retention after it closes.
const SweepGrace = 24 * time.Hour

// SweepOptions configure RunSweeper.
type SweepOptions struct {
	// Retention is the namespace's retention of closed workflows: a blob stored longer ago than
	// Retention + SweepGrace is removed. Required (RunSweeper returns at once without it).
	Retention time.Duration
	// Interval is the time between sweeps; the first runs at once. Optional: default 1 hour.
	Interval time.Duration
	// Now is the clock. Optional: default time.Now.
	Now func() time.Time
	// OnSweep hears each sweep's outcome (for logs). Optional: default none.
	OnSweep func(removed int, err error)
}

// RunSweeper sweeps s every Interval until ctx ends. Workers sharing a store may all run it: a
// sweep removes only what is old enough, whoever runs it.
func RunSweeper(ctx context.Context, s Store, o SweepOptions) {
	if o.Retention <= 0 || s == nil {
		return
	}
	interval, now, report := o.Interval, o.Now, o.OnSweep
	if interval <= 0 {
		interval = time.Hour
	}
	if now == nil {
		now = time.Now
	}
	if report == nil {
		report = func(int, error) {}
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		n, err := s.Sweep(ctx, now().Add(-o.Retention-SweepGrace))
		if ctx.Err() != nil {
			return
		}
		report(n, err)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
