package bench

import (
	"errors"
	"fmt"
	"slices"
)

// Report is what Run measured. Its JSON is the output of `toolgate bench --json`.
type Report struct {
	Machine  Machine  `json:"machine"`
	Server   string   `json:"server"`
	Settings Settings `json:"settings"`
	// SearchAttributes says whether the toolgate subject set and upserted search attributes.
	SearchAttributes bool           `json:"searchAttributes"`
	Latency          []LatencyRow   `json:"latency"`
	Breakdown        []BreakdownRow `json:"breakdown"`
	// RPCSplit splits the latency phase's calls by the client's RPCs: the caller, each RPC, and
	// the worker's own time between them (same shape as Breakdown, every measured call).
	RPCSplit   []BreakdownRow  `json:"rpcSplit"`
	CPU        CPU             `json:"cpu"`
	Throughput []ThroughputRow `json:"throughput"`
	// Comparisons sets each subject against its like-for-like baseline, with intervals.
	Comparisons    []Comparison `json:"comparisons"`
	InProcess      InProcess    `json:"inProcess"`
	Cancel         Cancel       `json:"cancel"`
	MCP            MCP          `json:"mcp"`
	Rounds         Rounds       `json:"rounds"`
	Cost           Cost         `json:"cost"`
	Schema         Schema       `json:"schema"`
	InFlight       InFlight     `json:"inFlight"`
	History        []HistoryRow `json:"history"`
	ElapsedSeconds float64      `json:"elapsedSeconds"`
}

// Machine describes where the figures were taken.
type Machine struct {
	Date       string `json:"date"`
	GoVersion  string `json:"goVersion"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpuModel"`
	// SDK and ServerVersion are the module versions linked (when the binary records them).
	SDK           string `json:"sdk,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
}

// Settings are the figures of the Config the report was taken with.
type Settings struct {
	Subjects         []string `json:"subjects"`
	Calls            int      `json:"calls"`
	Warmup           int      `json:"warmup"`
	Block            int      `json:"block"`
	Concurrency      int      `json:"concurrency"`
	ThroughputCalls  int      `json:"throughputCalls"`
	ThroughputBlocks int      `json:"throughputBlocks"`
	InFlight         int      `json:"inFlight"`
	Probes           int      `json:"probes"`
	Cancels          int      `json:"cancels"`
	MCPCalls         int      `json:"mcpCalls"`
	Rounds           int      `json:"rounds"`
	// Phases are the phases run (all when empty, in reports of older versions).
	Phases     []string `json:"phases,omitempty"`
	CostRuns   int      `json:"costRuns"`
	CostHoldMs float64  `json:"costHoldMs"`
	// InFlightHeartbeatMs is the sleep tool's HeartbeatTimeout.
	InFlightHeartbeatMs float64 `json:"inFlightHeartbeatMs"`
	InProcessMs         float64 `json:"inProcessMs"`
}

// LatencyRow is one subject's sequential latency; ratios are subject/bare.
type LatencyRow struct {
	Subject string `json:"subject"`
	Latencies
	RatioP50 float64 `json:"ratioP50"`
	RatioP95 float64 `json:"ratioP95"`
	RatioP99 float64 `json:"ratioP99"`
}

// BreakdownRow says where one subject's call time goes, from the histories of Calls calls.
type BreakdownRow struct {
	Subject  string    `json:"subject"`
	Calls    int       `json:"calls"`
	Segments []Segment `json:"segments"`
}

// Segment is one stretch of a call: its mean (the means add up to the mean call) and median.
type Segment struct {
	Name   string  `json:"name"`
	MeanMs float64 `json:"meanMs"`
	P50Ms  float64 `json:"p50Ms"`
}

// ThroughputRow is one subject's throughput; Ratio is subject/bare.
type ThroughputRow struct {
	Subject     string  `json:"subject"`
	Calls       int     `json:"calls"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	PerSecond   float64 `json:"perSecond"`
	Ratio       float64 `json:"ratio"`
}

// InProcess compares toolcore.Execute of the no-op tool with a direct call of its function.
type InProcess struct {
	Direct  Op `json:"direct"`
	Execute Op `json:"execute"`
	// Ratio is Execute/Direct in ns per call.
	Ratio float64 `json:"ratio"`
	// OverheadNs is Execute - Direct in ns per call.
	OverheadNs float64 `json:"overheadNs"`
}

// Op is the cost of one in-process call.
type Op struct {
	Iterations    int     `json:"iterations"`
	NsPerCall     float64 `json:"nsPerCall"`
	AllocsPerCall float64 `json:"allocsPerCall"`
	BytesPerCall  float64 `json:"bytesPerCall"`
}

// InFlight is the in-flight phase: many sleep calls held running by one worker.
type InFlight struct {
	Calls int `json:"calls"`
	// Held is the most calls running at once; Lost counts calls that ended with an error result
	// instead of being released (their activity timed out: heartbeats late to the server).
	Held int `json:"held"`
	Lost int `json:"lost"`
	// Load is the number of busy processes that ran beside the server meanwhile (Config.Load).
	Load int `json:"load,omitempty"`
	// FillSeconds is the time from the first start to every call running (or lost).
	FillSeconds float64 `json:"fillSeconds"`
	// RSS of the whole process (server, workers, client): before the phase, while the calls are
	// held, and the peak during the phase (PeakSource: "VmHWM" after a reset, or "sampled VmRSS").
	RSSBeforeMiB float64 `json:"rssBeforeMiB"`
	RSSHeldMiB   float64 `json:"rssHeldMiB"`
	PeakRSSMiB   float64 `json:"peakRssMiB"`
	PeakSource   string  `json:"peakSource"`
	// KiBPerCall is (RSS held - RSS before) / Held. ReturnedKiBPerCall is the same once the Go
	// runtime has returned its free pages to the system, before and held: what the held calls
	// keep resident under memory pressure or a GOMEMLIMIT.
	KiBPerCall         float64 `json:"kibPerCall"`
	ReturnedKiBPerCall float64 `json:"returnedKibPerCall"`
	// GoHeapHeldMiB is the Go heap in use while held.
	GoHeapHeldMiB float64 `json:"goHeapHeldMiB"`
	// What one held call adds, from the Go runtime after a GC (held minus before, per held
	// call): live heap, goroutine stacks, and goroutines. The rest of KiBPerCall is the heap's
	// headroom (GOGC) and memory the runtime has not yet returned to the system.
	LiveHeapKiBPerCall float64 `json:"liveHeapKibPerCall"`
	StackKiBPerCall    float64 `json:"stackKibPerCall"`
	GoroutinesPerCall  float64 `json:"goroutinesPerCall"`
	// The rest of what the Go runtime holds, per held call after a GC: free space inside heap
	// spans that still hold live objects (fragmentation: it cannot be returned), free heap not
	// yet returned to the system, and runtime metadata; then the anonymous resident memory the
	// Go runtime does not account for (the embedded SQLite's heap: an in-memory store's rows, a
	// file store's page cache), and the resident pages of mapped files and shared memory (a file
	// store's WAL index; Linux only, else 0).
	HeapUnusedKiBPerCall   float64 `json:"heapUnusedKibPerCall"`
	HeapFreeKiBPerCall     float64 `json:"heapFreeKibPerCall"`
	RuntimeOtherKiBPerCall float64 `json:"runtimeOtherKibPerCall"`
	OutsideGoKiBPerCall    float64 `json:"outsideGoKibPerCall"`
	MappedKiBPerCall       float64 `json:"mappedKibPerCall"`
	// Probe is the latency of sequential no-op calls made while the calls were held;
	// ProbeRatioP50 divides its p50 by toolgate's idle p50 of the latency phase.
	Probe         Latencies `json:"probe"`
	IdleP50Ms     float64   `json:"idleP50Ms"`
	ProbeRatioP50 float64   `json:"probeRatioP50"`
	// DrainSeconds is the time from release to every call's result.
	DrainSeconds float64 `json:"drainSeconds"`
}

// Cancel is the cancel phase: tick calls (progress every second, default options) canceled while
// running.
type Cancel struct {
	Calls   int     `json:"calls"`
	Seconds float64 `json:"seconds"`
	// Closed is the time from the cancel request to the workflow closed Canceled.
	Closed Latencies `json:"closed"`
	// Progress is the time from a progress report in the tool to a caller polling every 25 ms
	// seeing it.
	Progress Latencies `json:"progress"`
	// Segments split Closed by the events of the calls' histories (means and medians).
	Segments []Segment `json:"segments"`
}

// HistoryRow is the history of one call: Case "success" or "error".
type HistoryRow struct {
	Subject string   `json:"subject"`
	Case    string   `json:"case"`
	Events  int      `json:"events"`
	Bytes   int      `json:"bytes"`
	Types   []string `json:"types"`
	// RatioEvents and RatioBytes divide by bare's row of the same case.
	RatioEvents float64 `json:"ratioEvents"`
	RatioBytes  float64 `json:"ratioBytes"`
}

// History cases.
const (
	CaseSuccess = "success"
	CaseError   = "error"
)

// LatencyOf returns the latency row of subject.
func (r Report) LatencyOf(subject string) (LatencyRow, bool) {
	i := slices.IndexFunc(r.Latency, func(row LatencyRow) bool { return row.Subject == subject })
	if i < 0 {
		return LatencyRow{}, false
	}
	return r.Latency[i], true
}

// ThroughputOf returns the throughput row of subject.
func (r Report) ThroughputOf(subject string) (ThroughputRow, bool) {
	i := slices.IndexFunc(r.Throughput, func(row ThroughputRow) bool { return row.Subject == subject })
	if i < 0 {
		return ThroughputRow{}, false
	}
	return r.Throughput[i], true
}

// Check reports what is missing from r: a row per subject in every per-subject phase, every
// figure measured (non-zero where a real measurement cannot be zero), and the machine described.
// It says nothing about whether a figure is good.
func (r Report) Check() error {
	var errs []error
	missing := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	ran := func(phase string) bool {
		return len(r.Settings.Phases) == 0 || slices.Contains(r.Settings.Phases, phase)
	}
	m := r.Machine
	if m.Date == "" || m.GoVersion == "" || m.OS == "" || m.Arch == "" || m.CPUs <= 0 || m.GOMAXPROCS <= 0 || m.CPUModel == "" {
		missing("machine: incomplete %+v", m)
	}
	if r.Server == "" {
		missing("server: empty")
	}
	subjects := r.Settings.Subjects
	if len(subjects) == 0 || !slices.Contains(subjects, Baseline) {
		missing("settings: subjects %v lack the baseline %q", subjects, Baseline)
	}
	for _, s := range subjects {
		if row, ok := r.LatencyOf(s); ran(PhaseLatency) && (!ok || row.N != r.Settings.Calls || row.P50Ms <= 0 || row.P95Ms < row.P50Ms ||
			row.P99Ms < row.P95Ms || row.RatioP50 <= 0 || row.RatioP95 <= 0 || row.RatioP99 <= 0) {
			missing("latency: subject %q: incomplete %+v", s, row)
		}
		if row, ok := r.ThroughputOf(s); ran(PhaseThroughput) && (!ok || row.Calls != r.Settings.ThroughputCalls || row.PerSecond <= 0 || row.Ratio <= 0) {
			missing("throughput: subject %q: incomplete %+v", s, row)
		}
		i := slices.IndexFunc(r.Breakdown, func(b BreakdownRow) bool { return b.Subject == s })
		if ran(PhaseLatency) && (i < 0 || r.Breakdown[i].Calls <= 0 || len(r.Breakdown[i].Segments) == 0) {
			missing("breakdown: subject %q: missing", s)
		}
		for _, c := range []string{CaseSuccess, CaseError} {
			j := slices.IndexFunc(r.History, func(h HistoryRow) bool { return h.Subject == s && h.Case == c })
			if ran(PhaseHistory) && (j < 0 || r.History[j].Events <= 0 || r.History[j].Bytes <= 0 || r.History[j].RatioEvents <= 0) {
				missing("history: subject %q case %q: missing", s, c)
			}
		}
	}
	if row, ok := r.LatencyOf(Baseline); ok && (row.RatioP50 != 1 || row.RatioP95 != 1 || row.RatioP99 != 1) {
		missing("latency: the baseline's ratios are not 1: %+v", row)
	}
	if ran(PhaseLatency) && r.CPU.Error == "" && (len(r.CPU.Components) == 0 || r.CPU.WallSeconds <= 0) {
		missing("cpu: no profile and no reason")
	}
	ip := r.InProcess
	if ran(PhaseInProcess) && (ip.Direct.Iterations <= 0 || ip.Execute.Iterations <= 0 || ip.Direct.NsPerCall <= 0 || ip.Execute.NsPerCall <= 0 || ip.Ratio <= 0) {
		missing("in-process: incomplete %+v", ip)
	}
	if c := r.Cancel; ran(PhaseCancel) && (c.Calls != r.Settings.Cancels || c.Closed.N != c.Calls || c.Closed.P50Ms <= 0 || c.Progress.N < c.Calls) {
		missing("cancel: incomplete %+v", c)
	}
	if ran(PhaseMCP) {
		if err := r.MCP.check(r.Settings.MCPCalls); err != nil {
			errs = append(errs, err)
		}
	}
	f := r.InFlight
	if ran(PhaseInFlight) && (f.Calls != r.Settings.InFlight || f.Held <= 0 || f.Held > f.Calls || f.Lost < 0 || f.Lost > f.Calls || f.Probe.N != r.Settings.Probes || f.RSSBeforeMiB <= 0 || f.RSSHeldMiB <= 0 ||
		f.PeakRSSMiB <= 0 || f.PeakSource == "" || f.GoHeapHeldMiB <= 0 || (ran(PhaseLatency) && f.IdleP50Ms <= 0) || (ran(PhaseLatency) && f.ProbeRatioP50 <= 0) || f.FillSeconds <= 0 || f.DrainSeconds <= 0) {
		missing("in-flight: incomplete %+v", f)
	}
	for phase, check := range map[string]func() error{PhaseRounds: r.checkRounds, PhaseSchema: r.checkSchema, PhaseCost: r.checkCost} {
		if !ran(phase) {
			continue
		}
		if err := check(); err != nil {
			errs = append(errs, err)
		}
	}
	if r.ElapsedSeconds <= 0 {
		missing("elapsed: not measured")
	}
	return errors.Join(errs...)
}
