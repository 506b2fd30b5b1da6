package bench

import (
	"fmt"
	"io"
	"os/exec"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/toolgate/toolgate/toolcore"
)

// Subject names.
const (
	SubjectToolgate        = "toolgate"
	SubjectBare            = "bare"
	SubjectBareEager       = "bare-eager"
	SubjectToolgateNoEager = "toolgate-noeager"
	SubjectToolgateNoSA    = "toolgate-nosa"
	SubjectBareLocal       = "bare-local"
	SubjectBareNoEagerAct  = "bare-noeageract"
)

// Baseline is the subject every ratio divides by.
const Baseline = SubjectBare

// Performance goals of the project, printed beside the ratios (never asserted).
const (
	// GoalLatencyP50 is the highest acceptable toolgate/bare ratio of p50 latency.
	GoalLatencyP50 = 1.10
	// GoalThroughput is the lowest acceptable toolgate/bare ratio of calls per second.
	GoalThroughput = 0.90
)

// Defaults of Config: about a minute on two cores.
const (
	DefaultNamespace        = "default"
	DefaultCalls            = 200
	DefaultWarmup           = 30
	DefaultBlock            = 1
	DefaultConcurrency      = 8
	DefaultThroughputCalls  = 320
	DefaultThroughputBlocks = 8
	DefaultInFlight         = 1000
	DefaultProbes           = 20
	DefaultCancels          = 30
	DefaultInProcessTime    = 300 * time.Millisecond
	DefaultBreakdownSample  = 100
)

// DefaultSubjects are measured when Config.Subjects is empty: toolgate, the least a Temporal
// user writes, the same with eager start (the like-for-like baseline of toolgate, which starts
// eagerly), and toolgate's Local fast path.
func DefaultSubjects() []string {
	return []string{SubjectToolgate, SubjectBare, SubjectBareEager, SubjectToolgateLocal}
}

// KnownSubjects lists every subject name Run accepts.
func KnownSubjects() []string {
	return []string{SubjectToolgate, SubjectBare, SubjectBareEager, SubjectToolgateLocal, SubjectToolgateNoEager, SubjectToolgateNoSA, SubjectBareLocal, SubjectBareNoEagerAct, SubjectToolgateFairness, SubjectToolgateRateLimited}
}

// Phase names, for Config.Phases (`toolgate bench --phases`).
const (
	PhaseInProcess  = "in-process"
	PhaseSchema     = "schema"
	PhaseLatency    = "latency" // with the breakdown, the RPC split and the CPU profile
	PhaseThroughput = "throughput"
	PhaseHistory    = "history"
	PhaseCancel     = "cancel"
	PhaseMCP        = "mcp"
	PhaseRounds     = "rounds"
	PhaseCost       = "cost"
	PhaseInFlight   = "in-flight"
)

// Phases lists every phase in the order Run runs them.
func Phases() []string {
	return []string{PhaseInProcess, PhaseSchema, PhaseLatency, PhaseThroughput, PhaseHistory, PhaseCancel,
		PhaseMCP, PhaseRounds, PhaseCost, PhaseInFlight}
}

// Config says what to measure. It works at its zero value except for Address.
type Config struct {
	// Address is the Temporal frontend host:port. Required.
	Address string
	// Namespace on that server. Optional: default "default".
	Namespace string
	// NoGzip turns off the gzip compression of gRPC messages the SDK client does by default.
	// Optional: default false (compressed, as a client dialed with the SDK's defaults).
	NoGzip bool
	// Server describes the server for the report, e.g. "embedded (in-memory SQLite)".
	// Optional: default Address.
	Server string
	// Subjects to measure; the baseline "bare" is added when missing. Optional: default
	// DefaultSubjects.
	Subjects []string
	// Phases to run (Phases names). Optional: default all. The comparisons need latency and
	// throughput both.
	Phases []string

	// Calls is the number of measured sequential calls per subject. Optional: default 200.
	Calls int
	// Warmup is the number of unmeasured calls per subject before anything is measured.
	// Optional: default 30.
	Warmup int
	// Block is the number of consecutive calls of one subject in the latency phase: 1 alternates
	// call by call, which cancels drift best. Optional: default 1.
	Block int
	// Concurrency is the number of concurrent callers of the throughput phase. Optional:
	// default 8.
	Concurrency int
	// ThroughputCalls per subject. Optional: default 320.
	ThroughputCalls int
	// ThroughputBlocks per subject (alternating). Optional: default 8.
	ThroughputBlocks int
	// InFlight is the number of sleep calls held running at once. Optional: default 1000.
	InFlight int
	// Probes is the number of no-op calls made while they are held. Optional: default 20.
	Probes int
	// Cancels is the number of running tick calls the cancel phase cancels. Optional: default 30.
	Cancels int
	// MCPCalls is the number of measured calls per side of the MCP phase. Optional: default
	// DefaultMCPCalls.
	MCPCalls int
	// Rounds is how many times the rounds phase measures each round shape. Optional: default
	// DefaultRounds.
	Rounds int
	// CostRuns is how many times the cost phase runs each shape. Optional: default
	// DefaultCostRuns.
	CostRuns int
	// CostHold is how long the cost phase holds an idle call. Optional: default DefaultCostHold.
	CostHold time.Duration
	// InFlightHeartbeat is the HeartbeatTimeout of the sleep tool: every held call heartbeats
	// every half of this when idle (at most every 30 s where the server pushes cancellation,
	// every 5 s where it does not), and is lost when no heartbeat reaches the server within it.
	// Optional: default toolcore.DefaultHeartbeatTimeout (1 minute), what a tool gets.
	InFlightHeartbeat time.Duration
	// Load is how many busy processes (CPU hogs, each spinning one core) run beside the server
	// while the in-flight calls fill and are held, to see what a loaded machine loses. Each is
	// LoadCommand(); Load > 0 needs it. Optional: default 0 (no load).
	Load int
	// LoadCommand returns the command of one busy process (cmd/toolgate: itself with the hidden
	// bench --burn). Optional: required only with Load > 0.
	LoadCommand func() *exec.Cmd
	// InProcessTime is how long each in-process function is timed. Optional: default 300 ms.
	InProcessTime time.Duration
	// BreakdownSample bounds the histories read for the breakdown, per subject. Optional:
	// default 100.
	BreakdownSample int

	// CPUProfile receives a CPU profile of the latency phase. Optional: default none.
	CPUProfile io.Writer
	// HeldProfile receives profiles taken while the in-flight calls are held. Optional:
	// default none.
	HeldProfile HeldProfile
	// Progress is called as phases advance, from Run's goroutines (serialize it if needed).
	// Optional: default none.
	Progress func(Progress)
	// Logger receives the workers' and the SDK's lines. Optional: default zap.NewNop().
	Logger *zap.Logger
}

// HeldProfile are the writers of the profiles the in-flight phase takes while its calls are held
// (after a GC): what a held call costs. Each is optional.
type HeldProfile struct {
	Before     io.Writer // pprof heap profile before the calls start (a -diff_base for Heap)
	Heap       io.Writer // pprof heap profile (in-use and allocated)
	Goroutines io.Writer // pprof goroutine profile
}

// Short returns the configuration of the short mode: every phase, tiny figures (seconds).
func Short() Config {
	return Config{
		Calls:            6,
		Warmup:           2,
		Block:            1,
		Concurrency:      2,
		ThroughputCalls:  8,
		ThroughputBlocks: 2,
		InFlight:         20,
		Probes:           3,
		Cancels:          2,
		MCPCalls:         3,
		Rounds:           1,
		CostRuns:         1,
		CostHold:         time.Second,
		InProcessTime:    10 * time.Millisecond,
		BreakdownSample:  6,
	}
}

// Progress reports how far a phase is.
type Progress struct {
	// Phase is, in order, "in-process", "schema", "setup", "warmup", "latency", "breakdown",
	// "throughput", "history", "cancel", "mcp", "rounds", "cost", "in-flight" (filling), "probe",
	// "drain", then "done" (the phases of Config.Phases).
	Phase string
	// Done of Total steps (calls, mostly). Total 0: the phase has no count.
	Done, Total int
}

// withDefaults returns c with defaults applied, or an error for invalid values.
func (c Config) withDefaults() (Config, error) {
	if c.Address == "" {
		return c, fmt.Errorf("check config: no frontend address")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.Server == "" {
		c.Server = c.Address
	}
	def(&c.Calls, DefaultCalls)
	def(&c.Warmup, DefaultWarmup)
	def(&c.Block, DefaultBlock)
	def(&c.Concurrency, DefaultConcurrency)
	def(&c.ThroughputCalls, DefaultThroughputCalls)
	def(&c.ThroughputBlocks, DefaultThroughputBlocks)
	def(&c.InFlight, DefaultInFlight)
	def(&c.Probes, DefaultProbes)
	def(&c.Cancels, DefaultCancels)
	def(&c.MCPCalls, DefaultMCPCalls)
	def(&c.Rounds, DefaultRounds)
	def(&c.CostRuns, DefaultCostRuns)
	if c.CostHold <= 0 {
		c.CostHold = DefaultCostHold
	}
	if len(c.Phases) == 0 {
		c.Phases = Phases()
	}
	for _, p := range c.Phases {
		if !slices.Contains(Phases(), p) {
			return c, fmt.Errorf("check config: unknown phase %q (known: %v)", p, Phases())
		}
	}
	def(&c.BreakdownSample, DefaultBreakdownSample)
	if c.InProcessTime <= 0 {
		c.InProcessTime = DefaultInProcessTime
	}
	if c.InFlightHeartbeat <= 0 {
		c.InFlightHeartbeat = toolcore.DefaultHeartbeatTimeout
	}
	c.ThroughputBlocks = min(c.ThroughputBlocks, c.ThroughputCalls)
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Progress == nil {
		c.Progress = func(Progress) {}
	}
	subjects, err := checkSubjects(c.Subjects)
	if err != nil {
		return c, err
	}
	c.Subjects = subjects
	return c, nil
}

// checkSubjects returns the subjects without duplicates, baseline included, or an error naming
// an unknown one.
func checkSubjects(names []string) ([]string, error) {
	if len(names) == 0 {
		names = DefaultSubjects()
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(KnownSubjects(), n) {
			return nil, fmt.Errorf("check config: unknown subject %q (known: %v)", n, KnownSubjects())
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if !slices.Contains(out, Baseline) {
		out = append(out, Baseline)
	}
	return out, nil
}
