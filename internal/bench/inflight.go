package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// Cadence of the in-flight phase.
const (
	// startParallelism bounds the concurrent starts (and result waits) of the held calls.
	startParallelism = 32
	// sampleInterval is how often the RSS is sampled (when the peak cannot be reset).
	sampleInterval = 50 * time.Millisecond
	// pollInterval is how often the fill's progress is reported.
	pollInterval = 200 * time.Millisecond
)

// errLost explains held calls that ended early: their activity was timed out or canceled.
var errLost = errors.New("a held call's context ended: most likely its heartbeats did not reach the server in time")

// inFlight holds InFlight sleep calls running on the toolgate worker, makes Probes no-op calls
// meanwhile, measures the process's memory, then releases and drains the held calls.
func (h *harness) inFlight(ctx context.Context, idleP50Ms float64) (InFlight, error) {
	n := h.cfg.InFlight
	cl := h.toolgate.client
	runtime.GC()
	before, fromProc := readMem()
	peakSource := peakFromSamples
	switch {
	case !fromProc:
		peakSource = peakFromGo
	case resetPeak() == nil:
		peakSource = peakFromHWM
	}
	sampler := startSampler(sampleInterval)
	defer sampler.stop()

	// Fill: start n sleep calls and wait until all n are running in the tool.
	h.hold.expect(n)
	defer h.hold.release() // on an error path too: never leave calls held
	began := time.Now()
	ids := make([]string, n)
	errc := make(chan error, 1)
	go func() {
		errc <- parallel(ctx, n, func(ctx context.Context, i int) error {
			call, err := toolcore.NewToolCall(h.nextID(), toolSleep, []byte("{}"))
			if err != nil {
				return err
			}
			ids[i] = call.ID()
			if _, err := cl.Start(ctx, call); err != nil {
				return fmt.Errorf("in-flight: start %s: %w", call.ID(), err)
			}
			return nil
		})
	}()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	startsDone := false
	for filled := false; !filled; {
		running, lost := h.hold.counts()
		if lost > 0 {
			return InFlight{}, fmt.Errorf("in-flight: %d held calls ended before their release, %d running (%w)", lost, running, errLost)
		}
		h.cfg.Progress(Progress{Phase: "in-flight", Done: running, Total: n})
		select {
		case <-h.hold.reached:
			filled = true
		case err := <-errc:
			if err != nil {
				return InFlight{}, err
			}
			startsDone = true
			errc = nil // every start is in; wait for the tools to run
		case <-tick.C:
		case <-ctx.Done():
			return InFlight{}, fmt.Errorf("in-flight: %d of %d calls running: %w", h.hold.count(), n, context.Cause(ctx))
		}
	}
	fill := time.Since(began)
	if !startsDone {
		if err := <-errc; err != nil {
			return InFlight{}, err
		}
	}
	h.cfg.Progress(Progress{Phase: "in-flight", Done: n, Total: n})

	// Probe while everything is held.
	probes := make([]time.Duration, 0, h.cfg.Probes)
	h.cfg.Progress(Progress{Phase: "probe", Total: h.cfg.Probes})
	for i := range h.cfg.Probes {
		r, err := h.toolgate.call(ctx, callNoop)
		if err != nil {
			return InFlight{}, fmt.Errorf("in-flight probe: %w", err)
		}
		probes = append(probes, r.took())
		h.cfg.Progress(Progress{Phase: "probe", Done: i + 1, Total: h.cfg.Probes})
	}
	held, _ := readMem()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if running, lost := h.hold.counts(); running != n || lost > 0 {
		return InFlight{}, fmt.Errorf("in-flight: %d held calls ended before their release, %d of %d running after the probes (%w)", lost, running, n, errLost)
	}

	// Release and drain.
	h.hold.release()
	released := time.Now()
	var drained sync.Mutex
	done := 0
	h.cfg.Progress(Progress{Phase: "drain", Total: n})
	err := parallel(ctx, n, func(ctx context.Context, i int) error {
		res, err := cl.Result(ctx, ids[i])
		if err != nil {
			return fmt.Errorf("in-flight: result of %s: %w", ids[i], err)
		}
		if res.IsError() {
			return fmt.Errorf("in-flight: %s: error result %s", ids[i], res.Content())
		}
		drained.Lock()
		done++
		h.cfg.Progress(Progress{Phase: "drain", Done: done, Total: n})
		drained.Unlock()
		return nil
	})
	if err != nil {
		return InFlight{}, err
	}
	drain := time.Since(released)

	peak := sampler.stop()
	if peakSource == peakFromHWM {
		if st, ok := readMem(); ok {
			peak = max(st.hwm, peak)
		}
	}
	probe := summarize(probes)
	return InFlight{
		Calls:         n,
		FillSeconds:   round(fill.Seconds(), 3),
		RSSBeforeMiB:  mib(before.rss),
		RSSHeldMiB:    mib(held.rss),
		PeakRSSMiB:    mib(peak),
		PeakSource:    peakSource,
		KiBPerCall:    round(float64(held.rss-before.rss)/1024/float64(n), 1),
		GoHeapHeldMiB: mib(int64(ms.HeapInuse)),
		Probe:         probe,
		IdleP50Ms:     idleP50Ms,
		ProbeRatioP50: ratio(probe.P50Ms, idleP50Ms),
		DrainSeconds:  round(drain.Seconds(), 3),
	}, nil
}

// parallel runs fn(0..n-1) on up to startParallelism goroutines and returns the first error
// (which cancels the rest).
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(startParallelism, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel(err) })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return first
}
