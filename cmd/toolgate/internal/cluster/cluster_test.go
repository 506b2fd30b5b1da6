package cluster_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

var runCluster = flag.Bool("cluster", false, "run the long forms of the scenarios that start PostgreSQL and several Temporal server processes")

// TestMain runs this test binary as a cluster node when the harness starts it as one (one link of
// the server fewer than building cmd/clusternode).
func TestMain(m *testing.M) {
	if os.Getenv(cluster.EnvNodeSpec) != "" {
		os.Exit(cluster.NodeMain())
	}
	flag.Parse()
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// testTimeout bounds one scenario, cluster start included.
const testTimeout = 5 * time.Minute

// longForm skips t unless -cluster is set.
func longForm(t *testing.T) {
	t.Helper()
	if !*runCluster {
		t.Skip("long form: run with -cluster")
	}
}

// startCluster starts a two-node cluster whose nodes are this test binary (stopped at cleanup).
func startCluster(t *testing.T, ctx context.Context) *cluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL and two Temporal server processes")
	}
	self, err := os.Executable()
	require.NoError(t, err)
	started := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{NodeBinary: self, Nodes: 2})
	require.NoError(t, err)
	t.Logf("cluster of %d nodes ready in %v", len(c.Nodes), time.Since(started).Round(time.Millisecond))
	t.Cleanup(func() {
		stopping := time.Now()
		require.NoError(t, c.Stop())
		t.Logf("cluster stopped in %v", time.Since(stopping).Round(time.Millisecond))
	})
	return c
}

// toolgateBinary returns the toolgate binary ($TOOLGATE_BIN, or built once).
func toolgateBinary(t *testing.T) string {
	t.Helper()
	toolgate, err := testbin.Toolgate()
	require.NoError(t, err)
	return toolgate
}

// startWorker runs `toolgate worker` against frontend on queue until cleanup.
func startWorker(t *testing.T, toolgate, frontend, queue string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(toolgate, "worker", "--address", frontend, "--task-queue", queue)
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("toolgate worker: %v\n%s", err, stderr.String())
		}
	})
}

// dial returns an SDK client of frontend, closed at cleanup.
func dial(t *testing.T, frontend string) sdkclient.Client {
	t.Helper()
	c, err := sdkclient.Dial(sdkclient.Options{
		HostPort: frontend,
		Logger:   sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))),
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// TestTwoNodesServeCallsAndVisibility: calls submitted through both nodes' frontends all get
// their result from one worker, and PostgreSQL visibility finds every one by ToolName and by
// ToolOutcome.
func TestTwoNodesServeCallsAndVisibility(t *testing.T) {
	longForm(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, toolgate := startCluster(t, ctx), toolgateBinary(t)
	const queue = "cluster-two-nodes"
	startWorker(t, toolgate, c.Nodes[0].Frontend(), queue)

	var clients []*tgclient.Client
	var sdks []sdkclient.Client
	for _, frontend := range c.Frontends() {
		sdk := dial(t, frontend)
		sdks = append(sdks, sdk)
		clients = append(clients, tgclient.New(sdk, tgclient.Options{TaskQueue: queue}))
	}

	const calls = 20
	checkResults(t, runCalls(ctx, clients, "two-nodes", calls, nil))

	// Visibility is written asynchronously: wait until each node's frontend lists every call.
	for _, sdk := range sdks {
		for _, query := range []string{
			fmt.Sprintf("%s = 'add' AND TaskQueue = '%s'", wire.SearchAttributeToolName, queue),
			fmt.Sprintf("%s AND TaskQueue = '%s'", wire.QueryOKCalls, queue),
		} {
			require.NoError(t, waitListed(ctx, sdk, query, calls), query)
		}
	}
}

// waitListed polls visibility until query lists want workflows.
func waitListed(ctx context.Context, sdk sdkclient.Client, query string, want int) error {
	var got int
	for {
		resp, err := sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1000})
		if err == nil {
			got = len(resp.GetExecutions())
			if got == want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%q lists %d workflows, want %d (last error: %v)", query, got, want, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// callOutcome is what one call of runCalls got.
type callOutcome struct {
	result      toolcore.Result
	err         error
	resubmitted bool // the first Execute failed
}

// runCalls runs n add calls ("<prefix>-<i>" adds i and 1) at once, call i through clients[i %
// len(clients)]; a call whose Execute fails is executed again, same call ID, through clients[0].
// done, when not nil, is called after each call ends.
func runCalls(ctx context.Context, clients []*tgclient.Client, prefix string, n int, done func()) []callOutcome {
	out := make([]callOutcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if done != nil {
				defer done()
			}
			call, err := toolcore.NewToolCall(fmt.Sprintf("%s-%d", prefix, i), "add", fmt.Appendf(nil, `{"left":%d,"right":1}`, i))
			if err != nil {
				out[i].err = err
				return
			}
			out[i].result, out[i].err = clients[i%len(clients)].Execute(ctx, call)
			if out[i].err != nil && ctx.Err() == nil {
				out[i].resubmitted = true
				out[i].result, out[i].err = clients[0].Execute(ctx, call)
			}
		})
	}
	wg.Wait()
	return out
}

// checkResults requires every call of runCalls to have its sum.
func checkResults(t *testing.T, out []callOutcome) {
	t.Helper()
	for i, o := range out {
		require.NoError(t, o.err, "call %d", i)
		require.False(t, o.result.IsError(), "call %d: %s", i, o.result.Content())
		require.JSONEq(t, fmt.Sprintf(`{"sum":%d}`, i+1), o.result.Content(), "call %d", i)
	}
}

// TestNodeKilledMidLoad: one of two nodes is SIGKILLed while calls run through both frontends
// and started again, then PostgreSQL is crash-restarted (immediate shutdown) while calls still
// run; every call ends with its result, and visibility holds exactly one workflow per call ID,
// with the outcome ok, each listed within visibilityCatchUp of the last result.
func TestNodeKilledMidLoad(t *testing.T) {
	longForm(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, toolgate := startCluster(t, ctx), toolgateBinary(t)
	const queue = "cluster-node-killed"
	survivor, victim := c.Nodes[0], c.Nodes[1]
	startWorker(t, toolgate, survivor.Frontend(), queue)
	var clients []*tgclient.Client
	for _, frontend := range c.Frontends() {
		clients = append(clients, tgclient.New(dial(t, frontend), tgclient.Options{TaskQueue: queue}))
	}

	sdk := dial(t, survivor.Frontend())
	query := fmt.Sprintf("TaskQueue = '%s' AND ExecutionStatus != 'Running'", queue)
	watch := watchClosed(ctx, sdk, query)
	defer watch.stop()

	// The node is killed after killAfter calls ended, PostgreSQL restarted after restartAfter.
	const calls, killAfter, restartAfter = 60, 10, 30
	ended := make(chan struct{}, calls)
	restarted := make(chan error, 1)
	awaitEnded := func(n int) error {
		for range n {
			select {
			case <-ended:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	go func() {
		if err := awaitEnded(killAfter); err != nil {
			restarted <- err
			return
		}
		victim.Kill()
		if err := c.Restart(ctx, victim); err != nil {
			restarted <- fmt.Errorf("restart the killed node: %w", err)
			return
		}
		if err := awaitEnded(restartAfter - killAfter); err != nil {
			restarted <- err
			return
		}
		restarted <- c.Postgres.Restart(ctx)
	}()
	out := runCalls(ctx, clients, "node-killed", calls, func() { ended <- struct{}{} })
	require.NoError(t, <-restarted, "restart the node, then PostgreSQL")
	checkResults(t, out)
	resubmitted := 0
	for _, o := range out {
		if o.resubmitted {
			resubmitted++
		}
	}

	ids := make([]string, calls)
	for i := range calls {
		ids[i] = fmt.Sprintf("node-killed-%d", i)
	}
	if behind := watch.waitFor(ctx, ids, visibilityCatchUp); len(behind) > 0 {
		reportLagging(t, ctx, c, sdk, queue)
		require.Failf(t, "visibility behind", "%d of %d calls not listed closed %v after the last result: %v",
			len(behind), calls, visibilityCatchUp, behind)
	}
	watch.stop()
	lags := watch.lags(ids)
	t.Logf("FIGURES %d calls; node killed after %d ended, PostgreSQL crash-restarted after %d; %d resubmitted through the survivor; visibility lag max %v, p99 %v",
		calls, killAfter, restartAfter, resubmitted, lags[len(lags)-1].Round(time.Millisecond), lags[(len(lags)*99+99)/100-1].Round(time.Millisecond))
	resp, err := sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1000})
	require.NoError(t, err)
	perCall := map[string]int{}
	for _, e := range resp.GetExecutions() {
		var id string
		fields := e.GetSearchAttributes().GetIndexedFields()
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(fields[wire.SearchAttributeToolCallID], &id))
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, e.GetStatus(), "call %s", id)
		require.NotContains(t, fields, wire.SearchAttributeToolOutcome, "call %s: ok, so ToolOutcome unset", id)
		perCall[id]++
	}
	for i := range calls {
		require.Equal(t, 1, perCall[fmt.Sprintf("node-killed-%d", i)], "workflows of call node-killed-%d", i)
	}
}
