package bench

import (
	"context"
	"time"
)

// warmup makes Warmup unmeasured no-op calls per subject, interleaved like the latency phase.
func (h *harness) warmup(ctx context.Context) error {
	_, err := h.sequential(ctx, "warmup", h.cfg.Warmup, nil)
	return err
}

// latency makes Calls measured no-op calls per subject, in interleaved blocks, under a CPU
// profile of the process (copied to Config.CPUProfile). It returns the records by subject name
// and where the CPU went; when another CPU profile is running, CPU.Error says so.
func (h *harness) latency(ctx context.Context) (map[string][]record, CPU, error) {
	var cpu CPU
	rec, err := startCPU(h.cfg.CPUProfile)
	if err != nil {
		cpu.Error = err.Error()
	}
	records := make(map[string][]record, len(h.subjects))
	h.rpcs.record(true)
	_, err = h.sequential(ctx, "latency", h.cfg.Calls, func(name string, r record) {
		records[name] = append(records[name], r)
	})
	h.rpcs.record(false)
	if rec != nil {
		var perr error
		if cpu, perr = rec.stop(); perr != nil && err == nil {
			err = perr
		}
	}
	return records, cpu, err
}

// sequential makes n calls per subject one at a time: rounds of Block calls per subject, the
// subjects' order rotated every round, so that a slow stretch of the machine is shared.
func (h *harness) sequential(ctx context.Context, phase string, n int, keep func(string, record)) (time.Duration, error) {
	began := time.Now()
	total := n * len(h.subjects)
	done := 0
	left := make(map[string]int, len(h.subjects))
	for _, s := range h.subjects {
		left[s.name] = n
	}
	h.cfg.Progress(Progress{Phase: phase, Total: total})
	for round := 0; done < total; round++ {
		for _, s := range rotated(h.subjects, round) {
			for range min(h.cfg.Block, left[s.name]) {
				r, err := s.call(ctx, callNoop)
				if err != nil {
					return 0, err
				}
				if keep != nil {
					keep(s.name, r)
				}
				left[s.name]--
				done++
				h.cfg.Progress(Progress{Phase: phase, Done: done, Total: total})
			}
		}
	}
	return time.Since(began), nil
}

// latencyRows summarizes the records; ratios divide by the baseline's figure.
func latencyRows(subjects []subject, records map[string][]record) []LatencyRow {
	rows := make([]LatencyRow, 0, len(subjects))
	for _, s := range subjects {
		d := make([]time.Duration, 0, len(records[s.name]))
		for _, r := range records[s.name] {
			d = append(d, r.took())
		}
		rows = append(rows, LatencyRow{Subject: s.name, Latencies: summarize(d)})
	}
	var base Latencies
	for _, r := range rows {
		if r.Subject == Baseline {
			base = r.Latencies
		}
	}
	for i := range rows {
		rows[i].RatioP50 = ratio(rows[i].P50Ms, base.P50Ms)
		rows[i].RatioP95 = ratio(rows[i].P95Ms, base.P95Ms)
		rows[i].RatioP99 = ratio(rows[i].P99Ms, base.P99Ms)
	}
	return rows
}
