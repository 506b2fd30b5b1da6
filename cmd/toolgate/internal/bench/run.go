package bench

import (
	"context"
	"runtime"
	"slices"
	"time"
)

// Run measures every phase against the server at cfg.Address and returns the report. It starts
// its own workers on fresh task queues and stops them before it returns; the calls it made stay
// in the namespace (retention removes them). Any call that errs ends the run with that error:
// a figure is only reported when every call behind it succeeded. On an error the report holds
// the phases completed before it (check Report.Check before trusting one).
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
	err = run(ctx, cfg, &rep)
	rep.ElapsedSeconds = round(time.Since(began).Seconds(), 1)
	if err == nil {
		cfg.Progress(Progress{Phase: "done"})
	}
	return rep, err
}

// run fills rep phase by phase (those of cfg.Phases), stopping at the first error.
func run(ctx context.Context, cfg Config, rep *Report) (err error) {
	want := func(phase string) bool { return slices.Contains(cfg.Phases, phase) }
	// In process first, while nothing but an idle server shares the process.
	if want(PhaseInProcess) {
		cfg.Progress(Progress{Phase: "in-process"})
		if rep.InProcess, err = inProcess(ctx, cfg.InProcessTime); err != nil {
			return err
		}
	}
	if want(PhaseSchema) {
		cfg.Progress(Progress{Phase: "schema"})
		if rep.Schema, err = schemaPhase(cfg.InProcessTime); err != nil {
			return err
		}
	}

	cfg.Progress(Progress{Phase: "setup"})
	h, err := newHarness(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.close()
	rep.SearchAttributes = h.attrs

	if want(PhaseLatency) || want(PhaseThroughput) {
		if err := h.warmup(ctx); err != nil {
			return err
		}
	}
	var records map[string][]record
	if want(PhaseLatency) {
		runtime.GC()
		var cpu CPU
		records, cpu, err = h.latency(ctx)
		if err != nil {
			return err
		}
		rep.CPU = cpu
		rep.Latency = latencyRows(h.subjects, records)
		rep.RPCSplit = rpcSplitRows(h.subjects, records, h.rpcs.taken())
		if rep.Breakdown, err = h.breakdown(ctx, records); err != nil {
			return err
		}
	}
	if want(PhaseThroughput) {
		runtime.GC()
		var blocks map[string][]blockRun
		if rep.Throughput, blocks, err = h.throughput(ctx); err != nil {
			return err
		}
		if want(PhaseLatency) {
			rep.Comparisons = comparisons(records, blocks)
		}
	}
	if want(PhaseHistory) {
		if rep.History, err = h.histories(ctx); err != nil {
			return err
		}
	}
	if want(PhaseCancel) {
		if rep.Cancel, err = h.cancel(ctx); err != nil {
			return err
		}
	}
	if want(PhaseMCP) {
		if rep.MCP, err = h.mcpPhase(ctx); err != nil {
			return err
		}
	}
	if want(PhaseRounds) {
		if rep.Rounds, err = h.rounds(ctx); err != nil {
			return err
		}
	}
	if want(PhaseCost) {
		if rep.Cost, err = h.cost(ctx); err != nil {
			return err
		}
	}
	// In flight last: it loads the server most, and leaves the most behind.
	if want(PhaseInFlight) {
		runtime.GC()
		idle, ok := rep.LatencyOf(SubjectToolgate)
		if !ok && len(rep.Latency) > 0 {
			idle = rep.Latency[0]
		}
		rep.InFlight, err = h.inFlight(ctx, idle.P50Ms)
	}
	return err
}

func settingsOf(cfg Config) Settings {
	return Settings{
		Subjects:            cfg.Subjects,
		Calls:               cfg.Calls,
		Warmup:              cfg.Warmup,
		Block:               cfg.Block,
		Concurrency:         cfg.Concurrency,
		ThroughputCalls:     cfg.ThroughputCalls,
		ThroughputBlocks:    cfg.ThroughputBlocks,
		InFlight:            cfg.InFlight,
		Probes:              cfg.Probes,
		Cancels:             cfg.Cancels,
		MCPCalls:            cfg.MCPCalls,
		Rounds:              cfg.Rounds,
		Phases:              cfg.Phases,
		CostRuns:            cfg.CostRuns,
		CostHoldMs:          ms(cfg.CostHold),
		InFlightHeartbeatMs: ms(cfg.InFlightHeartbeat),
		InProcessMs:         ms(cfg.InProcessTime),
	}
}

// rotated returns subjects starting at index r (mod len): round r of an interleaved phase.
func rotated(subjects []subject, r int) []subject {
	k := r % len(subjects)
	return append(append([]subject(nil), subjects[k:]...), subjects[:k]...)
}
