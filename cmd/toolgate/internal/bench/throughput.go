package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// blockRun is one block of a subject's throughput phase.
type blockRun struct {
	calls int
	took  time.Duration
}

// throughput makes ThroughputCalls no-op calls per subject with Concurrency callers, in
// ThroughputBlocks blocks per subject that alternate between subjects (order rotated every
// round). A subject's rate is its calls over the time spent in its blocks; the blocks are
// returned by subject, in the order they ran.
func (h *harness) throughput(ctx context.Context) ([]ThroughputRow, map[string][]blockRun, error) {
	blocks := h.cfg.ThroughputBlocks
	total := h.cfg.ThroughputCalls * len(h.subjects)
	var done atomic.Int64
	progress := func() {
		h.cfg.Progress(Progress{Phase: "throughput", Done: int(done.Load()), Total: total})
	}
	h.cfg.Progress(Progress{Phase: "throughput", Total: total})
	spent := make(map[string]time.Duration, len(h.subjects))
	runs := make(map[string][]blockRun, len(h.subjects))
	for b := range blocks {
		// Block b gets its share of the calls; the first blocks take the remainder.
		n := h.cfg.ThroughputCalls / blocks
		if b < h.cfg.ThroughputCalls%blocks {
			n++
		}
		for _, s := range rotated(h.subjects, b) {
			took, err := h.block(ctx, s, n, func() { done.Add(1); progress() })
			if err != nil {
				return nil, nil, err
			}
			spent[s.name] += took
			runs[s.name] = append(runs[s.name], blockRun{calls: n, took: took})
		}
	}
	rows := make([]ThroughputRow, 0, len(h.subjects))
	var base float64
	for _, s := range h.subjects {
		perSecond := float64(h.cfg.ThroughputCalls) / spent[s.name].Seconds()
		rows = append(rows, ThroughputRow{
			Subject:     s.name,
			Calls:       h.cfg.ThroughputCalls,
			Concurrency: h.cfg.Concurrency,
			Seconds:     round(spent[s.name].Seconds(), 3),
			PerSecond:   round(perSecond, 1),
		})
		if s.name == Baseline {
			base = perSecond
		}
	}
	for i := range rows {
		rows[i].Ratio = ratio(float64(rows[i].Calls)/spent[rows[i].Subject].Seconds(), base)
	}
	return rows, runs, nil
}

// block makes n calls of s with Concurrency callers and returns the wall time they took. The
// first error stops the block and is returned.
func (h *harness) block(ctx context.Context, s subject, n int, onCall func()) (time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	began := time.Now()
	for range min(h.cfg.Concurrency, n) {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, err := s.call(ctx, callNoop); err != nil {
					once.Do(func() { first = err; cancel(err) })
					return
				}
				onCall()
			}
		})
	}
	wg.Wait()
	return time.Since(began), first
}
