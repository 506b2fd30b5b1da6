package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// InProcessFuncs returns the two functions the in-process phase compares, each making one call
// of the no-op tool: "direct" calls the tool's function, "execute" runs toolcore.Execute (look
// up, validate, run on its own goroutine, serialize, link). Go benchmarks call them too.
func InProcessFuncs(ctx context.Context) (direct, execute func() error, err error) {
	tool, err := noopTool()
	if err != nil {
		return nil, nil, err
	}
	reg, err := toolcore.NewRegistry(tool)
	if err != nil {
		return nil, nil, err
	}
	call, err := toolcore.NewToolCall("call-noop-1", toolNoop, []byte("{}"))
	if err != nil {
		return nil, nil, err
	}
	var sink any // keeps the direct call's result alive
	direct = func() error {
		out, err := noop(ctx, empty{})
		sink = out
		return err
	}
	execute = func() error {
		res, err := toolcore.Execute(ctx, reg, call)
		if err != nil {
			return err
		}
		if res.IsError() {
			return fmt.Errorf("in-process no-op: error result %s", res.Content())
		}
		sink = res
		return nil
	}
	_ = sink
	return direct, execute, nil
}

// inProcess times both functions for about d each.
func inProcess(ctx context.Context, d time.Duration) (InProcess, error) {
	direct, execute, err := InProcessFuncs(ctx)
	if err != nil {
		return InProcess{}, err
	}
	var ip InProcess
	if ip.Direct, err = measure(direct, d); err != nil {
		return InProcess{}, err
	}
	if ip.Execute, err = measure(execute, d); err != nil {
		return InProcess{}, err
	}
	ip.Ratio = ratio(ip.Execute.NsPerCall, ip.Direct.NsPerCall)
	ip.OverheadNs = round(ip.Execute.NsPerCall-ip.Direct.NsPerCall, 1)
	return ip, nil
}

// measure runs fn in a loop long enough to take about d (the count found by doubling, like
// testing.B) and returns the mean time and allocations per call. Allocations are counted process
// wide: other goroutines (an idle server) add a little noise.
func measure(fn func() error, d time.Duration) (Op, error) {
	loop := func(n int) (time.Duration, error) {
		began := time.Now()
		for range n {
			if err := fn(); err != nil {
				return 0, err
			}
		}
		return time.Since(began), nil
	}
	n := 1
	for {
		took, err := loop(n)
		if err != nil {
			return Op{}, err
		}
		if took >= d/10 || n >= 1<<30 {
			n = max(1, int(float64(n)*float64(d)/float64(max(took, 1))))
			break
		}
		n *= 4
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	took, err := loop(n)
	runtime.ReadMemStats(&after)
	if err != nil {
		return Op{}, err
	}
	return Op{
		Iterations:    n,
		NsPerCall:     round(float64(took.Nanoseconds())/float64(n), 2),
		AllocsPerCall: round(float64(after.Mallocs-before.Mallocs)/float64(n), 2),
		BytesPerCall:  round(float64(after.TotalAlloc-before.TotalAlloc)/float64(n), 1),
	}, nil
}
