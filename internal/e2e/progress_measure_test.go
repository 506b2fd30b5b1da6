package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// TestMeasureProgressHeartbeats is a measurement, not a test (BENCHMARKS.md, progress windows):
// with TOOLGATE_MEASURE_PROGRESS=1 it prints, per call of tools that report at different paces,
// the heartbeat RPCs the worker's client sent (worker.ActionCounter) and the reports
// client.Execute's OnProgress got.
func TestMeasureProgressHeartbeats(t *testing.T) {
	if os.Getenv("TOOLGATE_MEASURE_PROGRESS") != "1" {
		t.Skip("a measurement: set TOOLGATE_MEASURE_PROGRESS=1")
	}
	srv := devtest.Server(t)
	counter := worker.NewActionCounter(nil)
	wc, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(),
		ConnectionOptions: sdkclient.ConnectionOptions{DialOptions: []grpc.DialOption{worker.DialOption(), counter.DialOption()}}})
	require.NoError(t, err)
	t.Cleanup(wc.Close)
	// paced reports n times, gap apart (0: in a tight loop), then returns.
	paced := func(n int, gap time.Duration) func(ctx context.Context, _ args) (any, error) {
		return func(ctx context.Context, _ args) (any, error) {
			var tick <-chan time.Time
			if gap > 0 {
				ticker := time.NewTicker(gap)
				defer ticker.Stop()
				tick = ticker.C
			}
			for k := 1; k <= n; k++ {
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: int64(k), Total: int64(n)})
				if tick != nil {
					<-tick
				}
			}
			return "ok", nil
		}
	}
	shapes := []struct {
		tool    string
		reports int
		gap     time.Duration
	}{
		{"none", 0, 0}, {"burst", 100, 0}, {"every100ms", 20, 100 * time.Millisecond},
		{"every5ms", 400, 5 * time.Millisecond}, {"every2ms", 1000, 2 * time.Millisecond},
	}
	e := &env{t: t, queue: devtest.TaskQueue(t), sdk: devtest.Client(t)}
	var tools []toolcore.Tool
	for _, s := range shapes {
		tools = append(tools, define(t, s.tool, toolcore.Options{SideEffect: toolcore.ReadOnly}, paced(s.reports, s.gap)))
	}
	e.startWorker(wc, 5*time.Second, tools...)
	for _, s := range shapes {
		for run := range 3 {
			delivered := 0
			cl := client.New(e.sdk, client.Options{TaskQueue: e.queue, Scope: e.queue, Namespace: srv.Namespace(),
				OnProgress: func(client.ProgressEvent) { delivered++ }})
			before := counter.Counts()[worker.ActionHeartbeat]
			_, err := cl.Execute(e.ctx(), call(t, fmt.Sprintf("measure-%s-%d", s.tool, run), s.tool, `{}`))
			require.NoError(t, err)
			t.Logf("%s (%d reports) run %d: %d heartbeats, %d reports delivered", s.tool, s.reports, run,
				counter.Counts()[worker.ActionHeartbeat]-before, delivered)
		}
	}
}
