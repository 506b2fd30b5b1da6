package metrics_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

func TestMain(m *testing.M) {
	os.Exit(devtest.Main(m))
}

// TestScrapeAfterCalls runs real calls through a worker whose client reports to a metrics
// Server, then scrapes the endpoint until toolgate's counters show exactly those calls.
func TestScrapeAfterCalls(t *testing.T) {
	srv, err := metrics.Start("127.0.0.1:0", metrics.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })

	dev := devtest.Server(t)
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.FrontendAddress(), Namespace: dev.Namespace(), MetricsHandler: srv.Handler()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	reg, err := toolbox.New(toolbox.Config{})
	require.NoError(t, err)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, dev.Namespace(), reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	tg := client.New(c, client.Options{TaskQueue: queue, Scope: queue, Namespace: dev.Namespace()})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	calls := []struct{ name, args string }{
		{"add", `{"left":1,"right":2}`},
		{"add", `{"left":3,"right":4}`},
		{"add", `{"left":5,"right":6}`},
		{"add", `{"left":"x"}`},
		{"add", `{}`},
		{"no_such_tool", `{}`},
	}
	for i, call := range calls {
		tc, err := toolcore.NewToolCall(fmt.Sprintf("metrics-%d", i), call.name, []byte(call.args))
		require.NoError(t, err)
		_, err = tg.Execute(ctx, tc)
		require.NoError(t, err)
	}

	want := map[string]float64{
		series(workflows.MetricToolCalls, "add", wire.OutcomeOK):                         3,
		series(workflows.MetricToolCalls, "add", "TOOL_ARGUMENTS_INVALID"):               2,
		series(workflows.MetricToolCalls, workflows.MetricToolUnknown, "TOOL_NOT_FOUND"): 1,
		series(workflows.MetricValidationRejections, "add", "TOOL_ARGUMENTS_INVALID"):    2,
		series(workflows.MetricToolCallDuration+"_count", "add", ""):                     5,
		series(activities.MetricToolExecutionDuration+"_count", "add", ""):               3,
		series(activities.MetricToolExecutionsInFlight, "add", ""):                       0,
	}
	var got map[string]float64
	require.Eventually(t, func() bool {
		got = scrape(t, srv.URL())
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		// The SDK's counter may lag toolgate's by a flush (reportInterval): a loaded CI run
		// scraped every toolgate series right and this one still at 0.
		return got["temporal_workflow_completed_total"] > 0
	}, 30*time.Second, 100*time.Millisecond, "toolgate metrics never matched the calls made")
	for k, v := range want {
		assert.Equal(t, v, got[k], k)
	}
	// The SDK's own metrics are served too.
	assert.Positive(t, got["temporal_workflow_completed_total"], "SDK metric temporal_workflow_completed_total")
}

// TestApprovalMetrics: a call of a tool that requires approval counts as requested while it
// waits (requested - decided = 1 waiting) and as decided once a reviewer approves it.
func TestApprovalMetrics(t *testing.T) {
	srv, err := metrics.Start("127.0.0.1:0", metrics.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	dev := devtest.Server(t)
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.FrontendAddress(), Namespace: dev.Namespace(), MetricsHandler: srv.Handler()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	deploy, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "deploy",
		Description: "Deploys; a reviewer approves every call.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute:     func(context.Context, map[string]any) (any, error) { return map[string]bool{"deployed": true}, nil },
		Options:     toolcore.Options{RequireApproval: true},
	})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(deploy)
	require.NoError(t, err)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, dev.Namespace(), reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	tg := client.New(c, client.Options{TaskQueue: queue, Scope: queue, Namespace: dev.Namespace()})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	call, err := toolcore.NewToolCall("metrics-approval", "deploy", []byte(`{}`))
	require.NoError(t, err)
	_, err = tg.Start(ctx, call)
	require.NoError(t, err)
	waitFor := func(what string, want map[string]float64) map[string]float64 {
		t.Helper()
		var got map[string]float64
		require.Eventually(t, func() bool {
			got = scrape(t, srv.URL())
			for k, v := range want {
				if got[k] != v {
					return false
				}
			}
			return true
		}, 30*time.Second, 100*time.Millisecond, "%s: got %v", what, got)
		return got
	}
	waitFor("one approval waiting", map[string]float64{
		series(workflows.MetricApprovalsRequested, "deploy", ""): 1,
		series(workflows.MetricApprovalsDecided, "deploy", ""):   0,
	})
	var state wire.ApprovalState
	require.Eventually(t, func() bool {
		state, err = tg.Approval(ctx, call.ID())
		return err == nil && state.Waiting
	}, 30*time.Second, 50*time.Millisecond, "the call waits for approval: %v", err)
	_, err = tg.Decide(ctx, call.ID(), true, wire.ApprovalDecision{CallHash: state.CallHash, Reviewer: "metrics-test"})
	require.NoError(t, err)
	res, err := tg.Result(ctx, call.ID())
	require.NoError(t, err)
	require.False(t, res.IsError(), res.Content())
	got := waitFor("the approval decided", map[string]float64{
		series(workflows.MetricApprovalsRequested, "deploy", ""):    1,
		series(workflows.MetricApprovalsDecided, "deploy", ""):      1,
		series(workflows.MetricToolCalls, "deploy", wire.OutcomeOK): 1,
	})
	// The approved call counts once, by its final outcome: not also as awaiting_approval.
	assert.Zero(t, got[series(workflows.MetricToolCalls, "deploy", wire.OutcomeAwaitingApproval)])
	assert.Equal(t, 1.0, got[series(workflows.MetricToolCallDuration+"_count", "deploy", "")])
}

// TestCallGaugesAndReadiness: the call gauges count the task queue's calls in visibility (a call
// waiting for approval, one running past StuckAfter) and drop back when they end; /readyz follows
// the worker's readiness: not before Start, ready while polling, not ready once Stop begins.
func TestCallGaugesAndReadiness(t *testing.T) {
	srv, err := metrics.Start("127.0.0.1:0", metrics.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	base := "http://" + srv.Addr()
	assert.Equal(t, http.StatusOK, probe(t, base+health.LivePath))
	assert.Equal(t, http.StatusServiceUnavailable, probe(t, base+health.ReadyPath), "no check yet")

	dev := devtest.Server(t)
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.FrontendAddress(), Namespace: dev.Namespace(), MetricsHandler: srv.Handler()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	release := make(chan struct{})
	hold, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "hold",
		Description: "Runs until the test releases it.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute: func(ctx context.Context, _ map[string]any) (any, error) {
			select {
			case <-release:
				return "released", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		Options: toolcore.Options{SideEffect: toolcore.Idempotent},
	})
	require.NoError(t, err)
	deploy, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "deploy",
		Description: "Deploys; a reviewer approves every call.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute:     func(context.Context, map[string]any) (any, error) { return "deployed", nil },
		Options:     toolcore.Options{RequireApproval: true},
	})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(hold, deploy)
	require.NoError(t, err)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, dev.Namespace(), reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	srv.Health().SetCheck(w.Ready)
	assert.Equal(t, http.StatusServiceUnavailable, probe(t, base+health.ReadyPath), "not started")
	require.NoError(t, w.Start())
	require.Eventually(t, func() bool { return probe(t, base+health.ReadyPath) == http.StatusOK },
		30*time.Second, 100*time.Millisecond, "ready once started")
	require.NoError(t, srv.CountCalls(c, metrics.CallCountOptions{Namespace: dev.Namespace(), TaskQueue: queue,
		Interval: time.Second, StuckAfter: time.Second}))

	tg := client.New(c, client.Options{TaskQueue: queue, Scope: queue, Namespace: dev.Namespace()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	held, err := toolcore.NewToolCall("gauges-hold", "hold", []byte(`{}`))
	require.NoError(t, err)
	_, err = tg.Start(ctx, held)
	require.NoError(t, err)
	approval, err := toolcore.NewToolCall("gauges-approval", "deploy", []byte(`{}`))
	require.NoError(t, err)
	_, err = tg.Start(ctx, approval)
	require.NoError(t, err)

	gauges := func(want map[string]float64) {
		t.Helper()
		var got map[string]float64
		require.Eventually(t, func() bool {
			got = scrapeQueue(t, srv.URL(), queue)
			for k, v := range want {
				if g, ok := got[k]; !ok || g != v {
					return false
				}
			}
			return true
		}, 30*time.Second, 100*time.Millisecond, "want %v, got %v", want, got)
		assert.Positive(t, got[metrics.MetricCallsCounted])
	}
	// The held call runs past StuckAfter (1 s); the approval wait is not counted as stuck.
	gauges(map[string]float64{metrics.MetricCallsRunning: 2, metrics.MetricCallsAwaitingApproval: 1, metrics.MetricCallsStuck: 1})

	close(release)
	var state wire.ApprovalState
	require.Eventually(t, func() bool {
		state, err = tg.Approval(ctx, approval.ID())
		return err == nil && state.Waiting
	}, 30*time.Second, 50*time.Millisecond, "the call waits for approval: %v", err)
	_, err = tg.Decide(ctx, approval.ID(), true, wire.ApprovalDecision{CallHash: state.CallHash, Reviewer: "metrics-test"})
	require.NoError(t, err)
	for _, id := range []string{held.ID(), approval.ID()} {
		res, err := tg.Result(ctx, id)
		require.NoError(t, err)
		require.False(t, res.IsError(), res.Content())
	}
	gauges(map[string]float64{metrics.MetricCallsRunning: 0, metrics.MetricCallsAwaitingApproval: 0, metrics.MetricCallsStuck: 0})

	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	require.Eventually(t, func() bool { return probe(t, base+health.ReadyPath) == http.StatusServiceUnavailable },
		30*time.Second, 100*time.Millisecond, "not ready once Stop begins")
	<-stopped
	assert.Equal(t, http.StatusOK, probe(t, base+health.LivePath), "live while the process serves")
}

// probe GETs url with a Host that is neither loopback nor allowed (as a kubelet's pod IP) and
// returns the status.
func probe(t *testing.T, url string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Host = "kubelet.example:9464"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode
}

// scrapeQueue reads the gauges of one task queue: each series with task_queue=queue by its bare
// name.
func scrapeQueue(t *testing.T, url, queue string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	got := map[string]float64{}
	for name, family := range families {
		for _, m := range family.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "task_queue" && l.GetValue() == queue {
					got[name] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return got
}

// TestHostCheck: the endpoint answers localhost, IP addresses and its allowed names; a page that
// rebinds its own DNS name gets 421 (issue 22 item 8).
func TestHostCheck(t *testing.T) {
	srv, err := metrics.Start("127.0.0.1:0", metrics.Options{AllowedHosts: []string{"scrape.internal"}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	_, port, err := net.SplitHostPort(srv.Addr())
	require.NoError(t, err)
	tests := []struct {
		host string
		want int
	}{
		{"evil.example", http.StatusMisdirectedRequest},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
		{"localhost.", http.StatusMisdirectedRequest},
		{"127.1", http.StatusMisdirectedRequest},
		{"::1", http.StatusMisdirectedRequest},
		{"localhost:" + port, http.StatusOK},
		{"127.0.0.1:" + port, http.StatusOK},
		{"10.1.2.3:" + port, http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"Scrape.Internal:" + port, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, srv.URL(), nil)
			require.NoError(t, err)
			req.Host = tt.host
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.want, resp.StatusCode)
		})
	}
}

// TestNonLoopbackNeedsOptIn: the endpoint has no authentication, so an address beyond loopback
// is refused unless AllowNonLoopback, which warns (issue 22 item 5).
func TestNonLoopbackNeedsOptIn(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "metrics.example:0"} {
		_, err := metrics.Start(listen, metrics.Options{})
		assert.ErrorIs(t, err, metrics.ErrNonLoopback, listen)
	}
	for _, listen := range []string{"127.0.0.1:0", "localhost:0"} {
		core, logs := observer.New(zapcore.WarnLevel)
		srv, err := metrics.Start(listen, metrics.Options{Logger: zap.New(core)})
		require.NoError(t, err, listen)
		assert.NoError(t, srv.Close())
		assert.Zero(t, logs.Len(), "no warning on loopback")
	}

	core, logs := observer.New(zapcore.WarnLevel)
	srv, err := metrics.Start("0.0.0.0:0", metrics.Options{Logger: zap.New(core), AllowNonLoopback: true})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	warned := logs.FilterMessageSnippet("WITHOUT authentication").All()
	require.Len(t, warned, 1)
	assert.Equal(t, "0.0.0.0:0", warned[0].ContextMap()["listen"])
	_, port, err := net.SplitHostPort(srv.Addr())
	require.NoError(t, err)
	resp, err := http.Get("http://127.0.0.1:" + port + metrics.Path)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// series names a sample by metric, tool and outcome-or-code, summed over the SDK's labels.
func series(name, tool, outcome string) string { return name + "|" + tool + "|" + outcome }

// scrape reads the endpoint and sums every sample by series (counters and gauges by value,
// histograms by sample count under <name>_count); a metric without a tool label is summed under
// its bare name.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	sums := map[string]float64{}
	for name, family := range families {
		for _, m := range family.GetMetric() {
			value := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			key := name
			if family.GetType() == dto.MetricType_HISTOGRAM {
				key, value = name+"_count", float64(m.GetHistogram().GetSampleCount())
			}
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if tool, ok := labels[workflows.MetricLabelTool]; ok {
				key = series(key, tool, labels[workflows.MetricLabelOutcome]+labels[workflows.MetricLabelCode])
			}
			sums[key] += value
		}
	}
	return sums
}
