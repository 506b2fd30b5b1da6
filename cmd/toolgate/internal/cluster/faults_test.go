package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// faultSizes are the calls of TestClusterFaults: held is the first batch (every call held on the
// worker that is killed), loaded the second (half of it gated, running when the faults hit).
// faultSizes is how large the scenario is and which faults it injects.
type faultSizes struct {
	held, loaded int
	// restartPostgres: crash-restart PostgreSQL too. Long form only: once in a cold make test
	// (load 4-8) one call's visibility record was still not closed 4.5 min after a restart,
	// while its history and result were right; see RELIABILITY.md.
	restartPostgres bool
}

func clusterFaultSizes() faultSizes {
	if *runCluster {
		return faultSizes{held: 30, loaded: 90, restartPostgres: true}
	}
	return faultSizes{held: 6, loaded: 12}
}

// faultTools are the side-effect classes the scenario rotates through.
var faultTools = []string{faults.ToolUnsafe, faults.ToolIdempotent, faults.ToolReadOnly}

// TestClusterFaults: two server nodes on one PostgreSQL and two worker processes serving the
// ledger tools of internal/faults. A first batch of calls runs on a worker that holds every
// attempt; a second batch runs on both workers, half of it waiting on a gate. Then, with every
// call's tool running or done, the holding worker is SIGKILLed, one server node is SIGKILLed,
// PostgreSQL is restarted from an immediate shutdown (crash recovery; long form only), the gate
// opens and the node is started again. Every call ends with exactly one linked result; no Unsafe tool runs
// twice (the held ones end with the outcome-unknown TOOL_EXECUTION_FAILED and no effect); a
// retried tool keeps its idempotency key; PostgreSQL visibility lists exactly one closed workflow
// per call, with its ToolName, ToolCallId and ToolOutcome.
//
// The short form runs in `make test`; -cluster runs it with more calls and the PostgreSQL restart.
func TestClusterFaults(t *testing.T) {
	sz := clusterFaultSizes()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	began := time.Now()
	workerBin := make(chan buildResult, 1)
	go func() {
		path, err := testbin.Build("./internal/faults/cmd/faultworker", "faultworker")
		workerBin <- buildResult{path, err}
	}()
	c := startCluster(t, ctx)
	fw := <-workerBin
	require.NoError(t, fw.err)

	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.jsonl")
	const queue = "cluster-faults"
	survivor, victim := c.Nodes[0], c.Nodes[1]
	var clients []*tgclient.Client
	for _, frontend := range c.Frontends() {
		clients = append(clients, tgclient.New(dial(t, frontend), tgclient.Options{TaskQueue: queue}))
	}
	start := func(calls []toolcore.ToolCall) {
		t.Helper()
		for i, call := range calls {
			_, err := clients[i%len(clients)].Start(ctx, call)
			require.NoError(t, err, call.ID())
		}
	}
	newCalls := func(prefix string, n int, gate func(i int) string) []toolcore.ToolCall {
		var calls []toolcore.ToolCall
		for i := range n {
			tool := faultTools[i%len(faultTools)]
			args, err := json.Marshal(faults.Args{Gate: gate(i)})
			require.NoError(t, err)
			call, err := toolcore.NewToolCall(fmt.Sprintf("%s-%d-%s", prefix, i, tool), tool, args)
			require.NoError(t, err)
			calls = append(calls, call)
		}
		return calls
	}

	// The holding worker is alone on the queue: the first batch runs on it.
	holding := startFaultWorker(t, fw.path, victim.Frontend(), queue, ledger, true)
	held := newCalls("held", sz.held, func(int) string { return "" })
	start(held)
	require.NoError(t, waitLedger(ctx, ledger, func(tl faults.Tally) bool { return allRan(tl, held) }), "the first batch runs on the holding worker")

	startFaultWorker(t, fw.path, survivor.Frontend(), queue, ledger, false)
	const gate = "release"
	loaded := newCalls("loaded", sz.loaded, func(i int) string { return map[bool]string{true: gate}[i%2 == 1] })
	start(loaded)
	require.NoError(t, waitLedger(ctx, ledger, func(tl faults.Tally) bool { return allRan(tl, loaded) }), "every call of the second batch runs")

	faultsAt := time.Now()
	holding.kill()
	victim.Kill()
	if sz.restartPostgres {
		require.NoError(t, c.Postgres.Restart(ctx), "restart PostgreSQL")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, gate), nil, 0o600))
	require.NoError(t, c.Restart(ctx, victim), "restart the killed node")
	t.Logf("faults injected and node back in %v", time.Since(faultsAt).Round(time.Millisecond))

	calls := append(append([]toolcore.ToolCall(nil), held...), loaded...)
	results := awaitResults(ctx, clients[0], calls)
	records, err := faults.ReadLedger(ledger)
	require.NoError(t, err)
	tally := faults.Count(records)
	heldOn := map[string]bool{} // calls whose first attempt ran on the holding worker
	for _, r := range records {
		if r.Kind == faults.KindRun && r.Attempt == 1 && r.PID == holding.pid {
			heldOn[r.Call] = true
		}
	}
	outcomes := map[string]string{} // the ToolOutcome each call's result implies
	count := map[string]int{}
	for _, call := range calls {
		id, tool := call.ID(), call.Name()
		o := results[id]
		runs, effects := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect)
		if !assert.Equal(t, faults.TerminalResult, o.kind, "%s: one linked result (error: %v)", id, o.err) {
			continue
		}
		assert.Equal(t, id, o.res.ToolCallID(), "%s: result linked to its call", id)
		out, ok := effectOutput(o.res)
		switch {
		case ok:
			outcomes[id] = "" // an ok call closes with ToolOutcome unset (wire.QueryOKCalls)
			count["ok"]++
			assert.Equal(t, "toolcall-"+id, out.Key, "%s: idempotency key", id)
			assert.GreaterOrEqual(t, effects, 1, "%s: a success committed its effect", id)
		case tool == faults.ToolUnsafe && o.res.ErrorCode() == toolcore.CodeToolExecutionFailed:
			outcomes[id] = toolcore.CodeToolExecutionFailed.String()
			count["unsafeOutcomeUnknown"]++
			assert.True(t, strings.HasPrefix(o.res.ErrorMessage(), workflows.OutcomeUnknownMessage), "%s: %s", id, o.res.ErrorMessage())
		default:
			t.Errorf("%s: unexpected result %s", id, o.res.Content())
			continue
		}
		if tool == faults.ToolUnsafe {
			assert.Equal(t, 1, runs, "%s: an Unsafe tool runs exactly once", id)
			assert.LessOrEqual(t, effects, 1, id)
		} else {
			assert.LessOrEqual(t, runs, faults.RetriedAttempts, id)
			assert.LessOrEqual(t, effects, runs, id)
		}
		if heldOn[id] {
			count["heldOnKilledWorker"]++
			if tool == faults.ToolUnsafe {
				assert.Zero(t, effects, "%s: held on the killed worker, no effect", id)
			} else if assert.True(t, ok, "%s: a retried tool completes on the other worker", id) {
				assert.GreaterOrEqual(t, out.Attempt, 2, id)
			}
		}
		if runs > 1 {
			count["repeatedRuns"]++
		}
		count["resultRetries"] += o.retries
	}
	for _, call := range held {
		assert.True(t, heldOn[call.ID()], "%s of the first batch ran on the holding worker", call.ID())
	}

	// PostgreSQL visibility: one closed workflow per call, with its three attributes.
	sdk := dial(t, survivor.Frontend())
	closed := fmt.Sprintf("TaskQueue = '%s' AND ExecutionStatus != 'Running'", queue)
	require.NoError(t, waitListed(ctx, sdk, closed, len(calls)), closed)
	resp, err := sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: closed, PageSize: 1000})
	require.NoError(t, err)
	byCall := map[string]int{}
	names := map[string]string{}
	for _, call := range calls {
		names[call.ID()] = call.Name()
	}
	for _, e := range resp.GetExecutions() {
		fields := e.GetSearchAttributes().GetIndexedFields()
		id, name, outcome := keyword(t, fields[wire.SearchAttributeToolCallID]), keyword(t, fields[wire.SearchAttributeToolName]), keyword(t, fields[wire.SearchAttributeToolOutcome])
		byCall[id]++
		assert.Equal(t, names[id], name, "ToolName of %s", id)
		assert.Equal(t, outcomes[id], outcome, "ToolOutcome of %s", id)
	}
	for _, call := range calls {
		assert.Equal(t, 1, byCall[call.ID()], "workflows of %s", call.ID())
	}
	for _, tool := range faultTools {
		query := fmt.Sprintf("%s = '%s' AND TaskQueue = '%s'", wire.SearchAttributeToolName, tool, queue)
		assert.NoError(t, waitListed(ctx, sdk, query, (len(held)+len(loaded))/len(faultTools)), query)
	}
	query := fmt.Sprintf("%s = '%s' AND TaskQueue = '%s'", wire.SearchAttributeToolOutcome, toolcore.CodeToolExecutionFailed, queue)
	assert.NoError(t, waitListed(ctx, sdk, query, count["unsafeOutcomeUnknown"]), query)
	figures, _ := json.Marshal(count)
	t.Logf("FIGURES %d calls, faults: worker, node and PostgreSQL; %s; %v", len(calls), figures, time.Since(began).Round(100*time.Millisecond))
}

type buildResult struct {
	path string
	err  error
}

// allRan reports whether every call has at least one "run" record.
func allRan(tl faults.Tally, calls []toolcore.ToolCall) bool {
	for _, c := range calls {
		if tl.Of(c.ID(), faults.KindRun) == 0 {
			return false
		}
	}
	return true
}

// waitLedger polls the ledger until cond holds for its tally.
func waitLedger(ctx context.Context, path string, cond func(faults.Tally) bool) error {
	for {
		records, err := faults.ReadLedger(path)
		if err != nil {
			return err
		}
		if cond(faults.Count(records)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ledger %s: %w", path, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// callResult is what awaitResults got for one call.
type callResult struct {
	res     toolcore.Result
	err     error
	kind    faults.Terminal
	retries int // Result calls that ended without an outcome
}

// awaitResults waits for every call's outcome with cl.Result, concurrently. An RPC error while
// the cluster recovers (no terminal outcome) is waited out by asking again, as an agent would.
func awaitResults(ctx context.Context, cl *tgclient.Client, calls []toolcore.ToolCall) map[string]callResult {
	var mu sync.Mutex
	out := make(map[string]callResult, len(calls))
	var wg sync.WaitGroup
	for _, call := range calls {
		wg.Go(func() {
			var r callResult
			for {
				r.res, r.err = cl.Result(ctx, call.ID())
				r.kind = faults.Classify(r.res, r.err)
				if r.kind != faults.TerminalError || ctx.Err() != nil {
					break
				}
				r.retries++
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
			mu.Lock()
			out[call.ID()] = r
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// effectOutput decodes the content of a successful effect tool result.
func effectOutput(res toolcore.Result) (faults.EffectOutput, bool) {
	var out faults.EffectOutput
	if res.IsZero() || res.IsError() || json.Unmarshal([]byte(res.Content()), &out) != nil {
		return out, false
	}
	return out, true
}

// keyword decodes a Keyword search attribute.
func keyword(t *testing.T, p interface{ GetData() []byte }) string {
	t.Helper()
	var s string
	if p == nil || len(p.GetData()) == 0 { // a nil *Payload in a non-nil interface: unset
		return ""
	}
	require.NoError(t, json.Unmarshal(p.GetData(), &s))
	return s
}

// faultWorker is a running faultworker process.
type faultWorker struct {
	cmd    *exec.Cmd
	pid    int
	done   chan struct{}
	stderr testbin.SyncBuffer
}

// startFaultWorker starts `faultworker worker` on frontend and queue, appending to ledger
// (holding every attempt when hold), waits until it polls, and kills it at cleanup.
func startFaultWorker(t *testing.T, bin, frontend, queue, ledger string, hold bool) *faultWorker {
	t.Helper()
	args := []string{"worker", "-address", frontend, "-task-queue", queue, "-ledger", ledger, "-log-level", "error"}
	if hold {
		args = append(args, "-hold")
	}
	w := &faultWorker{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	w.cmd.Stderr = &w.stderr
	w.cmd.Env = testbin.ChildEnv()
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := w.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, w.cmd.Start())
	sc := bufio.NewScanner(stdout)
	ready := sc.Scan()
	go func() {
		for sc.Scan() {
		}
		_ = w.cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(w.kill)
	pid, ok := strings.CutPrefix(sc.Text(), "ready ")
	if !ready || !ok {
		w.kill()
		require.FailNow(t, "faultworker did not start", "%s", w.stderr.String())
	}
	w.pid, err = strconv.Atoi(pid)
	require.NoError(t, err)
	return w
}

// kill sends SIGKILL and waits until the process is gone.
func (w *faultWorker) kill() {
	_ = w.cmd.Process.Kill()
	<-w.done
}
