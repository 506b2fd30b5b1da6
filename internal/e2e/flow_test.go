package e2e

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// longFlow runs the flow-control scenarios at the full size (500 flood calls, a 30 s
// rate window): go test ./internal/e2e -run Flow -flow.long.
var longFlow = flag.Bool("flow.long", false, "run the flow-control scenarios at full size")

// starts records, in order, the tag of every attempt that starts, and when.
type starts struct {
	mu   sync.Mutex
	tags []string
	at   []time.Time
}

func (s *starts) add(tag string) { s.addAt(tag, time.Now()) }

// addAt records tag as started at at.
func (s *starts) addAt(tag string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tags = append(s.tags, tag)
	s.at = append(s.at, at)
}

func (s *starts) snapshot() ([]string, []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tags), slices.Clone(s.at)
}

// waitScheduled waits until the calls' ExecuteTool activities are scheduled (or ran), so a
// backlog is on the server before the next step.
func waitScheduled(t *testing.T, e *env, ctx context.Context, callIDs []string) {
	t.Helper()
	for _, id := range callIDs {
		require.Eventually(t, func() bool {
			desc, err := e.sdk.DescribeWorkflowExecution(ctx, e.client.WorkflowID(id), "")
			if err != nil {
				return false
			}
			return len(desc.GetPendingActivities()) > 0 ||
				desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		}, testTimeout, 10*time.Millisecond, "call %s scheduled", id)
	}
}

// startCalls starts n calls of tool tagged prefix-i with priority p and returns their IDs.
func startCalls(t *testing.T, e *env, ctx context.Context, tool, prefix string, n int, p wire.Priority) []string {
	t.Helper()
	ids := make([]string, n)
	pctx := client.WithPriority(ctx, p)
	for i := range n {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	// In order when a test reads the order; a flood in parallel, so it outruns the tool.
	workers := 1
	if n > 20 {
		workers = 16
	}
	errs := make(chan error, n)
	next := make(chan string, n)
	for _, id := range ids {
		next <- id
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for id := range next {
				_, err := e.client.Start(pctx, call(t, id, tool, fmt.Sprintf(`{"tag":%q}`, id)))
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return ids
}

func awaitAll(t *testing.T, e *env, ctx context.Context, ids []string) {
	t.Helper()
	for _, id := range ids {
		res, err := e.client.Result(ctx, id)
		require.NoError(t, err, id)
		require.False(t, res.IsError(), "%s: %s", id, res.Content())
	}
}

// TestFlowPriorityOvertakesBacklog: with one slot for the tool (MaxConcurrent 1) held by a
// running call, a backlog of priority-3 calls and then one priority-1 call: the priority-1 call
// runs first once the slot frees, and the status shows its priority.
func TestFlowPriorityOvertakesBacklog(t *testing.T) {
	var seen starts
	release := make(chan struct{})
	tool := define(t, "serial", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxConcurrent: 1},
		func(ctx context.Context, a args) (any, error) {
			seen.add(a.Tag)
			if a.Tag == "hold-0" {
				<-release
			}
			return a.Tag, nil
		})
	e := newEnv(t, tool)
	ctx := e.ctx()

	hold := startCalls(t, e, ctx, "serial", "hold", 1, wire.Priority{})
	require.Eventually(t, func() bool { tags, _ := seen.snapshot(); return len(tags) == 1 }, testTimeout, 10*time.Millisecond)
	backlog := startCalls(t, e, ctx, "serial", "p3", 10, wire.Priority{Level: 3})
	urgent := startCalls(t, e, ctx, "serial", "p1", 1, wire.Priority{Level: 1})
	waitScheduled(t, e, ctx, append(slices.Clone(backlog), urgent...))

	st, err := e.client.Status(ctx, urgent[0])
	require.NoError(t, err)
	assert.Equal(t, wire.Priority{Level: 1}, st.Priority)

	close(release)
	awaitAll(t, e, ctx, append(append(hold, backlog...), urgent...))
	tags, _ := seen.snapshot()
	require.Len(t, tags, 12)
	assert.Equal(t, "p1-0", tags[1], "the priority-1 call runs right after the held one: %v", tags)
}

// maxInWindow returns the most starts within any window of length w.
func maxInWindow(at []time.Time, w time.Duration) int {
	sorted := slices.Clone(at)
	slices.SortFunc(sorted, func(a, b time.Time) int { return a.Compare(b) })
	best, lo := 0, 0
	for hi := range sorted {
		for sorted[hi].Sub(sorted[lo]) > w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// limits runs `toolgate limits args...` against the shared server and returns its stdout.
func limits(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	srv := devtest.Server(t)
	cmd := exec.Command(bin, append(append([]string{"limits"}, args...), "--address", srv.FrontendAddress(), "--namespace", srv.Namespace())...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "toolgate limits %v: %s", args, out)
	return string(out)
}

// TestFlowRateLimitAcrossWorkers: three workers serve a tool declared at 5 calls/s. The server
// dispatches its attempts at that rate across all of them: in any window of d seconds at most
// 5*d plus the burst start. The server's stated burst is one second of the rate (the matcher's
// defaultBurstDuration, server v1.32.1 service/matching/ratelimit_manager.go), so the bound is
// 5*d + 5, plus 1 for a start on the window's edge and 1 for the jitter of recorded start
// times. None is lost. An operator's `toolgate limits
// set --rate` then takes effect on the running workers (a pause holds calls on the server; 200/s
// then starts more than the declared rate of them within a second), and `limits reset` gives the rate back to the workers and removes the fairness
// weight override set with it.
func TestFlowRateLimitAcrossWorkers(t *testing.T) {
	const rate = 5
	window := 6 * time.Second
	if *longFlow {
		window = 30 * time.Second
	}
	n := int(window.Seconds()) * rate
	var seen starts
	// A 10 s HeartbeatTimeout: an attempt a loaded server loses between matching and the worker
	// is retried within the test's budget (the default, 1 minute, is all of it).
	tool := define(t, "limited", toolcore.Options{SideEffect: toolcore.ReadOnly, RateLimit: rate, HeartbeatTimeout: 10 * time.Second},
		func(ctx context.Context, a args) (any, error) {
			// The server's dispatch time (stamped when matching hands the attempt to a poller):
			// what its rate limit paces. The tool's own clock adds the delivery to the worker,
			// which a loaded machine delays unevenly, bunching starts the server spaced.
			seen.addAt(a.Tag, activity.GetInfo(ctx).StartedTime)
			return a.Tag, nil
		})
	e := newEnv(t, tool)
	e.startWorker(devtest.Client(t), 5*time.Second, tool)
	e.startWorker(devtest.Client(t), 5*time.Second, tool)
	ctx := e.ctx()
	queue := wire.ToolTaskQueue(e.queue, "limited")

	ids := startCalls(t, e, ctx, "limited", "r", n, wire.Priority{})
	awaitAll(t, e, ctx, ids)
	tags, at := seen.snapshot()
	assert.Len(t, tags, n, "every call ran once")
	for _, d := range []time.Duration{time.Second, 2 * time.Second, window / 2} {
		// Evenly spaced starts put one on each edge of a closed window (rate*d + 1) beside the
		// burst; one more is the jitter of StartedTime, which the server stamps when it records
		// the start, a little after dispatch on a loaded machine (12 of a bound of 11 was seen
		// in every window of one CI run). A server ignoring the rate exceeds it by far.
		bound := int(rate*d.Seconds()) + rate + 2
		assert.LessOrEqual(t, maxInWindow(at, d), bound, "starts within %s", d)
	}
	total := slices.MaxFunc(at, time.Time.Compare).Sub(slices.MinFunc(at, time.Time.Compare))
	t.Logf("%d calls over %s: %.1f/s observed, declared %d/s", n, total.Round(time.Millisecond), float64(n-1)/total.Seconds(), rate)

	out := limits(t, "--queue", queue, "--json")
	assert.Contains(t, out, `"source":"worker"`)

	// The override: 200/s, no restart (and a fairness weight, which reset removes too). Its calls
	// wait on the server while the queue is paused (rate 0), so their starts measure the new rate,
	// not how fast a loaded machine starts workflows.
	before := len(at)
	limits(t, "set", "--queue", queue, "--rate", "0")
	more := startCalls(t, e, ctx, "limited", "o", 3*rate, wire.Priority{})
	waitScheduled(t, e, ctx, more)
	limits(t, "set", "--queue", queue, "--rate", "200", "--weight", "agent-7=3")
	out = limits(t, "--queue", queue, "--json")
	assert.Contains(t, out, `"source":"api"`)
	assert.Contains(t, out, `"fairnessWeightOverrides":{"agent-7":3}`)
	awaitAll(t, e, ctx, more)
	_, at = seen.snapshot()
	overridden := maxInWindow(at[before:], time.Second)
	t.Logf("after the override: %d of %d calls started within a second", overridden, len(more))
	assert.Greater(t, overridden, 2*rate+1, "more than the declared rate's bound for a second (above) start within one")

	limits(t, "reset", "--queue", queue)
	out = limits(t, "--queue", queue, "--json")
	assert.Contains(t, out, `"source":"worker"`)
	assert.NotContains(t, out, `"fairnessWeightOverrides"`, "reset without --weight removes every weight override")
}

// gates holds a flood's calls at the tool until the run opens them, so the flood's backlog is
// still on the server when B's first call is scheduled, however loaded the machine is: the
// tool's slots hold gated calls, every other flood call waits in matching.
type gates struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// hold gates the calls whose tag starts with prefix+"-" and returns the function that opens them.
func (g *gates) hold(prefix string) (open func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]chan struct{}{}
	}
	g.m[prefix] = ch
	return sync.OnceFunc(func() { close(ch) })
}

// wait returns once tag's gate (if any) is open, or with ctx's cause.
func (g *gates) wait(ctx context.Context, tag string) error {
	prefix, _, _ := strings.Cut(tag, "-")
	g.mu.Lock()
	ch := g.m[prefix]
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// fairnessRun floods the slow tool with flood calls of agent A (fairness key "A" when keyed),
// held at the tool's gate until B's first call is scheduled, then makes agent B's calls one after
// another (key "B" when keyed). It returns, for each B call, how many A calls started between its
// start and its tool's start, its wait (start request to tool start; for the first, gate open to
// tool start), and A's backlog when B's first call was scheduled.
func fairnessRun(t *testing.T, e *env, ctx context.Context, seen *starts, held *gates, prefix string, flood, calls int, keyed bool) (aBefore []int, waits []time.Duration, backlog int) {
	t.Helper()
	var a, b wire.Priority
	if keyed {
		a, b = wire.Priority{FairnessKey: prefix + "A"}, wire.Priority{FairnessKey: prefix + "B"}
	}
	open := held.hold(prefix + "A")
	defer open()
	aIDs := startCalls(t, e, ctx, "slow", prefix+"A", flood, a)
	waitScheduled(t, e, ctx, aIDs)
	bctx := client.WithPriority(ctx, b)
	for i := range calls {
		id := fmt.Sprintf("%sB-%d", prefix, i)
		c := call(t, id, "slow", fmt.Sprintf(`{"tag":%q}`, id))
		tags, _ := seen.snapshot()
		begin := time.Now()
		var res toolcore.Result
		var err error
		if i == 0 {
			backlog = flood
			for _, tag := range tags {
				if strings.HasPrefix(tag, prefix+"A-") {
					backlog--
				}
			}
			// Scheduled behind (or, with keys, beside) A's backlog, then the gate opens.
			done := make(chan struct{})
			go func() {
				defer close(done)
				res, err = e.client.Execute(bctx, c)
			}()
			waitScheduled(t, e, ctx, []string{id})
			begin = time.Now()
			open()
			<-done
		} else {
			res, err = e.client.Execute(bctx, c)
		}
		require.NoError(t, err)
		require.False(t, res.IsError())
		after, at := seen.snapshot()
		j := slices.Index(after, id)
		require.GreaterOrEqual(t, j, len(tags))
		n := 0
		for _, tag := range after[len(tags):j] {
			if strings.HasPrefix(tag, prefix+"A-") {
				n++
			}
		}
		aBefore = append(aBefore, n)
		waits = append(waits, at[j].Sub(begin))
	}
	open()
	awaitAll(t, e, ctx, aIDs) // A loses nothing
	tags, _ := seen.snapshot()
	for _, id := range aIDs {
		assert.Equal(t, 1, countOf(tags, id), "A's call %s ran once", id)
	}
	return aBefore, waits, backlog
}

func countOf(tags []string, tag string) int {
	n := 0
	for _, s := range tags {
		if s == tag {
			n++
		}
	}
	return n
}

func median[T int | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestFlowFairnessKeys: agent A floods a slow tool (4 slots) with a backlog (A's first calls held
// at the tool until B's first call is scheduled, so the backlog does not depend on the machine's
// speed), then agent B makes its calls one after another. With fairness keys, B's calls are dispatched ahead of A's backlog
// (at most a few A calls start before each B call: those already polled), so B's wait stays near
// its idle wait; without keys the same B call waits behind A's whole backlog (the A calls not yet
// started when B calls). A's calls all run, once each, in both. The full size (-flow.long: 500
// and 20 calls) also asserts B's p50 wait with keys within 2x its idle p50 plus one tool run (a B
// call waits for a slot to free: a running A call is never preempted); the short form logs the
// waits and asserts the dispatch order only.
func TestFlowFairnessKeys(t *testing.T) {
	const toolRun = 50 * time.Millisecond
	flood, calls := 100, 10
	if *longFlow {
		flood, calls = 500, 20
	}
	var seen starts
	var held gates
	tool := define(t, "slow", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxConcurrent: 4},
		func(ctx context.Context, a args) (any, error) {
			seen.add(a.Tag)
			if err := held.wait(ctx, a.Tag); err != nil {
				return nil, err
			}
			work := time.NewTimer(toolRun) // the tool's own work, not a test wait
			defer work.Stop()
			select {
			case <-work.C:
				return a.Tag, nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		})
	e := newEnv(t, tool)

	// Each run has the test deadline of its own: three floods in one minute left a loaded
	// machine (load ~20) without time for the last.
	_, idle, _ := fairnessRun(t, e, e.ctx(), &seen, &held, "idle", 0, calls, true)
	keyedA, keyed, keyedBacklog := fairnessRun(t, e, e.ctx(), &seen, &held, "keyed", flood, calls, true)
	plainA, plain, plainBacklog := fairnessRun(t, e, e.ctx(), &seen, &held, "plain", flood, calls, false)
	t.Logf("B's p50 wait: idle %s, with keys %s, without keys %s (first call: %s with keys, %s without)",
		median(idle), median(keyed), median(plain), keyed[0], plain[0])
	t.Logf("A calls started before each B call: with keys %v (backlog %d), without keys %v (backlog %d)", keyedA, keyedBacklog, plainA, plainBacklog)

	assert.LessOrEqual(t, median(keyedA), 4, "with keys B goes ahead of A's backlog")
	require.Greater(t, keyedBacklog, 4*4, "a backlog to go ahead of")
	require.Greater(t, plainBacklog, 4*4, "a backlog to wait behind")
	assert.LessOrEqual(t, keyedA[0], 4+1, "with keys B's first call goes ahead of A's backlog")
	assert.GreaterOrEqual(t, plainA[0], plainBacklog-4, "without keys B's first call waits behind A's backlog")
	if *longFlow {
		assert.LessOrEqual(t, median(keyed), 2*median(idle)+toolRun, "with keys B's p50 wait within 2x idle plus one tool run")
	}
}

// TestFlowFairnessKeyRateLimitReconciled: a worker sets its tool's declared per-fairness-key rate
// limit on the server at start (reason wire.LimitReasonDeclared); a worker that starts after an
// operator's `toolgate limits set --fairness-key-rate` leaves the override alone; after `limits
// reset` the next worker sets the declared value again.
func TestFlowFairnessKeyRateLimitReconciled(t *testing.T) {
	tool := define(t, "per_agent", toolcore.Options{SideEffect: toolcore.ReadOnly, FairnessKeyRateLimit: 2},
		func(_ context.Context, a args) (any, error) { return a.Tag, nil })
	e := newEnv(t, tool)
	queue := wire.ToolTaskQueue(e.queue, "per_agent")
	declared := `"fairnessKeyRateLimit":{"callsPerSecond":2,"reason":"` + wire.LimitReasonDeclared + `"`
	assert.Contains(t, limits(t, "--queue", queue, "--json"), declared)

	limits(t, "set", "--queue", queue, "--fairness-key-rate", "1")
	e.startWorker(devtest.Client(t), 5*time.Second, tool)
	assert.Contains(t, limits(t, "--queue", queue, "--json"),
		`"fairnessKeyRateLimit":{"callsPerSecond":1,"reason":"`+wire.LimitReasonOperator+`"`, "the operator's override stands")

	limits(t, "reset", "--queue", queue)
	assert.NotContains(t, limits(t, "--queue", queue, "--json"), `"fairnessKeyRateLimit"`)
	e.startWorker(devtest.Client(t), 5*time.Second, tool)
	assert.Contains(t, limits(t, "--queue", queue, "--json"), declared, "the declared limit is back")
}

// TestFlowAgentCallsDefaultToItsFairnessKey: the calls an agent workflow starts with
// workflows.ExecuteRound carry its workflow ID as their fairness key, on the call's workflow and
// its ExecuteTool activity (the history's scheduled event).
func TestFlowAgentCallsDefaultToItsFairnessKey(t *testing.T) {
	var runs atomic.Int32
	e := newEnv(t, addTool(t, &runs))
	e.startParentWorker()
	out := e.runParent("agent-7", call(t, "fk1", "add", `{"left":1,"right":2}`))
	require.Len(t, out, 1)
	require.Equal(t, `{"sum":3}`, out[0].Content)

	ctx := e.ctx()
	agentID := e.queue + "/agent-7"
	st, err := e.client.Status(ctx, "fk1")
	require.NoError(t, err)
	assert.Equal(t, wire.FairnessKeyOf(agentID), st.Priority.FairnessKey)
	iter := e.sdk.GetWorkflowHistory(ctx, e.client.WorkflowID("fk1"), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	found := false
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			found = true
			assert.Equal(t, wire.FairnessKeyOf(agentID), a.GetPriority().GetFairnessKey())
		}
	}
	assert.True(t, found, "an ExecuteTool activity was scheduled")
}

// toolgateCLI runs `toolgate args...` against the shared server and returns its stdout.
func toolgateCLI(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	srv := devtest.Server(t)
	cmd := exec.Command(bin, append(args, "--address", srv.FrontendAddress(), "--namespace", srv.Namespace())...)
	cmd.Env = testbin.ChildEnv()
	var stderr testbin.SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "toolgate %v: %s", args, stderr.String())
	return string(out)
}

// recordedPriorities returns the priority on the call's WorkflowExecutionStarted event and on each
// of its ActivityTaskScheduled events.
func recordedPriorities(t *testing.T, e *env, ctx context.Context, workflowID string) (started *commonpb.Priority, scheduled []*commonpb.Priority) {
	t.Helper()
	iter := e.sdk.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			started = a.GetPriority()
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled = append(scheduled, a.GetPriority())
		}
	}
	return started, scheduled
}

// TestFlowCallFlagsSetPriority: `toolgate call --priority --fairness-key --fairness-weight` (the
// binary) starts the call with that priority: DescribeWorkflowExecution has it, the history's
// started event and the ExecuteTool activity's scheduled event carry it, and `toolgate status`
// shows it, as a line and in --json.
func TestFlowCallFlagsSetPriority(t *testing.T) {
	var runs atomic.Int32
	e := newEnv(t, addTool(t, &runs))
	ctx := e.ctx()

	out := toolgateCLI(t, "call", "add", `{"left":1,"right":2}`, "--id", "cli-p1", "--scope", e.queue,
		"--task-queue", e.queue, "--progress", "off",
		"--priority", "1", "--fairness-key", "tenant-7", "--fairness-weight", "2")
	assert.Contains(t, out, `"content":"{\"sum\":3}"`)

	want := &commonpb.Priority{PriorityKey: 1, FairnessKey: "tenant-7", FairnessWeight: 2}
	workflowID := e.client.WorkflowID("cli-p1")
	desc, err := e.sdk.DescribeWorkflowExecution(ctx, workflowID, "")
	require.NoError(t, err)
	assert.True(t, proto.Equal(want, desc.GetWorkflowExecutionInfo().GetPriority()), "described: %v", desc.GetWorkflowExecutionInfo().GetPriority())
	started, scheduled := recordedPriorities(t, e, ctx, workflowID)
	assert.True(t, proto.Equal(want, started), "started event: %v", started)
	require.Len(t, scheduled, 1)
	assert.True(t, proto.Equal(want, scheduled[0]), "ExecuteTool scheduled event: %v", scheduled[0])

	status := toolgateCLI(t, "status", "--call-id", "cli-p1", "--scope", e.queue)
	assert.Contains(t, status, "\npriority  1, fairness key \"tenant-7\", weight 2\n")
	status = toolgateCLI(t, "status", "--call-id", "cli-p1", "--scope", e.queue, "--json")
	assert.Contains(t, status, `"priority":{"level":1,"fairnessKey":"tenant-7","fairnessWeight":2}`)
}
