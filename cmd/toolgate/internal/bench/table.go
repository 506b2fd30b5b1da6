package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the report as the tables `toolgate bench` prints.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "toolgate bench  %s  %s %s/%s  %d CPUs (GOMAXPROCS %d)  %s\n",
		m.Date, m.GoVersion, m.OS, m.Arch, m.CPUs, m.GOMAXPROCS, m.CPUModel)
	attrs := "off"
	if r.SearchAttributes {
		attrs = "on"
	}
	fmt.Fprintf(&b, "server: %s; search attributes %s", r.Server, attrs)
	if m.SDK != "" || m.ServerVersion != "" {
		fmt.Fprintf(&b, "; sdk %s, server %s", orDash(m.SDK), orDash(m.ServerVersion))
	}
	b.WriteString("\nratios are subject / bare, measured side by side in this run\n\n")

	if len(r.Latency) > 0 {
		r.writeLatency(&b)
	}
	if len(r.Throughput) > 0 {
		r.writeThroughput(&b)
	}
	if len(r.Comparisons) > 0 {
		r.writeComparisons(&b)
	}
	if len(r.Breakdown) > 0 {
		writeSegments(&b, fmt.Sprintf("Where a call's time goes: mean ms per segment (p50 in brackets), from the histories of %d calls per subject",
			r.Breakdown[0].Calls), r.Breakdown)
	}
	if len(r.RPCSplit) > 0 {
		writeSegments(&b, fmt.Sprintf("The same seen from the client's RPCs (caller, server round trips, worker between them): mean ms [p50], %d calls per subject",
			r.RPCSplit[0].Calls), r.RPCSplit)
	}
	if len(r.CPU.Components) > 0 || r.CPU.Error != "" {
		r.writeCPU(&b)
	}
	if r.InProcess.Execute.Iterations > 0 {
		r.writeInProcess(&b)
	}
	if r.Cancel.Calls > 0 {
		r.writeCancel(&b)
	}
	if r.MCP.Calls > 0 {
		r.writeMCP(&b)
	}
	if len(r.Rounds.Shapes) > 0 {
		r.writeRounds(&b)
	}
	if len(r.Cost.Shapes) > 0 {
		r.writeCost(&b)
	}
	if r.Schema.Accepted.Iterations > 0 {
		r.writeSchema(&b)
	}
	if r.InFlight.Calls > 0 {
		r.writeInFlight(&b)
	}
	if len(r.History) > 0 {
		r.writeHistory(&b)
	}
	fmt.Fprintf(&b, "\nelapsed %.1fs\n", r.ElapsedSeconds)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r Report) writeLatency(b *strings.Builder) {
	s := r.Settings
	fmt.Fprintf(b, "Latency: %d sequential no-op calls per subject, blocks of %d interleaved, after %d warm-up calls\n",
		s.Calls, s.Block, s.Warmup)
	t := table(b)
	fmt.Fprintln(t, "subject\tp50\tp95\tp99\tmean\tmax\tratio p50\tratio p95\tratio p99\t")
	for _, row := range r.Latency {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t\n", row.Subject, msText(row.P50Ms), msText(row.P95Ms),
			msText(row.P99Ms), msText(row.MeanMs), msText(row.MaxMs), goal(row.Subject, row.RatioP50, "<=", GoalLatencyP50),
			row.RatioP95, row.RatioP99)
	}
	t.Flush()
}

func (r Report) writeThroughput(b *strings.Builder) {
	s := r.Settings
	fmt.Fprintf(b, "\nThroughput: %d no-op calls per subject, %d concurrent callers, %d alternating blocks\n",
		s.ThroughputCalls, s.Concurrency, s.ThroughputBlocks)
	t := table(b)
	fmt.Fprintln(t, "subject\tcalls/s\tseconds\tratio\t")
	for _, row := range r.Throughput {
		fmt.Fprintf(t, "%s\t%.1f\t%.2f\t%s\t\n", row.Subject, row.PerSecond, row.Seconds, goal(row.Subject, row.Ratio, ">=", GoalThroughput))
	}
	t.Flush()
}

func (r Report) writeComparisons(b *strings.Builder) {
	b.WriteString("\nLike for like: ratio [95% bootstrap interval]; an interval that holds 1.00 is no difference this run could tell\n")
	t := table(b)
	fmt.Fprintln(t, "subject / baseline\tp50\tp99\tthroughput\tgoal\t")
	for _, c := range r.Comparisons {
		fmt.Fprintf(t, "%s / %s\t%s\t%s\t%s\t%s\t\n", c.Subject, c.Baseline, c.P50.text(), c.P99.text(), c.Throughput.text(),
			likeForLikeGoal(c.Subject))
	}
	t.Flush()
}

func (i Interval) text() string {
	if i.Ratio == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", i.Ratio, i.Low, i.High)
}

func likeForLikeGoal(subject string) string {
	switch subject {
	case SubjectToolgate:
		return "p50, p99 <= 1.00; throughput >= 1.00"
	case SubjectToolgateLocal:
		return "p50 <= 0.70"
	}
	return ""
}

func writeSegments(b *strings.Builder, title string, rows []BreakdownRow) {
	fmt.Fprintf(b, "\n%s\n", title)
	t := table(b)
	fmt.Fprint(t, "segment\t")
	for _, row := range rows {
		fmt.Fprintf(t, "%s\t", row.Subject)
	}
	fmt.Fprintln(t)
	for _, name := range segmentNames(rows) {
		fmt.Fprintf(t, "%s\t", name)
		for _, row := range rows {
			fmt.Fprintf(t, "%s\t", segmentText(row, name))
		}
		fmt.Fprintln(t)
	}
	t.Flush()
}

func (r Report) writeCPU(b *strings.Builder) {
	c := r.CPU
	if c.Error != "" {
		fmt.Fprintf(b, "\nCPU during the latency phase: not profiled (%s)\n", c.Error)
		return
	}
	fmt.Fprintf(b, "\nCPU during the latency phase: %.1f s of CPU in %.1f s (%.2f cores), by component\n",
		c.CPUSeconds, c.WallSeconds, c.Cores)
	t := table(b)
	for _, s := range c.Components {
		fmt.Fprintf(t, "%s\t%.1f%%\t\n", s.Component, s.Percent)
	}
	t.Flush()
	fmt.Fprintf(b, "of which gzip of gRPC messages: %.1f%%\n", c.GzipPercent)
}

func (r Report) writeInProcess(b *strings.Builder) {
	ip := r.InProcess
	fmt.Fprintf(b, "\nIn process: one no-op tool call\n")
	t := table(b)
	fmt.Fprintln(t, "\tns/call\tallocs/call\tbytes/call\t")
	fmt.Fprintf(t, "direct function call\t%.1f\t%.1f\t%.0f\t\n", ip.Direct.NsPerCall, ip.Direct.AllocsPerCall, ip.Direct.BytesPerCall)
	fmt.Fprintf(t, "toolcore.Execute\t%.1f\t%.1f\t%.0f\t\n", ip.Execute.NsPerCall, ip.Execute.AllocsPerCall, ip.Execute.BytesPerCall)
	t.Flush()
	fmt.Fprintf(b, "overhead %.0f ns per call\n", ip.OverheadNs)
}

func (r Report) writeInFlight(b *strings.Builder) {
	f := r.InFlight
	fmt.Fprintf(b, "\nIn flight: %d sleep calls held running by one worker (heartbeat timeout %s)\n", f.Calls,
		time.Duration(r.Settings.InFlightHeartbeatMs*float64(time.Millisecond)))
	if f.Load > 0 {
		fmt.Fprintf(b, "with %d busy processes beside the server (--load)\n", f.Load)
	}
	if f.Lost == 0 && f.Held == f.Calls {
		fmt.Fprintf(b, "all running after %.1fs; drained %.1fs after release\n", f.FillSeconds, f.DrainSeconds)
	} else {
		fmt.Fprintf(b, "at most %d running at once, after %.1fs; LOST %d: their activities timed out (heartbeats reached the server too late); drained %.1fs after release\n",
			f.Held, f.FillSeconds, f.Lost, f.DrainSeconds)
	}
	fmt.Fprintf(b, "process RSS (server + workers + client): %.0f MiB before, %.0f MiB held (%+.0f KiB per call), peak %.0f MiB (%s); Go heap %.0f MiB held\n",
		f.RSSBeforeMiB, f.RSSHeldMiB, f.KiBPerCall, f.PeakRSSMiB, f.PeakSource, f.GoHeapHeldMiB)
	fmt.Fprintf(b, "per held call with the Go runtime's free pages returned to the system: %+.0f KiB of RSS\n", f.ReturnedKiBPerCall)
	fmt.Fprintf(b, "per held call, after a GC: %.1f KiB live heap, %.1f KiB goroutine stacks (%.1f goroutines), %.1f KiB free in partly used heap spans, %.1f KiB free heap, %.1f KiB runtime metadata, %.1f KiB outside the Go runtime (SQLite's heap), %.1f KiB of mapped files and shared memory\n",
		f.LiveHeapKiBPerCall, f.StackKiBPerCall, f.GoroutinesPerCall, f.HeapUnusedKiBPerCall, f.HeapFreeKiBPerCall,
		f.RuntimeOtherKiBPerCall, f.OutsideGoKiBPerCall, f.MappedKiBPerCall)
	fmt.Fprintf(b, "no-op call meanwhile (%d sequential): p50 %s, p95 %s, max %s = %.2fx the idle toolgate p50 (%s)\n",
		f.Probe.N, msText(f.Probe.P50Ms), msText(f.Probe.P95Ms), msText(f.Probe.MaxMs), f.ProbeRatioP50, msText(f.IdleP50Ms))
}

// GoalCancelP99Ms is the bound toolgate holds itself to on cancellation and progress delays at p99.
const GoalCancelP99Ms = 1500

func (r Report) writeCancel(b *strings.Builder) {
	c := r.Cancel
	fmt.Fprintf(b, "\nCancel: %d running tick calls (progress every second, default options), %d at a time, canceled\n", c.Calls, cancelParallelism)
	t := table(b)
	fmt.Fprintln(t, "\tn\tp50\tp95\tp99\tmax\tgoal\t")
	for _, row := range []struct {
		name string
		l    Latencies
	}{{"cancel request to workflow closed Canceled", c.Closed}, {"progress report to a caller polling every 25ms", c.Progress}} {
		fmt.Fprintf(t, "%s\t%d\t%s\t%s\t%s\t%s\tp99 <= %dms\t\n", row.name, row.l.N, msText(row.l.P50Ms), msText(row.l.P95Ms), msText(row.l.P99Ms), msText(row.l.MaxMs), GoalCancelP99Ms)
	}
	t.Flush()
	if len(c.Segments) > 0 {
		fmt.Fprintf(b, "where a cancellation's time goes: mean ms [p50], from the histories\n")
		t = table(b)
		for _, s := range c.Segments {
			fmt.Fprintf(t, "%s\t%.1f [%.1f]\t\n", s.Name, s.MeanMs, s.P50Ms)
		}
		t.Flush()
	}
}

func (r Report) writeHistory(b *strings.Builder) {
	fmt.Fprintf(b, "\nHistory of one call\n")
	t := table(b)
	fmt.Fprintln(t, "subject\tcase\tevents\tbytes\tratio events\tratio bytes\t")
	for _, row := range r.History {
		fmt.Fprintf(t, "%s\t%s\t%d\t%d\t%.2f\t%.2f\t\n", row.Subject, row.Case, row.Events, row.Bytes, row.RatioEvents, row.RatioBytes)
	}
	t.Flush()
}

func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// goal formats a ratio, with the goal beside it for the toolgate subject.
func goal(subject string, v float64, op string, target float64) string {
	if subject != SubjectToolgate {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.2f (goal %s %.2f)", v, op, target)
}

func msText(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// segmentNames lists every segment of the rows, in order of first appearance.
func segmentNames(rows []BreakdownRow) []string {
	var names []string
	for _, row := range rows {
		for _, s := range row.Segments {
			if !contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	return names
}

func segmentText(row BreakdownRow, name string) string {
	for _, s := range row.Segments {
		if s.Name == name {
			return fmt.Sprintf("%.2f [%.2f]", s.MeanMs, s.P50Ms)
		}
	}
	return "-"
}
