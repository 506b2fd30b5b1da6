package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/bench"
	"github.com/toolgate/toolgate/toolcore"
)

type benchOptions struct {
	address       string
	dataDir       string
	namespace     string
	subjects      []string
	phases        []string
	short         bool
	json          bool
	cpuProfile    string
	heldProfile   string
	progress      string
	dynamicConfig []string
	cfg           bench.Config
	workflowCache int
	burn          bool
}

func newBenchCommand(a *app) *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure what durability costs: toolgate against a bare Temporal workflow, side by side",
		Long: `Measure toolgate's durable path against the least a Temporal user would write for the same
job (a workflow running one no-op activity), in this process, on one server, in one run, and
print the ratios (absolute times on a shared machine are noise; ratios taken side by side are not):

  latency      sequential no-op calls: p50, p95, p99 and toolgate/bare ratios (goal p50 <= 1.10)
  breakdown    where a call's time goes, from the event times of the calls' histories
  throughput   concurrent callers: calls per second and the ratio (goal >= 0.90)
  in process   toolcore.Execute against a direct function call: ns and allocations per call
  in flight    1000 sleep calls held by one worker: RSS of the process, no-op latency meanwhile
  history      events and bytes of a successful and of a failing call
  cancel       tick calls (progress every second) canceled while running: progress delay and
               cancel request to workflow closed Canceled (goal p99 <= 1.5 s)
  rounds       a round of 8 calls in parallel and in sequence against one call (goal: parallel
               <= 1.5x one call), and calls from an agent workflow: as child workflows
               (workflows.ExecuteRound) and inline (workflows.Inline, the agent on the toolgate
               worker) against the same tool as plain activities (goal: inline <= 1.2x them)
  schema       in process: validating one call against a 10-field schema (goal < 20 us)
  cost         billable actions (Temporal Cloud) per call, from the histories and the heartbeat
               RPCs sent: toolgate, bare, bare-eager, and from an agent workflow a child call,
               a plain activity, an inline call (workflows.Inline), rounds of 8; and an idle held
               call's actions per minute (held --cost-hold; goals: standalone <= 2, inline 1,
               held <= 2 a minute)

--phases runs some of them (default all).

The subjects: toolgate (client.Execute with its defaults), bare (ExecuteWorkflow of a workflow
running one activity, then Get) and bare-eager (the same with EnableEagerStart, which toolgate
uses). They run interleaved (blocks of --block calls, the order rotated every round) after a
warm-up, so that drift of a shared machine lands on all of them alike. Optional subjects isolate
one choice: toolgate-noeager (eager start off), toolgate-nosa (no search attributes), bare-local
(the activity as a local activity: one workflow task, no activity task), bare-noeageract (eager
activity dispatch off).

Without --address it starts its own embedded Temporal server (the same tuning as toolgate dev;
in memory, or in SQLite files in a new or empty --data-dir, as toolgate dev keeps them) and stops
it at the end; with --address it measures that server (it starts its own workers there on fresh
task queues, and leaves its calls in the namespace). Progress goes to stderr, the table (or
--json) to stdout. The defaults take about a minute on two cores; --short runs every phase with
tiny counts (seconds), as make test does.`,
		Example: `  toolgate bench
  toolgate bench --json > bench.json
  toolgate bench --subjects toolgate,bare,bare-eager,toolgate-noeager,bare-local --cpuprofile cpu.out
  toolgate bench --short`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.burn {
				burn(cmd.Context())
				return nil
			}
			return runBench(cmd.Context(), a, cmd, o)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&o.cfg.Load, "load", 0, "in flight: busy processes (each spinning one core) running beside the server while the calls are held")
	fs.BoolVar(&o.burn, "burn", false, "spin one core until killed (one process of --load)")
	_ = fs.MarkHidden("burn")
	fs.StringVar(&o.address, "address", "", "Temporal frontend host:port to measure (default: start an embedded in-memory server)")
	fs.StringVar(&o.dataDir, "data-dir", "", "keep the embedded server's state in SQLite files in this directory (new or empty; left in place), as toolgate dev does, instead of in memory")
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "namespace (with --address)")
	fs.StringSliceVar(&o.subjects, "subjects", bench.DefaultSubjects(), "subjects to compare: "+strings.Join(bench.KnownSubjects(), ", ")+" (bare is always added)")
	fs.StringSliceVar(&o.phases, "phases", bench.Phases(), "phases to run: "+strings.Join(bench.Phases(), ", "))
	fs.BoolVar(&o.short, "short", false, "every phase with tiny counts (for tests); explicit count flags still win")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON instead of tables")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the latency phase to this file (go tool pprof)")
	fs.StringVar(&o.heldProfile, "heldprofile", "", "while the in-flight calls are held, write heap and goroutine profiles to this file with suffixes .heap and .goroutine (go tool pprof)")
	addDynamicConfigFlag(cmd, &o.dynamicConfig)
	addWorkflowCacheFlag(cmd, &o.workflowCache)
	fs.BoolVar(&o.cfg.NoGzip, "no-gzip", false, "the bench's Temporal client sends and receives gRPC messages uncompressed (the SDK gzips them by default)")
	fs.StringVar(&o.progress, "progress", string(progressAuto), "progress on stderr: auto (one redrawn line on a terminal, else a line per phase), bar, plain, off")
	fs.IntVar(&o.cfg.Calls, "calls", bench.DefaultCalls, "latency: measured sequential calls per subject")
	fs.IntVar(&o.cfg.Warmup, "warmup", bench.DefaultWarmup, "unmeasured calls per subject first")
	fs.IntVar(&o.cfg.Block, "block", bench.DefaultBlock, "latency: consecutive calls of one subject before the next subject's turn")
	fs.IntVar(&o.cfg.Concurrency, "concurrency", bench.DefaultConcurrency, "throughput: concurrent callers")
	fs.IntVar(&o.cfg.ThroughputCalls, "throughput-calls", bench.DefaultThroughputCalls, "throughput: calls per subject")
	fs.IntVar(&o.cfg.ThroughputBlocks, "throughput-blocks", bench.DefaultThroughputBlocks, "throughput: alternating blocks per subject")
	fs.IntVar(&o.cfg.InFlight, "in-flight", bench.DefaultInFlight, "in flight: sleep calls held running at once")
	fs.IntVar(&o.cfg.Probes, "probes", bench.DefaultProbes, "in flight: no-op calls made while they are held")
	fs.IntVar(&o.cfg.Cancels, "cancels", bench.DefaultCancels, "cancel: running tick calls canceled (progress and cancellation delays)")
	fs.IntVar(&o.cfg.MCPCalls, "mcp-calls", bench.DefaultMCPCalls, "mcp: tools/call over streamable HTTP against client.Execute, measured calls each")
	fs.IntVar(&o.cfg.Rounds, "rounds", bench.DefaultRounds, "rounds: runs of each round shape (client and agent-workflow rounds)")
	fs.IntVar(&o.cfg.CostRuns, "cost-runs", bench.DefaultCostRuns, "cost: runs of each shape whose billable actions are counted")
	fs.DurationVar(&o.cfg.CostHold, "cost-hold", bench.DefaultCostHold, "cost: how long an idle call is held to count its heartbeats (over a minute measures a minute directly)")
	fs.DurationVar(&o.cfg.InFlightHeartbeat, "in-flight-heartbeat", toolcore.DefaultHeartbeatTimeout, "in flight: HeartbeatTimeout of the sleep tool (an idle held call heartbeats every half of this, at most every 30 s where the server pushes cancellation, every 5 s where it does not)")
	fs.DurationVar(&o.cfg.InProcessTime, "in-process-time", bench.DefaultInProcessTime, "in process: how long each function is timed")
	return cmd
}

// shortened applies bench.Short to the count flags the command line left alone.
func (o benchOptions) shortened(cmd *cobra.Command) bench.Config {
	cfg := o.cfg
	if !o.short {
		return cfg
	}
	short := bench.Short()
	fs := cmd.Flags()
	for flag, pair := range map[string][2]*int{
		"calls":             {&cfg.Calls, &short.Calls},
		"warmup":            {&cfg.Warmup, &short.Warmup},
		"block":             {&cfg.Block, &short.Block},
		"concurrency":       {&cfg.Concurrency, &short.Concurrency},
		"throughput-calls":  {&cfg.ThroughputCalls, &short.ThroughputCalls},
		"throughput-blocks": {&cfg.ThroughputBlocks, &short.ThroughputBlocks},
		"in-flight":         {&cfg.InFlight, &short.InFlight},
		"probes":            {&cfg.Probes, &short.Probes},
		"cancels":           {&cfg.Cancels, &short.Cancels},
		"mcp-calls":         {&cfg.MCPCalls, &short.MCPCalls},
		"rounds":            {&cfg.Rounds, &short.Rounds},
		"cost-runs":         {&cfg.CostRuns, &short.CostRuns},
	} {
		if !fs.Changed(flag) {
			*pair[0] = *pair[1]
		}
	}
	if !fs.Changed("in-process-time") {
		cfg.InProcessTime = short.InProcessTime
	}
	if !fs.Changed("cost-hold") {
		cfg.CostHold = short.CostHold
	}
	cfg.BreakdownSample = short.BreakdownSample
	return cfg
}

// burn spins one core until ctx ends or the process is killed: one busy process of --load.
func burn(ctx context.Context) {
	for n := 0; ; n++ {
		if n%(1<<20) == 0 && ctx.Err() != nil {
			return
		}
	}
}

func runBench(ctx context.Context, a *app, cmd *cobra.Command, o benchOptions) error {
	mode, err := resolveBenchProgress(progressMode(o.progress), a.err)
	if err != nil {
		return badInput(err)
	}
	if o.cfg.Load < 0 {
		return badInput(fmt.Errorf("--load %d: want 0 or more busy processes", o.cfg.Load))
	}
	if o.cfg.Load > 0 {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("--load: find this executable: %w", err)
		}
		o.cfg.LoadCommand = func() *exec.Cmd { return exec.Command(self, "bench", "--burn") }
	}
	for _, s := range o.subjects {
		if !slices.Contains(bench.KnownSubjects(), s) {
			return badInput(fmt.Errorf("unknown subject %q (known: %s)", s, strings.Join(bench.KnownSubjects(), ", ")))
		}
	}
	for _, p := range o.phases {
		if !slices.Contains(bench.Phases(), p) {
			return badInput(fmt.Errorf("unknown phase %q (known: %s)", p, strings.Join(bench.Phases(), ", ")))
		}
	}
	if o.address != "" && o.dataDir != "" {
		return badInput(errors.New("--data-dir sets the embedded server's store: not with --address"))
	}
	if err := checkBenchDataDir(o.dataDir); err != nil {
		return badInput(err)
	}
	if o.address != "" && len(o.dynamicConfig) > 0 {
		return badInput(errors.New("--dynamic-config-value sets the embedded server's config: not with --address"))
	}
	dynamicConfig, err := parseDynamicConfig(o.dynamicConfig)
	if err != nil {
		return err
	}
	if err := applyWorkflowCache(o.workflowCache); err != nil {
		return err
	}
	cfg := o.shortened(cmd)
	cfg.Subjects = o.subjects
	cfg.Phases = o.phases
	cfg.Namespace = o.namespace
	// The workers' and the SDK's lines would interleave with the progress: warnings and up only.
	cfg.Logger = a.logger.WithOptions(zap.IncreaseLevel(zapcore.WarnLevel))

	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return badInput(fmt.Errorf("create CPU profile: %w", err))
		}
		defer f.Close()
		cfg.CPUProfile = f
	}

	if o.heldProfile != "" {
		heap, err := os.Create(o.heldProfile + ".heap")
		if err != nil {
			return badInput(fmt.Errorf("create heap profile: %w", err))
		}
		defer heap.Close()
		goroutines, err := os.Create(o.heldProfile + ".goroutine")
		if err != nil {
			return badInput(fmt.Errorf("create goroutine profile: %w", err))
		}
		defer goroutines.Close()
		before, err := os.Create(o.heldProfile + ".before.heap")
		if err != nil {
			return badInput(fmt.Errorf("create heap profile: %w", err))
		}
		defer before.Close()
		runtime.MemProfileRate = 4096 // fine enough to see what one held call allocates
		cfg.HeldProfile = bench.HeldProfile{Before: before, Heap: heap, Goroutines: goroutines}
	}

	view := &benchProgress{w: a.err, mode: mode}
	cfg.Progress = view.show
	cfg.Address, cfg.Server = o.address, o.address
	if o.address == "" {
		view.show(bench.Progress{Phase: "server"})
		quiet := zapcore.ErrorLevel
		srv, err := startEmbedded(ctx, embeddedOptions{
			Logger:         cfg.Logger,
			ServerLogLevel: &quiet,
			DynamicConfig:  dynamicConfig,
			DataDir:        o.dataDir,
		})
		if err != nil {
			return fmt.Errorf("start embedded server: %w", err)
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				a.logger.Warn("stop embedded server", zap.Error(err))
			}
		}()
		cfg.Address, cfg.Namespace = srv.FrontendAddress(), srv.Namespace()
		store := "in-memory SQLite"
		if o.dataDir != "" {
			store = "SQLite files in " + o.dataDir
		}
		cfg.Server = "embedded " + srv.FrontendAddress() + " (" + store + ", toolgate dev tuning)"
	}

	rep, err := bench.Run(ctx, cfg)
	view.finish()
	// A failed run still prints what it measured before the failure: the phases that are there
	// are complete, and the partial figures say how far the server kept up.
	if rep.Machine.Date != "" { // empty when the configuration was refused
		if perr := printReport(a.out, rep, o.json); perr != nil {
			return errors.Join(err, perr)
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return &exitError{code: ExitCanceled, err: fmt.Errorf("bench: %w", context.Cause(ctx))}
	case err != nil:
		return fmt.Errorf("bench (the phases before the failure are printed): %w", err)
	}
	return nil
}

// checkBenchDataDir refuses a --data-dir that holds anything: the bench measures a fresh store,
// as its in-memory one is, and leaves an existing one alone.
func checkBenchDataDir(dir string) error {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--data-dir: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("--data-dir %s is not empty: give a new or empty directory (the bench measures a fresh store)", dir)
	}
	return nil
}

func printReport(w io.Writer, rep bench.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(w)
}

// resolveBenchProgress is resolveProgressMode, except that auto on a non-terminal is plain: the
// bench runs for a minute and should say what it is doing in a log too.
func resolveBenchProgress(m progressMode, w io.Writer) (progressMode, error) {
	if m == progressAuto && !isTerminal(w) {
		return progressPlain, nil
	}
	return resolveProgressMode(m, w)
}

// benchRedraw bounds how often the bar is redrawn.
const benchRedraw = 100 * time.Millisecond

// benchProgress shows bench.Progress on stderr: one redrawn line (bar), a line per phase
// (plain), or nothing. Safe for concurrent use (the bench reports from several goroutines).
type benchProgress struct {
	mu      sync.Mutex
	w       io.Writer
	mode    progressMode
	phase   string
	began   time.Time
	drawn   time.Time
	visible bool // a bar line is on screen
}

func (v *benchProgress) show(p bench.Progress) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := time.Now()
	if p.Phase != v.phase {
		v.endPhase(now)
		v.phase, v.began = p.Phase, now
		if v.mode == progressPlain && p.Phase != "done" {
			fmt.Fprintf(v.w, "bench: %s%s\n", p.Phase, totalText(p))
		}
	}
	if v.mode != progressBar || (now.Sub(v.drawn) < benchRedraw && p.Done != p.Total) {
		return
	}
	v.drawn = now
	line := "bench: " + p.Phase
	if p.Total > 0 {
		line += fmt.Sprintf(" %d/%d", p.Done, p.Total)
	}
	fmt.Fprintf(v.w, "\r\x1b[K%s", line)
	v.visible = true
}

// endPhase closes the current phase's line; v.mu is held.
func (v *benchProgress) endPhase(now time.Time) {
	if v.phase == "" {
		return
	}
	took := now.Sub(v.began).Round(100 * time.Millisecond)
	switch v.mode {
	case progressBar:
		fmt.Fprintf(v.w, "\r\x1b[Kbench: %s done in %s\n", v.phase, took)
		v.visible = false
	case progressPlain:
		fmt.Fprintf(v.w, "bench: %s done in %s\n", v.phase, took)
	}
}

// finish clears a bar left on screen.
func (v *benchProgress) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.visible {
		fmt.Fprint(v.w, "\r\x1b[K")
		v.visible = false
	}
}

func totalText(p bench.Progress) string {
	if p.Total == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d)", p.Total)
}
