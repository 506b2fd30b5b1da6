package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// The cost phase: billable actions (Temporal Cloud, https://docs.temporal.io/cloud/actions) per
// call, counted from the recorded histories, plus the heartbeat RPCs the process's client sent
// (worker.ActionCounter on the harness's client), which no history records.
const (
	// DefaultCostRuns is how many times the cost phase runs each shape (after one warm-up run).
	DefaultCostRuns = 5
	// DefaultCostHold is how long the cost phase holds one idle sleep call: its heartbeats per
	// minute are measured over it (from the cadence when at least two beats are seen).
	DefaultCostHold = 12 * time.Second
	// Goals of issue 27 (printed, never asserted).
	GoalCostStandalone = 2 // actions per standalone ok call
	GoalCostInline     = 1 // actions per inline call
	GoalCostHeldMinute = 2 // actions per minute of an idle held call
)

// Cost shape names.
const (
	CostToolgate      = "toolgate: standalone ok call"
	CostBare          = "bare: workflow + 1 activity"
	CostBareEager     = "bare-eager: the same, eager start"
	CostAgentEmpty    = "agent workflow: no call"
	CostChild         = "agent workflow: 1 child call (ExecuteToolCall)"
	CostActivity      = "agent workflow: 1 plain activity"
	CostInline        = "agent workflow: 1 inline call (workflows.Inline)"
	CostChildRound    = "agent workflow: round of 8 child calls"
	CostInlineRound   = "agent workflow: round of 8 inline calls"
	CostActivityRound = "agent workflow: 8 plain activities in parallel"
)

// costShapes lists the shapes of the cost phase in report order.
func costShapes() []string {
	return []string{CostToolgate, CostBare, CostBareEager, CostAgentEmpty, CostChild, CostActivity, CostInline,
		CostChildRound, CostInlineRound, CostActivityRound}
}

// Cost is the cost phase.
type Cost struct {
	Runs   int       `json:"runs"`
	Shapes []CostRow `json:"shapes"`
	Held   CostHeld  `json:"held"`
}

// CostRow is the billable actions of one shape, means over Runs runs.
type CostRow struct {
	Shape string `json:"shape"`
	Calls int    `json:"calls"`
	// Actions per run: from the histories of the run's workflows (children included) plus the
	// heartbeats sent meanwhile; Kinds splits it (worker.Action* names).
	Actions float64            `json:"actions"`
	Kinds   map[string]float64 `json:"kinds"`
	// PerCall is what one call costs: Actions for a standalone shape; for an agent shape, Actions
	// less the empty agent run's, divided by Calls.
	PerCall float64 `json:"perCall"`
	// RatioBare divides PerCall by bare's.
	RatioBare float64 `json:"ratioBare"`
	// ClientSeen is what worker.ActionCounter on the process's client counted per run: the
	// worker metric's view (equal to Actions when the client starts and serves everything).
	ClientSeen float64 `json:"clientSeen"`
	// P50Ms and CPUMs are wall time and process CPU per run (noisy; the counts are exact).
	P50Ms float64 `json:"p50Ms"`
	CPUMs float64 `json:"cpuMs"`
}

// CostHeld is one idle held sleep call: what it costs to run, and per minute while held.
type CostHeld struct {
	HoldSeconds float64 `json:"holdSeconds"`
	// HeartbeatTimeoutSeconds is the sleep tool's; the cadence is what toolgate derives from it.
	HeartbeatTimeoutSeconds float64 `json:"heartbeatTimeoutSeconds"`
	// Heartbeats is the number of RecordActivityTaskHeartbeat RPCs while held; CadenceSeconds the
	// median gap between them (0: fewer than two).
	Heartbeats     int     `json:"heartbeats"`
	CadenceSeconds float64 `json:"cadenceSeconds"`
	// PerMinute is the actions a minute of holding costs: 60 / CadenceSeconds, or Heartbeats
	// scaled to a minute when the cadence is unknown.
	PerMinute float64 `json:"perMinute"`
	// CallActions is what the call costs besides (start, attempt, upserts), from its history.
	CallActions float64            `json:"callActions"`
	Kinds       map[string]float64 `json:"kinds"`
}

// Of returns the row of shape.
func (c Cost) Of(shape string) (CostRow, bool) {
	i := slices.IndexFunc(c.Shapes, func(r CostRow) bool { return r.Shape == shape })
	if i < 0 {
		return CostRow{}, false
	}
	return c.Shapes[i], true
}

// markerLocalActivity and the side-effect markers are the Go SDK's marker names.
const (
	markerLocalActivity     = "LocalActivity"
	markerSideEffect        = "SideEffect"
	markerMutableSideEffect = "MutableSideEffect"
	changeVersionAttribute  = "TemporalChangeVersion"
)

// countActions counts the billable actions one workflow's history records, by kind
// (worker.Action* names), by Temporal Cloud's list:
//   - a workflow start (WorkflowExecutionStarted, unless a child's: its parent's
//     ChildWorkflowExecutionStarted counts it as child_workflow_start; continue-as-new counts
//     in the run it closes);
//   - activity attempts: the attempt number of each ActivityTaskStarted (the server writes only
//     the last attempt's started event, numbered);
//   - each UpsertWorkflowSearchAttributes, but one setting only TemporalChangeVersion (exempt);
//   - TimerStarted, WorkflowExecutionSignaled, WorkflowExecutionUpdateAccepted (rejected updates
//     are billed too but leave no event);
//   - local activities once per workflow task that recorded any; SideEffect and
//     MutableSideEffect markers; other markers (GetVersion's) are free.
//
// Heartbeats and queries leave no event: they are counted from the client's RPCs.
func countActions(events []*historypb.HistoryEvent) map[string]int {
	out := map[string]int{}
	localTasks := map[int64]bool{}
	for _, e := range events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			a := e.GetWorkflowExecutionStartedEventAttributes()
			if a.GetParentWorkflowExecution() == nil && a.GetContinuedExecutionRunId() == "" {
				out[worker.ActionWorkflowStart]++
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			out[worker.ActionWorkflowStart]++
		case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
			out[worker.ActionChildWorkflowStart]++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			out[worker.ActionActivityAttempt] += int(max(e.GetActivityTaskStartedEventAttributes().GetAttempt(), 1))
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			fields := e.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
			if _, version := fields[changeVersionAttribute]; !version || len(fields) > 1 {
				out[worker.ActionSearchAttributeUpsert]++
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			out[worker.ActionTimer]++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			out[worker.ActionSignal]++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			out[worker.ActionUpdate]++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			a := e.GetMarkerRecordedEventAttributes()
			switch a.GetMarkerName() {
			case markerLocalActivity:
				if !localTasks[a.GetWorkflowTaskCompletedEventId()] {
					localTasks[a.GetWorkflowTaskCompletedEventId()] = true
					out[worker.ActionLocalActivities]++
				}
			case markerSideEffect, markerMutableSideEffect:
				out[worker.ActionSideEffect]++
			}
		}
	}
	return out
}

// sumKinds adds up the counts of every kind.
func sumKinds[N int | int64 | float64](kinds map[string]N) N {
	var t N
	for _, n := range kinds {
		t += n
	}
	return t
}

// childIDs returns the workflow IDs of the children the history started.
func childIDs(events []*historypb.HistoryEvent) []string {
	var ids []string
	for _, e := range events {
		if a := e.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
			ids = append(ids, a.GetWorkflowExecution().GetWorkflowId())
		}
	}
	return ids
}

// actionsOf counts the actions of workflowID's history and its children's, recursively.
func (h *harness) actionsOf(ctx context.Context, workflowID string) (map[string]int, error) {
	events, err := h.fetchHistory(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	out := countActions(events)
	for _, id := range childIDs(events) {
		child, err := h.actionsOf(ctx, id)
		if err != nil {
			return nil, err
		}
		for k, v := range child {
			out[k] += v
		}
	}
	return out, nil
}

// costRun runs one shape once and returns the ID of the workflow it started.
func (h *harness) costRun(shape, agentQueue string) func(context.Context) (string, error) {
	bare := func(name string, eager bool) func(context.Context) (string, error) {
		s := h.bareSubject(name, h.prefix+"-bare", bareWorkflowName, eager)
		return func(ctx context.Context) (string, error) {
			r, err := s.call(ctx, callNoop)
			return r.workflowID, err
		}
	}
	agent := func(mode agentMode, calls int) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			id := "agent-" + h.nextID()
			return id, h.runAgent(ctx, id, agentQueue, mode, calls)
		}
	}
	switch shape {
	case CostToolgate:
		return func(ctx context.Context) (string, error) {
			r, err := h.toolgate.call(ctx, callNoop)
			return r.workflowID, err
		}
	case CostBare:
		return bare(SubjectBare, false)
	case CostBareEager:
		return bare(SubjectBareEager, true)
	case CostAgentEmpty:
		return agent("", 0)
	case CostChild:
		return agent(agentChild, 1)
	case CostActivity:
		return agent(agentActivity, 1)
	case CostInline:
		return agent(agentInline, 1)
	case CostChildRound:
		return agent(agentChild, RoundSize)
	case CostInlineRound:
		return agent(agentInline, RoundSize)
	default: // CostActivityRound
		return agent(agentActivity, RoundSize)
	}
}

// costShapeCalls is the number of tool calls of one run of shape.
func costShapeCalls(shape string) int {
	switch {
	case shape == CostAgentEmpty:
		return 0
	case strings.Contains(shape, "8"):
		return RoundSize
	default:
		return 1
	}
}

// cost runs every shape once unmeasured, then CostRuns times interleaved, counting each run's
// actions; then holds one idle sleep call for CostHold.
func (h *harness) cost(ctx context.Context) (Cost, error) {
	agentQueue := h.prefix + "-agent"
	if err := h.ensureAgentWorker(agentQueue); err != nil {
		return Cost{}, err
	}
	shapes := costShapes()
	n := h.cfg.CostRuns
	total := (n+1)*len(shapes) + 1
	done := 0
	h.cfg.Progress(Progress{Phase: "cost", Total: total})
	sums := map[string]map[string]int{}
	seen := map[string]int64{}
	walls := map[string][]time.Duration{}
	cpu := map[string]time.Duration{}
	cpuKnown := true
	for r := -1; r < n; r++ { // r = -1: warm-up
		k := max(r, 0) % len(shapes)
		for _, s := range append(append([]string(nil), shapes[k:]...), shapes[:k]...) {
			before := h.actions.Counts()
			cpuBefore, ok1 := processCPU()
			began := time.Now()
			id, err := h.costRun(s, agentQueue)(ctx)
			if err != nil {
				return Cost{}, fmt.Errorf("cost: %s: %w", s, err)
			}
			took := time.Since(began)
			cpuAfter, ok2 := processCPU()
			after := h.actions.Counts()
			done++
			h.cfg.Progress(Progress{Phase: "cost", Done: done, Total: total})
			if r < 0 {
				continue
			}
			cpuKnown = cpuKnown && ok1 && ok2
			kinds, err := h.actionsOf(ctx, id)
			if err != nil {
				return Cost{}, err
			}
			kinds[worker.ActionHeartbeat] += int(after[worker.ActionHeartbeat] - before[worker.ActionHeartbeat])
			if sums[s] == nil {
				sums[s] = map[string]int{}
			}
			for kind, v := range kinds {
				sums[s][kind] += v
			}
			seen[s] += sumKinds(after) - sumKinds(before)
			walls[s] = append(walls[s], took)
			cpu[s] += cpuAfter - cpuBefore
		}
	}
	out := Cost{Runs: n}
	for _, s := range shapes {
		row := CostRow{Shape: s, Calls: costShapeCalls(s), Kinds: map[string]float64{}}
		for kind, v := range sums[s] {
			if v != 0 {
				row.Kinds[kind] = round(float64(v)/float64(n), 3)
			}
		}
		row.Actions = round(float64(sumKinds(sums[s]))/float64(n), 3)
		row.ClientSeen = round(float64(seen[s])/float64(n), 3)
		row.P50Ms = summarize(walls[s]).P50Ms
		if cpuKnown {
			row.CPUMs = ms(cpu[s] / time.Duration(n))
		}
		out.Shapes = append(out.Shapes, row)
	}
	empty, _ := out.Of(CostAgentEmpty)
	bareRow, _ := out.Of(CostBare)
	for i := range out.Shapes {
		row := &out.Shapes[i]
		switch {
		case row.Shape == CostAgentEmpty:
			row.PerCall = row.Actions
		case strings.HasPrefix(row.Shape, "agent workflow"):
			row.PerCall = round((row.Actions-empty.Actions)/float64(row.Calls), 3)
		default:
			row.PerCall = row.Actions
		}
		row.RatioBare = ratio(row.PerCall, bareRow.Actions)
	}
	held, err := h.costHeld(ctx)
	if err != nil {
		return Cost{}, err
	}
	out.Held = held
	h.cfg.Progress(Progress{Phase: "cost", Done: total, Total: total})
	return out, nil
}

// heldSample is how often the held call's heartbeat count is read.
const heldSample = 20 * time.Millisecond

// costHeld holds one sleep call for CostHold once it runs, recording when each heartbeat RPC was
// sent, then releases it and counts its history.
func (h *harness) costHeld(ctx context.Context) (CostHeld, error) {
	hold := h.costHold
	defer hold.release() // on an error path too: never leave the call held
	hold.expect(1)
	call, err := toolcore.NewToolCall(h.nextID(), toolHeld, []byte("{}"))
	if err != nil {
		return CostHeld{}, err
	}
	cl := h.toolgate.client
	if _, err := cl.Start(ctx, call); err != nil {
		return CostHeld{}, fmt.Errorf("cost: start held call: %w", err)
	}
	select {
	case <-hold.reached:
	case <-ctx.Done():
		return CostHeld{}, context.Cause(ctx)
	case <-time.After(time.Minute):
		return CostHeld{}, fmt.Errorf("cost: held call %s never ran", call.ID())
	}
	var beats []time.Time
	last := h.actions.Counts()[worker.ActionHeartbeat]
	began := time.Now()
	tick := time.NewTicker(heldSample)
	for time.Since(began) < h.cfg.CostHold {
		select {
		case <-ctx.Done():
			tick.Stop()
			return CostHeld{}, context.Cause(ctx)
		case now := <-tick.C:
			if n := h.actions.Counts()[worker.ActionHeartbeat]; n > last {
				for range n - last {
					beats = append(beats, now)
				}
				last = n
			}
		}
	}
	tick.Stop()
	held := time.Since(began)
	hold.release()
	res, err := cl.Execute(ctx, call) // attaches to the running call: its result
	if err != nil {
		return CostHeld{}, fmt.Errorf("cost: held call: %w", err)
	}
	if res.IsError() {
		return CostHeld{}, fmt.Errorf("cost: held call: %s", res.Content())
	}
	kinds, err := h.actionsOf(ctx, wire.WorkflowID("", call.ID()))
	if err != nil {
		return CostHeld{}, err
	}
	out := CostHeld{
		HoldSeconds:             round(held.Seconds(), 1),
		HeartbeatTimeoutSeconds: h.cfg.InFlightHeartbeat.Seconds(),
		Heartbeats:              len(beats),
		CallActions:             float64(sumKinds(kinds)),
		Kinds:                   map[string]float64{},
	}
	for k, v := range kinds {
		out.Kinds[k] = float64(v)
	}
	if len(beats) >= 2 {
		gaps := make([]time.Duration, len(beats)-1)
		for i := range gaps {
			gaps[i] = beats[i+1].Sub(beats[i])
		}
		cadence := summarize(gaps).P50Ms / 1000
		out.CadenceSeconds = round(cadence, 2)
		out.PerMinute = round(60/cadence, 2)
	} else {
		out.PerMinute = round(float64(len(beats))*60/held.Seconds(), 2)
	}
	return out, nil
}

// writeCost prints the cost phase.
func (r Report) writeCost(b *strings.Builder) {
	c := r.Cost
	fmt.Fprintf(b, "\nCost: billable actions (Temporal Cloud) per run, from the histories and the heartbeat RPCs sent; %d runs per shape\n", c.Runs)
	t := table(b)
	fmt.Fprintln(t, "shape\tcalls\tactions per run\tper call\t/ bare\tby kind\tclient saw\tp50\tCPU per run\t")
	for _, s := range c.Shapes {
		fmt.Fprintf(t, "%s\t%d\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t\n", s.Shape, s.Calls, num(s.Actions), num(s.PerCall), s.RatioBare,
			kindsText(s.Kinds), num(s.ClientSeen), msText(s.P50Ms), msText(s.CPUMs))
	}
	t.Flush()
	hd := c.Held
	cadence := "cadence unknown (fewer than 2 beats: the count scaled to a minute)"
	if hd.CadenceSeconds > 0 {
		cadence = fmt.Sprintf("one every %.2fs", hd.CadenceSeconds)
	}
	fmt.Fprintf(b, "an idle held call (HeartbeatTimeout %s): %d heartbeats in %.1fs held, %s: %s actions per minute held, besides %s to run (%s)\n",
		time.Duration(hd.HeartbeatTimeoutSeconds*float64(time.Second)), hd.Heartbeats, hd.HoldSeconds, cadence, num(hd.PerMinute), num(hd.CallActions), kindsText(hd.Kinds))
	tg, _ := c.Of(CostToolgate)
	in, _ := c.Of(CostInline)
	fmt.Fprintf(b, "goals: standalone ok call %s (<= %d: %s); inline call %s (%d: %s); idle held call %s a minute (<= %d: %s)\n",
		num(tg.PerCall), GoalCostStandalone, verdict(tg.PerCall <= GoalCostStandalone),
		num(in.PerCall), GoalCostInline, verdict(in.PerCall <= GoalCostInline),
		num(hd.PerMinute), GoalCostHeldMinute, verdict(hd.PerMinute <= GoalCostHeldMinute))
}

// num prints an action count: whole numbers without decimals.
func num(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

// kindsText prints counts by kind in worker.ActionKinds order: "workflow_start 1, activity_attempt 1".
func kindsText(kinds map[string]float64) string {
	var parts []string
	for _, k := range worker.ActionKinds() {
		if v := kinds[k]; v != 0 {
			parts = append(parts, k+" "+num(v))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// checkCost reports what is missing from the cost phase.
func (r Report) checkCost() error {
	c := r.Cost
	if c.Runs != r.Settings.CostRuns || len(c.Shapes) != len(costShapes()) {
		return fmt.Errorf("cost: incomplete %+v", c)
	}
	for _, s := range c.Shapes {
		if s.Actions <= 0 || s.Kinds[worker.ActionWorkflowStart] != 1 || (s.Calls > 0 && s.PerCall <= 0) {
			return fmt.Errorf("cost: shape %q: incomplete %+v", s.Shape, s)
		}
	}
	if c.Held.HoldSeconds <= 0 || c.Held.CallActions <= 0 {
		return fmt.Errorf("cost: held call: incomplete %+v", c.Held)
	}
	return nil
}
