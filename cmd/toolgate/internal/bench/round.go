package bench

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// The rounds phase: a model turn's calls, from a client and from an agent workflow.
const (
	// DefaultRounds is how many times each round shape is measured.
	DefaultRounds = 20
	// RoundSize is the number of calls of a round.
	RoundSize = 8
	// GoalRoundParallel is the highest acceptable p50 of a parallel round of RoundSize calls,
	// as a multiple of one call's p50 (both through the client).
	GoalRoundParallel = 1.5
	// GoalInline is the highest acceptable ratio of an inline call (or round) to the same as
	// plain activities of the agent workflow, in wall time and in CPU (issue 27).
	GoalInline = 1.2
)

// Round shape names: who issues the calls, how many, and how they run.
const (
	ShapeClientOne        = "client: 1 call"
	ShapeClientParallel   = "client: round of 8, parallel"
	ShapeClientSequential = "client: round of 8, sequential"
	ShapeAgentEmpty       = "agent workflow: no call"
	ShapeAgentChildOne    = "agent workflow: 1 child workflow"
	ShapeAgentChildRound  = "agent workflow: round of 8 child workflows"
	ShapeAgentActOne      = "agent workflow: 1 activity"
	ShapeAgentActRound    = "agent workflow: 8 activities in parallel"
	ShapeAgentInlineOne   = "agent workflow: 1 inline call"
	ShapeAgentInlineRound = "agent workflow: round of 8 inline calls"
)

// roundShapes lists the shapes in report order.
func roundShapes() []string {
	return []string{ShapeClientOne, ShapeClientParallel, ShapeClientSequential,
		ShapeAgentEmpty, ShapeAgentChildOne, ShapeAgentChildRound, ShapeAgentActOne, ShapeAgentActRound,
		ShapeAgentInlineOne, ShapeAgentInlineRound}
}

// Rounds is the rounds phase: every shape measured Repeats times, shapes interleaved with the
// order rotated every repetition.
type Rounds struct {
	Repeats int          `json:"repeats"`
	Shapes  []RoundShape `json:"shapes"`
	// ParallelRatio and SequentialRatio divide the client rounds' p50 by one client call's.
	ParallelRatio   float64 `json:"parallelRatio"`
	SequentialRatio float64 `json:"sequentialRatio"`
	// ChildPerCallMs and ActivityPerCallMs are the p50 of an agent run with one call less that of
	// an agent run with none: what one call adds to an agent workflow, as a child workflow and as
	// a plain activity. ChildRoundRatio divides the child round's p50 by the activity round's.
	ChildPerCallMs    float64 `json:"childPerCallMs"`
	ActivityPerCallMs float64 `json:"activityPerCallMs"`
	ChildRoundRatio   float64 `json:"childRoundRatio"`
	// InlineRatio and InlineRoundRatio divide the p50 of one inline call and of a round of 8
	// inline calls by the same as plain activities; InlineCPURatio and InlineRoundCPURatio divide
	// their CPU per run likewise (0 when the CPU time is unknown). Goal: at most GoalInline each.
	InlineRatio         float64 `json:"inlineRatio"`
	InlineRoundRatio    float64 `json:"inlineRoundRatio"`
	InlineCPURatio      float64 `json:"inlineCpuRatio"`
	InlineRoundCPURatio float64 `json:"inlineRoundCpuRatio"`
	// ParallelCPUFloor is the least ParallelRatio the process's CPU allows: the parallel round's
	// CPUMs spread over min(GOMAXPROCS, RoundSize) cores, divided by one call's p50 (0 when the
	// CPU time is unknown). When it exceeds GoalRoundParallel, CPU, not waiting, bounds the round.
	ParallelCPUFloor float64 `json:"parallelCpuFloor"`
}

// RoundShape is one shape's wall time per run, start to outcome(s).
type RoundShape struct {
	Shape string `json:"shape"`
	Calls int    `json:"calls"`
	Latencies
	// RatioP50 divides by the p50 of ShapeClientOne.
	RatioP50 float64 `json:"ratioP50"`
	// CPUMs is the mean CPU time the whole process (client, workers and, without --address, the
	// server) used per run; 0 when it cannot be read. A parallel round on C cores cannot take
	// less than CPUMs / C.
	CPUMs float64 `json:"cpuMs"`
}

// Of returns the row of shape.
func (r Rounds) Of(shape string) (RoundShape, bool) {
	for _, s := range r.Shapes {
		if s.Shape == shape {
			return s, true
		}
	}
	return RoundShape{}, false
}

// Agent workflow of the bench.
const (
	benchAgentWorkflowName = "BenchAgentWorkflow"
	benchAgentActivityName = "BenchAgentTool"
)

// agentMode says how the bench agent runs its calls.
type agentMode string

const (
	agentChild    agentMode = "child"
	agentActivity agentMode = "activity"
	agentInline   agentMode = "inline"
)

// benchAgentInput is the bench agent's input: Calls no-op calls run as Mode says.
type benchAgentInput struct {
	Mode             agentMode `json:"mode"`
	Calls            int       `json:"calls"`
	ToolTaskQueue    string    `json:"toolTaskQueue"`
	SearchAttributes bool      `json:"searchAttributes,omitempty"`
}

// benchAgentWorkflow runs one round of in.Calls no-op calls: as child workflows through
// workflows.ExecuteRound (toolgate's way), inline through workflows.Inline.ExecuteRound (the
// same steps in the agent's workflow code, ExecuteTool on the toolgate worker), or as plain
// activities that run the same tool (toolcore.Execute) in parallel (the way of agent
// integrations that make each tool an activity). It fails unless every call succeeds.
func benchAgentWorkflow(ctx workflow.Context, in benchAgentInput) (int, error) {
	calls := make([]toolcore.ToolCall, in.Calls)
	for i := range calls {
		c, err := toolcore.NewToolCall(fmt.Sprintf("c%d", i), toolNoop, []byte("{}"))
		if err != nil {
			return 0, err
		}
		calls[i] = c
	}
	switch in.Mode {
	case agentChild:
		ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{
			TaskQueue:        in.ToolTaskQueue,
			Scope:            workflow.GetInfo(ctx).WorkflowExecution.ID,
			SearchAttributes: in.SearchAttributes,
		})
		outcomes, err := workflows.ExecuteRound(ctx, calls, toolcore.RoundOptions{})
		if err != nil {
			return 0, err
		}
		for _, o := range outcomes {
			if o.Kind != toolcore.OutcomeResult || o.Result.IsError() {
				return 0, fmt.Errorf("call %s: %v", o.CallID, o.Kind)
			}
		}
	case agentInline:
		reg, err := inlineRegistry()
		if err != nil {
			return 0, err
		}
		inline := &workflows.Inline{Registry: reg, TaskQueue: in.ToolTaskQueue}
		outcomes, err := inline.ExecuteRound(ctx, calls, toolcore.RoundOptions{})
		if err != nil {
			return 0, err
		}
		for _, o := range outcomes {
			if o.Kind != toolcore.OutcomeResult || o.Result.IsError() {
				return 0, fmt.Errorf("call %s: %v", o.CallID, o.Kind)
			}
		}
	case agentActivity:
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		futures := make([]workflow.Future, len(calls))
		for i, c := range calls {
			futures[i] = workflow.ExecuteActivity(actx, benchAgentActivityName, c)
		}
		for i, f := range futures {
			var res toolcore.Result
			if err := f.Get(ctx, &res); err != nil {
				return 0, err
			}
			if res.IsError() {
				return 0, fmt.Errorf("call %s: %s", calls[i].ID(), res.Content())
			}
		}
	default:
		if in.Calls > 0 {
			return 0, fmt.Errorf("unknown mode %q", in.Mode)
		}
	}
	return len(calls), nil
}

// inlineRegistry is the registry the bench agent validates its inline calls in: the no-op tool,
// defined as the toolgate worker defines it (the same on every replay).
var inlineRegistry = sync.OnceValues(func() (*toolcore.Registry, error) {
	tool, err := noopTool()
	if err != nil {
		return nil, err
	}
	return toolcore.NewRegistry(tool)
})

// agentQueueOf is the queue the bench agent runs on in mode: inline calls' agent on the toolgate
// worker (its ExecuteTool activities dispatched eagerly, as an agent's own activities are), the
// others on agentQueue, their own worker.
func (h *harness) agentQueueOf(mode agentMode, agentQueue string) string {
	if mode == agentInline {
		return h.prefix + "-toolgate"
	}
	return agentQueue
}

// runAgent runs the bench agent as workflow id: calls no-op calls in mode, to every call's success.
func (h *harness) runAgent(ctx context.Context, id, agentQueue string, mode agentMode, calls int) error {
	run, err := h.sdk.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: h.agentQueueOf(mode, agentQueue)},
		benchAgentWorkflowName, benchAgentInput{Mode: mode, Calls: calls, ToolTaskQueue: h.prefix + "-toolgate", SearchAttributes: h.attrs})
	if err != nil {
		return err
	}
	var ran int
	if err := run.Get(ctx, &ran); err != nil {
		return err
	}
	if ran != calls {
		return fmt.Errorf("agent ran %d calls, want %d", ran, calls)
	}
	return nil
}

// ensureAgentWorker starts the bench agent's worker on queue unless it runs.
func (h *harness) ensureAgentWorker(queue string) error {
	if h.agentQueues[queue] {
		return nil
	}
	if err := h.startAgentWorker(queue); err != nil {
		return err
	}
	h.agentQueues[queue] = true
	return nil
}

// startAgentWorker starts the worker of the bench agent on queue: the agent workflow and the
// plain-activity form of the no-op tool.
func (h *harness) startAgentWorker(queue string) error {
	tool, err := noopTool()
	if err != nil {
		return err
	}
	reg, err := toolcore.NewRegistry(tool)
	if err != nil {
		return err
	}
	w := sdkworker.New(h.sdk, queue, sdkworker.Options{WorkerStopTimeout: workerStopTimeout})
	w.RegisterWorkflowWithOptions(benchAgentWorkflow, workflow.RegisterOptions{Name: benchAgentWorkflowName})
	w.RegisterActivityWithOptions(func(ctx context.Context, call toolcore.ToolCall) (toolcore.Result, error) {
		return toolcore.Execute(ctx, reg, call)
	}, activity.RegisterOptions{Name: benchAgentActivityName})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start bench agent worker: %w", err)
	}
	h.workers = append(h.workers, w.Stop)
	return nil
}

// rounds measures every round shape cfg.Rounds times, after one unmeasured run of each.
func (h *harness) rounds(ctx context.Context) (Rounds, error) {
	agentQueue := h.prefix + "-agent"
	if err := h.ensureAgentWorker(agentQueue); err != nil {
		return Rounds{}, err
	}
	shapes := roundShapes()
	runs := map[string]func(context.Context) error{}
	for _, s := range shapes {
		runs[s] = h.roundRun(s, agentQueue)
	}
	n := h.cfg.Rounds
	total := (n + 1) * len(shapes)
	done := 0
	h.cfg.Progress(Progress{Phase: "rounds", Total: total})
	samples := map[string][]time.Duration{}
	cpu := map[string]time.Duration{}
	cpuKnown := true
	for r := -1; r < n; r++ { // r = -1: warm-up
		k := max(r, 0) % len(shapes)
		for _, s := range append(append([]string(nil), shapes[k:]...), shapes[:k]...) {
			cpuBefore, ok1 := processCPU()
			began := time.Now()
			if err := runs[s](ctx); err != nil {
				return Rounds{}, fmt.Errorf("rounds: %s: %w", s, err)
			}
			took := time.Since(began)
			cpuAfter, ok2 := processCPU()
			cpuKnown = cpuKnown && ok1 && ok2
			if r >= 0 {
				samples[s] = append(samples[s], took)
				cpu[s] += cpuAfter - cpuBefore
			}
			done++
			h.cfg.Progress(Progress{Phase: "rounds", Done: done, Total: total})
		}
	}
	out := Rounds{Repeats: n}
	one := summarize(samples[ShapeClientOne]).P50Ms
	for _, s := range shapes {
		l := summarize(samples[s])
		row := RoundShape{Shape: s, Calls: shapeCalls(s), Latencies: l, RatioP50: ratio(l.P50Ms, one)}
		if cpuKnown {
			row.CPUMs = ms(cpu[s] / time.Duration(n))
		}
		out.Shapes = append(out.Shapes, row)
	}
	p50 := func(s string) float64 { row, _ := out.Of(s); return row.P50Ms }
	out.ParallelRatio = ratio(p50(ShapeClientParallel), one)
	out.SequentialRatio = ratio(p50(ShapeClientSequential), one)
	out.ChildPerCallMs = round(p50(ShapeAgentChildOne)-p50(ShapeAgentEmpty), 3)
	out.ActivityPerCallMs = round(p50(ShapeAgentActOne)-p50(ShapeAgentEmpty), 3)
	out.ChildRoundRatio = ratio(p50(ShapeAgentChildRound), p50(ShapeAgentActRound))
	out.InlineRatio = ratio(p50(ShapeAgentInlineOne), p50(ShapeAgentActOne))
	out.InlineRoundRatio = ratio(p50(ShapeAgentInlineRound), p50(ShapeAgentActRound))
	if cpuKnown {
		cpuOf := func(s string) float64 { row, _ := out.Of(s); return row.CPUMs }
		out.InlineCPURatio = ratio(cpuOf(ShapeAgentInlineOne), cpuOf(ShapeAgentActOne))
		out.InlineRoundCPURatio = ratio(cpuOf(ShapeAgentInlineRound), cpuOf(ShapeAgentActRound))
	}
	if par, _ := out.Of(ShapeClientParallel); par.CPUMs > 0 {
		out.ParallelCPUFloor = ratio(par.CPUMs/float64(min(runtime.GOMAXPROCS(0), RoundSize)), one)
	}
	return out, nil
}

// shapeCalls is the number of tool calls of one run of shape.
func shapeCalls(shape string) int {
	switch {
	case shape == ShapeAgentEmpty:
		return 0
	case strings.Contains(shape, "8"):
		return RoundSize
	default:
		return 1
	}
}

// roundRun returns the function that runs shape once, to every call's success.
func (h *harness) roundRun(shape, agentQueue string) func(context.Context) error {
	cl := h.toolgate.client
	clientRound := func(sequential bool) func(context.Context) error {
		return func(ctx context.Context) error {
			calls := make([]toolcore.ToolCall, RoundSize)
			for i := range calls {
				c, err := toolcore.NewToolCall(h.nextID(), toolNoop, []byte("{}"))
				if err != nil {
					return err
				}
				calls[i] = c
			}
			outcomes, err := cl.ExecuteRound(ctx, calls, toolcore.RoundOptions{Sequential: sequential})
			if err != nil {
				return err
			}
			for _, o := range outcomes {
				if o.Kind != toolcore.OutcomeResult || o.Result.IsError() {
					return fmt.Errorf("call %s: %v", o.CallID, o.Kind)
				}
			}
			return nil
		}
	}
	agent := func(mode agentMode, calls int) func(context.Context) error {
		return func(ctx context.Context) error {
			return h.runAgent(ctx, "agent-"+h.nextID(), agentQueue, mode, calls)
		}
	}
	switch shape {
	case ShapeClientOne:
		return func(ctx context.Context) error {
			_, err := h.toolgate.call(ctx, callNoop)
			return err
		}
	case ShapeClientParallel:
		return clientRound(false)
	case ShapeClientSequential:
		return clientRound(true)
	case ShapeAgentEmpty:
		return agent("", 0)
	case ShapeAgentChildOne:
		return agent(agentChild, 1)
	case ShapeAgentChildRound:
		return agent(agentChild, RoundSize)
	case ShapeAgentActOne:
		return agent(agentActivity, 1)
	case ShapeAgentInlineOne:
		return agent(agentInline, 1)
	case ShapeAgentInlineRound:
		return agent(agentInline, RoundSize)
	default: // ShapeAgentActRound
		return agent(agentActivity, RoundSize)
	}
}

// writeRounds prints the rounds phase.
func (r Report) writeRounds(b *strings.Builder) {
	ro := r.Rounds
	fmt.Fprintf(b, "\nRounds: no-op calls from a client and from an agent workflow, %d runs per shape, interleaved\n", ro.Repeats)
	t := table(b)
	fmt.Fprintln(t, "shape\tcalls\tp50\tp95\tmax\tp50 / 1 client call\tprocess CPU per run\t")
	for _, s := range ro.Shapes {
		fmt.Fprintf(t, "%s\t%d\t%s\t%s\t%s\t%.2f\t%s\t\n", s.Shape, s.Calls, msText(s.P50Ms), msText(s.P95Ms), msText(s.MaxMs), s.RatioP50, msText(s.CPUMs))
	}
	t.Flush()
	fmt.Fprintf(b, "a round of 8 in parallel takes %.2fx one call (goal <= %.2f: %s); 8 sequential take %.2fx\n",
		ro.ParallelRatio, GoalRoundParallel, verdict(ro.ParallelRatio <= GoalRoundParallel), ro.SequentialRatio)
	if ro.ParallelCPUFloor > 0 {
		fmt.Fprintf(b, "the parallel round's CPU alone allows no less than %.2fx on %d cores\n", ro.ParallelCPUFloor, min(r.Machine.GOMAXPROCS, RoundSize))
	}
	fmt.Fprintf(b, "in an agent workflow, one call adds %s as a child workflow, %s as a plain activity; a round of 8 children takes %.2fx the 8 activities\n",
		msText(ro.ChildPerCallMs), msText(ro.ActivityPerCallMs), ro.ChildRoundRatio)
	fmt.Fprintf(b, "inline against plain activities (goal <= %.2f each): one call %.2fx wall, %.2fx CPU (%s); a round of 8 %.2fx wall, %.2fx CPU (%s)\n",
		GoalInline, ro.InlineRatio, ro.InlineCPURatio, verdict(ro.InlineRatio <= GoalInline && ro.InlineCPURatio <= GoalInline),
		ro.InlineRoundRatio, ro.InlineRoundCPURatio, verdict(ro.InlineRoundRatio <= GoalInline && ro.InlineRoundCPURatio <= GoalInline))
}

// verdict says whether a goal is met.
func verdict(ok bool) string {
	if ok {
		return "meets"
	}
	return "MISSES"
}

// checkRounds reports what is missing from the rounds phase.
func (r Report) checkRounds() error {
	ro := r.Rounds
	if ro.Repeats != r.Settings.Rounds || len(ro.Shapes) != len(roundShapes()) {
		return fmt.Errorf("rounds: incomplete %+v", ro)
	}
	for _, s := range ro.Shapes {
		if s.N != ro.Repeats || s.P50Ms <= 0 || s.RatioP50 <= 0 {
			return fmt.Errorf("rounds: shape %q: incomplete %+v", s.Shape, s)
		}
	}
	if ro.ParallelRatio <= 0 || ro.SequentialRatio <= 0 || ro.ChildRoundRatio <= 0 || ro.InlineRatio <= 0 || ro.InlineRoundRatio <= 0 {
		return fmt.Errorf("rounds: ratios missing %+v", ro)
	}
	return nil
}
