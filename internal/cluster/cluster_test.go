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
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/cluster"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

var runCluster = flag.Bool("cluster", false, "run the tests that start PostgreSQL and several Temporal server processes")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// testTimeout bounds one scenario, cluster start included.
const testTimeout = 5 * time.Minute

// startCluster starts a two-node cluster (stopped at cleanup) and returns it with the toolgate
// binary.
func startCluster(t *testing.T, ctx context.Context) (*cluster.Cluster, string) {
	t.Helper()
	if !*runCluster {
		t.Skip("starts PostgreSQL and two Temporal server processes: run with -cluster")
	}
	toolgate, err := testbin.Toolgate()
	require.NoError(t, err)
	node, err := testbin.Build("./internal/cluster/cmd/clusternode", "clusternode")
	require.NoError(t, err)
	c, err := cluster.Start(ctx, cluster.Options{NodeBinary: node, Nodes: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	return c, toolgate
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
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, toolgate := startCluster(t, ctx)
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
	results := make([]toolcore.Result, calls)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			call, err := toolcore.NewToolCall(fmt.Sprintf("cluster-%d", i), "add", fmt.Appendf(nil, `{"left":%d,"right":1}`, i))
			if err != nil {
				errs[i] = err
				return
			}
			results[i], errs[i] = clients[i%len(clients)].Execute(ctx, call)
		})
	}
	wg.Wait()
	for i := range calls {
		require.NoError(t, errs[i], "call %d", i)
		require.False(t, results[i].IsError(), "call %d: %s", i, results[i].Content())
		require.JSONEq(t, fmt.Sprintf(`{"sum":%d}`, i+1), results[i].Content(), "call %d", i)
	}

	// Visibility is written asynchronously: wait until each node's frontend lists every call.
	for _, sdk := range sdks {
		for _, query := range []string{
			fmt.Sprintf("%s = 'add' AND TaskQueue = '%s'", wire.SearchAttributeToolName, queue),
			fmt.Sprintf("%s = '%s' AND TaskQueue = '%s'", wire.SearchAttributeToolOutcome, wire.OutcomeOK, queue),
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
