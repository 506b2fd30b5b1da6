package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// completeReport is a structurally complete report of two subjects.
func completeReport() Report {
	lat := Latencies{N: 5, P50Ms: 10, P95Ms: 12, P99Ms: 13, MeanMs: 11, MinMs: 9, MaxMs: 13}
	hist := func(subject, c string) HistoryRow {
		return HistoryRow{Subject: subject, Case: c, Events: 11, Bytes: 1200, Types: []string{"WorkflowExecutionStarted"}, RatioEvents: 1, RatioBytes: 1}
	}
	bd := func(subject string) BreakdownRow {
		return BreakdownRow{Subject: subject, Calls: 5, Segments: []Segment{{Name: segActRun, MeanMs: 1, P50Ms: 1}}}
	}
	return Report{
		Machine: Machine{Date: "2026-01-01T00:00:00Z", GoVersion: "go1.26.8", OS: "linux", Arch: "amd64", CPUs: 2, GOMAXPROCS: 2, CPUModel: "AMD EPYC"},
		Server:  "embedded",
		Settings: Settings{Subjects: []string{SubjectToolgate, SubjectBare}, Calls: 5, Warmup: 1, Block: 1, Concurrency: 2,
			ThroughputCalls: 4, ThroughputBlocks: 2, InFlight: 3, Probes: 2, Cancels: 2, MCPCalls: 5, Rounds: 2, CostRuns: 2, InFlightHeartbeatMs: 10000, InProcessMs: 10},
		Latency: []LatencyRow{
			{Subject: SubjectToolgate, Latencies: lat, RatioP50: 1.05, RatioP95: 1.1, RatioP99: 1.2},
			{Subject: SubjectBare, Latencies: lat, RatioP50: 1, RatioP95: 1, RatioP99: 1},
		},
		Breakdown: []BreakdownRow{bd(SubjectToolgate), bd(SubjectBare)},
		CPU: CPU{WallSeconds: 2, CPUSeconds: 1, Cores: 0.5, GzipPercent: 3,
			Components: []CPUShare{{Component: CompSQLite, Percent: 60, CPUSeconds: 0.6}, {Component: CompSDK, Percent: 40, CPUSeconds: 0.4}}},
		Throughput: []ThroughputRow{
			{Subject: SubjectToolgate, Calls: 4, Concurrency: 2, Seconds: 0.1, PerSecond: 40, Ratio: 0.9},
			{Subject: SubjectBare, Calls: 4, Concurrency: 2, Seconds: 0.09, PerSecond: 44, Ratio: 1},
		},
		Comparisons: []Comparison{{Subject: SubjectToolgate, Baseline: SubjectBareEager,
			P50: Interval{Ratio: 1.02, Low: 0.98, High: 1.06}, P99: Interval{Ratio: 0.9, Low: 0.8, High: 1.1}}},
		InProcess: InProcess{
			Direct:  Op{Iterations: 100, NsPerCall: 2, AllocsPerCall: 0},
			Execute: Op{Iterations: 100, NsPerCall: 5000, AllocsPerCall: 22, BytesPerCall: 2400},
			Ratio:   2500, OverheadNs: 4998,
		},
		Cancel: Cancel{Calls: 2, Seconds: 3, Closed: Latencies{N: 2, P50Ms: 300, P95Ms: 400, P99Ms: 400, MeanMs: 350, MinMs: 300, MaxMs: 400},
			Progress: Latencies{N: 4, P50Ms: 100, P95Ms: 200, P99Ms: 200, MeanMs: 150, MinMs: 50, MaxMs: 200}},
		InFlight: InFlight{Calls: 3, Held: 3, FillSeconds: 1, RSSBeforeMiB: 100, RSSHeldMiB: 110, PeakRSSMiB: 120, PeakSource: peakFromHWM,
			KiBPerCall: 3413, GoHeapHeldMiB: 50, Probe: Latencies{N: 2, P50Ms: 20, P95Ms: 30, P99Ms: 30, MeanMs: 25, MinMs: 20, MaxMs: 30},
			IdleP50Ms: 10, ProbeRatioP50: 2, DrainSeconds: 1},
		MCP:            MCP{Calls: 5, Execute: lat, MCP: lat, RatioP50: 1, RatioP95: 1},
		History:        []HistoryRow{hist(SubjectToolgate, CaseSuccess), hist(SubjectToolgate, CaseError), hist(SubjectBare, CaseSuccess), hist(SubjectBare, CaseError)},
		Rounds:         completeRounds(2),
		Cost:           completeCost(2),
		Schema:         completeSchema(),
		ElapsedSeconds: 5,
	}
}

func TestCheckComplete(t *testing.T) {
	require.NoError(t, completeReport().Check())
}

func TestCheckIncomplete(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(r *Report)
		wantErr string
	}{
		{name: "no CPU model", breakIt: func(r *Report) { r.Machine.CPUModel = "" }, wantErr: "machine"},
		{name: "cancel phase missing", breakIt: func(r *Report) { r.Cancel = Cancel{} }, wantErr: "cancel"},
		{name: "mcp phase missing", breakIt: func(r *Report) { r.MCP = MCP{} }, wantErr: "mcp"},
		{name: "no server", breakIt: func(r *Report) { r.Server = "" }, wantErr: "server"},
		{name: "no baseline", breakIt: func(r *Report) { r.Settings.Subjects = []string{SubjectToolgate} }, wantErr: "baseline"},
		{name: "latency row missing", breakIt: func(r *Report) { r.Latency = r.Latency[1:] }, wantErr: `latency: subject "toolgate"`},
		{name: "latency short of calls", breakIt: func(r *Report) { r.Latency[0].N = 4 }, wantErr: `latency: subject "toolgate"`},
		{name: "percentiles out of order", breakIt: func(r *Report) { r.Latency[0].P99Ms = 1 }, wantErr: `latency: subject "toolgate"`},
		{name: "baseline ratio not 1", breakIt: func(r *Report) { r.Latency[1].RatioP95 = 2 }, wantErr: "baseline's ratios"},
		{name: "throughput missing", breakIt: func(r *Report) { r.Throughput = nil }, wantErr: "throughput"},
		{name: "breakdown empty", breakIt: func(r *Report) { r.Breakdown[1].Segments = nil }, wantErr: `breakdown: subject "bare"`},
		{name: "history case missing", breakIt: func(r *Report) { r.History = r.History[:3] }, wantErr: `history: subject "bare" case "error"`},
		{name: "in-process not measured", breakIt: func(r *Report) { r.InProcess.Execute = Op{} }, wantErr: "in-process"},
		{name: "in-flight probes missing", breakIt: func(r *Report) { r.InFlight.Probe.N = 0 }, wantErr: "in-flight"},
		{name: "in-flight nothing held", breakIt: func(r *Report) { r.InFlight.Held = 0 }, wantErr: "in-flight"},
		{name: "in-flight RSS missing", breakIt: func(r *Report) { r.InFlight.PeakRSSMiB = 0 }, wantErr: "in-flight"},
		{name: "no CPU profile, no reason", breakIt: func(r *Report) { r.CPU = CPU{} }, wantErr: "cpu"},
		{name: "elapsed missing", breakIt: func(r *Report) { r.ElapsedSeconds = 0 }, wantErr: "elapsed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := completeReport()
			tt.breakIt(&r)
			assert.ErrorContains(t, r.Check(), tt.wantErr)
		})
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	data, err := json.Marshal(completeReport())
	require.NoError(t, err)
	assert.Contains(t, string(data), `"p50Ms":10`)
	var back Report
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, completeReport(), back)
}

func TestWriteText(t *testing.T) {
	var b strings.Builder
	require.NoError(t, completeReport().WriteText(&b))
	out := b.String()
	for _, want := range []string{
		"go1.26.8 linux/amd64", "AMD EPYC",
		"Latency: 5 sequential", "1.05 (goal <= 1.10)",
		"Throughput: 4 no-op calls", "0.90 (goal >= 0.90)",
		"toolgate / bare-eager", "1.02 [0.98, 1.06]", "0.90 [0.80, 1.10]", "p50, p99 <= 1.00",
		"Where a call's time goes", segActRun,
		"CPU during the latency phase: 1.0 s of CPU in 2.0 s (0.50 cores)", CompSQLite, "gzip of gRPC messages: 3.0%",
		"toolcore.Execute", "overhead 4998 ns",
		"In flight: 3 sleep calls held running by one worker (heartbeat timeout 10s)", "all running after 1.0s", "peak 120 MiB (VmHWM)", "2.00x the idle toolgate p50",
		"MCP: tools/call over streamable HTTP", "MCP / Execute: p50 1.00 (goal <= 1.20)",
		"History of one call",
		"elapsed 5.0s",
	} {
		assert.Contains(t, out, want)
	}
}

func TestWriteTextPartial(t *testing.T) {
	r := completeReport()
	r.Latency, r.Throughput, r.Comparisons, r.Breakdown, r.History, r.InFlight, r.CPU = nil, nil, nil, nil, nil, InFlight{}, CPU{}
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	assert.Contains(t, b.String(), "toolcore.Execute")
	for _, absent := range []string{"Latency:", "Throughput:", "Like for like", "Where a call's time goes", "CPU during", "In flight:", "History of one call"} {
		assert.NotContains(t, b.String(), absent)
	}
	assert.Error(t, r.Check(), "a partial report is not complete")
}

func TestWriteTextLostCalls(t *testing.T) {
	r := completeReport()
	r.InFlight.Held, r.InFlight.Lost = 2, 1
	require.NoError(t, r.Check(), "lost calls are a finding, not a hole in the report")
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	assert.Contains(t, b.String(), "at most 2 running at once")
	assert.Contains(t, b.String(), "LOST 1")
}
