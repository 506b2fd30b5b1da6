package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"

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

// inFlight holds InFlight sleep calls running on the toolgate worker, makes Probes no-op calls
// meanwhile, measures the process's memory, then releases and drains the held calls.
//
// A held call can be lost: when its heartbeats reach the server too late (an overloaded
// server), the server times the activity out and the call ends with an error result. The phase
// does not stop for that: it waits until every call is running or lost, measures, and reports
// how many were lost (Lost, from the results) and the most held at once (Held).
func (h *harness) inFlight(ctx context.Context, idleP50Ms float64) (InFlight, error) {
	n := h.cfg.InFlight
	cl := h.toolgate.client
	if err := writeHeap(h.cfg.HeldProfile.Before); err != nil {
		return InFlight{}, err
	}
	runtime.GC()
	before, fromProc := readMem()
	liveBefore := readLive()
	returnedBefore := readReturned()
	peakSource := peakFromSamples
	switch {
	case !fromProc:
		peakSource = peakFromGo
	case resetPeak() == nil:
		peakSource = peakFromHWM
	}
	sampler := startSampler(sampleInterval)
	defer sampler.stop()
	stopLoad, err := startLoad(h.cfg.Load, h.cfg.LoadCommand)
	if err != nil {
		return InFlight{}, err
	}
	defer stopLoad()

	// Fill: start n sleep calls and wait until each is running in the tool (or lost).
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
			return startRetrying(ctx, func() error {
				_, err := cl.Start(ctx, call)
				return err
			})
		})
	}()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	startsDone := false
	held := 0
	// A call whose attempt timed out before its tool ran is neither running nor lost here (its
	// retry may run later, or never): once every start is in, the fill also ends when the counts
	// have not moved for three heartbeat timeouts.
	stall := 3 * h.cfg.InFlightHeartbeat
	seen, movedAt := [2]int{-1, -1}, time.Now()
	for {
		running, lost := h.hold.counts()
		held = max(held, running)
		h.cfg.Progress(Progress{Phase: "in-flight", Done: running, Total: n})
		if now := [2]int{running, lost}; now != seen {
			seen, movedAt = now, time.Now()
		}
		if running == n || (startsDone && (running+lost >= n || time.Since(movedAt) > stall)) {
			break
		}
		select {
		case <-h.hold.reached:
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

	// Probe while the calls are held.
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
	heldMem, _ := readMem()
	if err := writeHeldProfiles(h.cfg.HeldProfile); err != nil {
		return InFlight{}, err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	liveHeld := readLive()
	returnedHeld := readReturned()
	running, _ := h.hold.counts()
	held = max(held, running)

	// Release and drain. A lost call's result is the error result of its timed-out activity.
	h.hold.release()
	released := time.Now()
	var mu sync.Mutex
	done, lost := 0, 0
	h.cfg.Progress(Progress{Phase: "drain", Total: n})
	err = parallel(ctx, n, func(ctx context.Context, i int) error {
		res, err := cl.Result(ctx, ids[i])
		if err != nil {
			return fmt.Errorf("in-flight: result of %s: %w", ids[i], err)
		}
		mu.Lock()
		defer mu.Unlock()
		if res.IsError() {
			lost++
		}
		done++
		h.cfg.Progress(Progress{Phase: "drain", Done: done, Total: n})
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
		Calls:                  n,
		Held:                   held,
		Lost:                   lost,
		Load:                   h.cfg.Load,
		FillSeconds:            round(fill.Seconds(), 3),
		RSSBeforeMiB:           mib(before.rss),
		RSSHeldMiB:             mib(heldMem.rss),
		PeakRSSMiB:             mib(peak),
		PeakSource:             peakSource,
		KiBPerCall:             round(float64(heldMem.rss-before.rss)/1024/float64(max(held, 1)), 1),
		ReturnedKiBPerCall:     perCallKiB(returnedHeld-returnedBefore, held),
		GoHeapHeldMiB:          mib(int64(ms.HeapInuse)),
		LiveHeapKiBPerCall:     perCallKiB(liveHeld.heap-liveBefore.heap, held),
		StackKiBPerCall:        perCallKiB(liveHeld.stack-liveBefore.stack, held),
		GoroutinesPerCall:      round(float64(liveHeld.goroutines-liveBefore.goroutines)/float64(max(held, 1)), 1),
		HeapUnusedKiBPerCall:   perCallKiB(liveHeld.unused-liveBefore.unused, held),
		HeapFreeKiBPerCall:     perCallKiB(liveHeld.free-liveBefore.free, held),
		RuntimeOtherKiBPerCall: perCallKiB(liveHeld.runtimeOther()-liveBefore.runtimeOther(), held),
		OutsideGoKiBPerCall:    perCallKiB(liveHeld.outsideGo()-liveBefore.outsideGo(), held),
		MappedKiBPerCall:       perCallKiB(liveHeld.mapped-liveBefore.mapped, held),
		Probe:                  probe,
		IdleP50Ms:              idleP50Ms,
		ProbeRatioP50:          ratio(probe.P50Ms, idleP50Ms),
		DrainSeconds:           round(drain.Seconds(), 3),
	}, nil
}

// live is what the process holds after a GC: the live heap, the goroutine stacks and count, the
// free space inside heap spans that still hold live objects (unused: fragmentation), the free
// heap not yet returned to the system, the memory the Go runtime has from the system and not
// returned (goResident), the RSS, and the RSS's pages of mapped files and shared memory.
type live struct{ heap, stack, goroutines, unused, free, goResident, rss, mapped int64 }

// readLive runs a GC and reads live.
func readLive() live {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	samples := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(samples)
	st, _ := readMem()
	return live{
		heap:       int64(ms.HeapAlloc),
		stack:      int64(ms.StackInuse),
		goroutines: int64(runtime.NumGoroutine()),
		unused:     int64(samples[2].Value.Uint64()),
		free:       int64(samples[3].Value.Uint64()),
		goResident: int64(samples[0].Value.Uint64() - samples[1].Value.Uint64()),
		rss:        st.rss,
		mapped:     st.mapped,
	}
}

// runtimeOther is what the Go runtime holds besides objects, stacks and heap space: span and
// other metadata, profiling buckets.
func (l live) runtimeOther() int64 { return l.goResident - l.heap - l.stack - l.unused - l.free }

// readReturned returns the RSS once the Go runtime has returned every free page to the system
// (debug.FreeOSMemory: a GC, then all of the free heap), as it does by itself under memory
// pressure or a GOMEMLIMIT.
func readReturned() int64 {
	debug.FreeOSMemory()
	st, _ := readMem()
	return st.rss
}

// outsideGo is the anonymous resident memory the Go runtime does not account for: here mostly the
// embedded server's SQLite (modernc.org/sqlite allocates with its own mmap-based malloc). An
// in-memory store keeps every running workflow's rows there; a file store only its page cache,
// bounded by cache_size per connection (the rows are on disk, in the kernel's page cache, not
// in the RSS). Mapped files and shared memory (a file store's WAL index) are not in it: mapped.
func (l live) outsideGo() int64 { return l.rss - l.mapped - l.goResident }

func perCallKiB(bytes int64, calls int) float64 {
	return round(float64(bytes)/1024/float64(max(calls, 1)), 1)
}

// writeHeldProfiles writes the heap (after a GC) and goroutine profiles p asks for.
func writeHeldProfiles(p HeldProfile) error {
	if err := writeHeap(p.Heap); err != nil {
		return err
	}
	if p.Goroutines != nil {
		if err := pprof.Lookup("goroutine").WriteTo(p.Goroutines, 0); err != nil {
			return fmt.Errorf("in-flight: goroutine profile: %w", err)
		}
	}
	return nil
}

// writeHeap writes a heap profile to w after a GC, if w is not nil.
func writeHeap(w io.Writer) error {
	if w == nil {
		return nil
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(w, 0); err != nil {
		return fmt.Errorf("in-flight: heap profile: %w", err)
	}
	return nil
}

// startAttempts bounds the attempts of one start in the in-flight phase.
const startAttempts = 5

// startRetrying runs start until it succeeds, fails for a reason other than the server's deadline
// or unavailability, or has run startAttempts times. A start is idempotent (the same call ID
// attaches to the running call), so an overloaded server that let one time out costs a retry,
// not the phase.
func startRetrying(ctx context.Context, start func() error) error {
	var err error
	for range startAttempts {
		if err = start(); err == nil || ctx.Err() != nil {
			return err
		}
		switch serviceerror.ToStatus(err).Code() {
		case codes.DeadlineExceeded, codes.Unavailable, codes.ResourceExhausted:
		default:
			return fmt.Errorf("in-flight: start: %w", err)
		}
	}
	return fmt.Errorf("in-flight: start, %d attempts: %w", startAttempts, err)
}

// parallel runs fn(0..n-1) on up to startParallelism goroutines and returns the first error
// (which cancels the rest).
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return parallelN(ctx, n, startParallelism, fn)
}

// parallelN is parallel on up to workers goroutines.
func parallelN(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(workers, n) {
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

// startLoad starts n busy processes of command and returns the function that kills and reaps
// them (idempotent in effect: a killed process is waited for once).
func startLoad(n int, command func() *exec.Cmd) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		cmds = nil
	}
	if n > 0 && command == nil {
		return stop, errors.New("in-flight: a load needs Config.LoadCommand")
	}
	for range n {
		c := command()
		if err := c.Start(); err != nil {
			stop()
			return stop, fmt.Errorf("in-flight: start a busy process: %w", err)
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}
