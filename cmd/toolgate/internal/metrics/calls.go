package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/wire"
)

// The call gauges: counts of the task queue's calls that visibility lists, the same whichever
// worker reports them (several workers export one value each: aggregate with max, not sum).
const (
	MetricCallsRunning          = "toolgate_calls_running"
	MetricCallsAwaitingApproval = "toolgate_calls_awaiting_approval"
	MetricCallsStuck            = "toolgate_calls_stuck"
	// MetricCallsCounted is when the gauges were last counted (Unix seconds): a value far
	// behind time() means they are stale (visibility unreachable or refusing the queries).
	MetricCallsCounted = "toolgate_calls_counted_timestamp_seconds"
)

// Defaults of CallCountOptions.
const (
	DefaultCountInterval = 30 * time.Second
	DefaultStuckAfter    = time.Hour
	// MinCountInterval bounds how often the counts run: each round is three
	// CountWorkflowExecutions requests to visibility per worker.
	MinCountInterval = time.Second
	// countTimeout bounds one round of counts.
	countTimeout = 20 * time.Second
)

// CallCountOptions configure Server.CountCalls. They work at their zero value.
type CallCountOptions struct {
	// Namespace the calls run in. Optional: default "default".
	Namespace string
	// TaskQueue whose calls (ToolCallWorkflow executions started on it) are counted; it is the
	// task_queue label. Optional: default wire.DefaultTaskQueue.
	TaskQueue string
	// Interval between two rounds of counts, whatever the scrape rate. Optional: default 30 s;
	// at least MinCountInterval.
	Interval time.Duration
	// StuckAfter is how long a call may run, not counting a call waiting for approval, before
	// it counts as stuck. Optional: default 1 h.
	StuckAfter time.Duration
	// NoSearchAttributes says the namespace lacks toolgate's search attributes: the calls
	// awaiting approval are not counted (the gauge is absent) and stuck counts them too.
	// Optional: default false.
	NoSearchAttributes bool
	// Logger receives a line when a round of counts fails, and when counting works again.
	// Optional: default the Server's.
	Logger *zap.Logger
	// now is the clock; nil is time.Now.
	now func() time.Time
}

// callCounts is the loop of CountCalls.
type callCounts struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (c *callCounts) stop() {
	if c == nil {
		return
	}
	c.cancel()
	<-c.done
}

// CountCalls counts the task queue's running calls, those waiting for approval and those
// running longer than StuckAfter in visibility (CountWorkflowExecutions) every Interval, on a
// background loop that Close stops, and serves them as the gauges MetricCalls*, labeled with
// namespace and task_queue. A scrape never reaches visibility; a gauge is absent until its first
// count, and keeps its last value while counting fails (MetricCallsCounted tells its age).
// CountCalls is called at most once per Server.
func (s *Server) CountCalls(c client.Client, opts CallCountOptions) error {
	if s.counts != nil {
		return errors.New("count calls: already counting")
	}
	opts = opts.withDefaults()
	if opts.Logger == nil {
		opts.Logger = s.logger
	}
	labels := []string{"namespace", "task_queue"}
	g := callGauges{
		running:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricCallsRunning, Help: "Tool calls of the task queue running, as visibility counts them."}, labels),
		approval: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricCallsAwaitingApproval, Help: "Tool calls of the task queue waiting for an approval decision (ToolOutcome = 'awaiting_approval')."}, labels),
		stuck:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricCallsStuck, Help: "Tool calls of the task queue running longer than the stuck threshold, not counting those waiting for approval."}, labels),
		counted:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricCallsCounted, Help: "When the call gauges were last counted, in Unix seconds."}, labels),
	}
	for _, v := range []*prometheus.GaugeVec{g.running, g.approval, g.stuck, g.counted} {
		if err := s.registry.Register(v); err != nil {
			return fmt.Errorf("count calls: register gauge: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.counts = &callCounts{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.counts.done)
		counter := callCounter{client: c, opts: opts, gauges: g}
		ticker := time.NewTicker(opts.Interval)
		defer ticker.Stop()
		for {
			counter.round(ctx)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return nil
}

func (o CallCountOptions) withDefaults() CallCountOptions {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.TaskQueue == "" {
		o.TaskQueue = wire.DefaultTaskQueue
	}
	if o.Interval <= 0 {
		o.Interval = DefaultCountInterval
	}
	o.Interval = max(o.Interval, MinCountInterval)
	if o.StuckAfter <= 0 {
		o.StuckAfter = DefaultStuckAfter
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o
}

type callGauges struct {
	running, approval, stuck, counted *prometheus.GaugeVec
}

type callCounter struct {
	client  client.Client
	opts    CallCountOptions
	gauges  callGauges
	failing bool // the last round failed (logged once until a round works)
}

// round counts once and sets the gauges; a failed count leaves every gauge as it was.
func (c *callCounter) round(loop context.Context) {
	ctx, cancel := context.WithTimeout(loop, countTimeout)
	defer cancel()
	now := c.opts.now()
	queries := callQueries(c.opts.TaskQueue, now.Add(-c.opts.StuckAfter), !c.opts.NoSearchAttributes)
	counts := make([]int64, len(queries))
	var wg sync.WaitGroup
	errs := make([]error, len(queries))
	for i, q := range queries {
		wg.Go(func() {
			resp, err := c.client.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: c.opts.Namespace, Query: q.query})
			if err != nil {
				errs[i] = fmt.Errorf("count %s calls: %w", q.name, err)
				return
			}
			counts[i] = resp.GetCount()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if loop.Err() != nil {
			return // stopping
		}
		if !c.failing {
			c.opts.Logger.Warn("cannot count calls in visibility; the call gauges keep their last values", zap.Error(err))
		}
		c.failing = true
		return
	}
	if c.failing {
		c.opts.Logger.Info("counting calls in visibility again")
	}
	c.failing = false
	lv := []string{c.opts.Namespace, c.opts.TaskQueue}
	for i, q := range queries {
		q.gauge(c.gauges).WithLabelValues(lv...).Set(float64(counts[i]))
	}
	c.gauges.counted.WithLabelValues(lv...).Set(float64(now.UnixNano()) / 1e9)
}

// callQuery is one count of a round.
type callQuery struct {
	name  string
	query string
	gauge func(callGauges) *prometheus.GaugeVec
}

// callQueries are the visibility queries of a round: the queue's running ToolCallWorkflows,
// those awaiting approval (only with the search attributes) and those started before
// stuckBefore and not awaiting approval.
func callQueries(taskQueue string, stuckBefore time.Time, searchAttributes bool) []callQuery {
	running := fmt.Sprintf("WorkflowType = %s AND TaskQueue = %s AND ExecutionStatus = 'Running'",
		wire.QueryString(wire.ToolCallWorkflowName), wire.QueryString(taskQueue))
	stuck := running + " AND StartTime < " + wire.QueryString(stuckBefore.UTC().Format(time.RFC3339Nano))
	qs := []callQuery{{name: "running", query: running, gauge: func(g callGauges) *prometheus.GaugeVec { return g.running }}}
	if searchAttributes {
		awaiting := wire.SearchAttributeToolOutcome + " = " + wire.QueryString(wire.OutcomeAwaitingApproval)
		qs = append(qs, callQuery{name: "awaiting approval", query: running + " AND " + awaiting,
			gauge: func(g callGauges) *prometheus.GaugeVec { return g.approval }})
		stuck += " AND (" + wire.SearchAttributeToolOutcome + " IS NULL OR " + wire.SearchAttributeToolOutcome + " != " + wire.QueryString(wire.OutcomeAwaitingApproval) + ")"
	}
	return append(qs, callQuery{name: "stuck", query: stuck, gauge: func(g callGauges) *prometheus.GaugeVec { return g.stuck }})
}
