package bench

import (
	"context"
	"runtime"
	"time"
)

// Run measures every phase against the server at cfg.Address and returns the report. It starts
// its own workers on fresh task queues and stops them before it returns; the calls it made stay
// in the namespace (retention removes them). Any call that errs ends the run with that error:
// a figure is only reported when every call behind it succeeded.
func Run(ctx context.Context, cfg Config) (Report, error) {
	began := time.Now()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Report{}, err
	}
	rep := Report{
		Machine:  describeMachine(began),
		Server:   cfg.Server,
		Settings: settingsOf(cfg),
	}

	// In process first, while nothing but an idle server shares the process.
	cfg.Progress(Progress{Phase: "in-process"})
	rep.InProcess, err = inProcess(ctx, cfg.InProcessTime)
	if err != nil {
		return Report{}, err
	}

	cfg.Progress(Progress{Phase: "setup"})
	h, err := newHarness(ctx, cfg)
	if err != nil {
		return Report{}, err
	}
	defer h.close()
	rep.SearchAttributes = h.attrs

	if err := h.warmup(ctx); err != nil {
		return Report{}, err
	}
	runtime.GC()
	records, err := h.latency(ctx)
	if err != nil {
		return Report{}, err
	}
	rep.Latency = latencyRows(h.subjects, records)
	if rep.Breakdown, err = h.breakdown(ctx, records); err != nil {
		return Report{}, err
	}
	runtime.GC()
	if rep.Throughput, err = h.throughput(ctx); err != nil {
		return Report{}, err
	}
	runtime.GC()
	idle, _ := rep.LatencyOf(SubjectToolgate)
	if idle.N == 0 {
		idle, _ = rep.LatencyOf(h.subjects[0].name)
	}
	if rep.InFlight, err = h.inFlight(ctx, idle.P50Ms); err != nil {
		return Report{}, err
	}
	if rep.History, err = h.histories(ctx); err != nil {
		return Report{}, err
	}
	rep.ElapsedSeconds = round(time.Since(began).Seconds(), 1)
	cfg.Progress(Progress{Phase: "done"})
	return rep, nil
}

func settingsOf(cfg Config) Settings {
	return Settings{
		Subjects:         cfg.Subjects,
		Calls:            cfg.Calls,
		Warmup:           cfg.Warmup,
		Block:            cfg.Block,
		Concurrency:      cfg.Concurrency,
		ThroughputCalls:  cfg.ThroughputCalls,
		ThroughputBlocks: cfg.ThroughputBlocks,
		InFlight:         cfg.InFlight,
		Probes:           cfg.Probes,
		InProcessMs:      ms(cfg.InProcessTime),
	}
}

// rotated returns subjects starting at index r (mod len): round r of an interleaved phase.
func rotated(subjects []subject, r int) []subject {
	k := r % len(subjects)
	return append(append([]subject(nil), subjects[k:]...), subjects[:k]...)
}
