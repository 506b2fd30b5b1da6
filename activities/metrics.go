package activities

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
)

// Metrics ExecuteTool emits through the worker client's MetricsHandler (client.Options), with the
// SDK's activity tags (namespace, task_queue, activity_type, workflow_type) plus tool. Activity
// code never replays, so every attempt is recorded once.
const (
	// MetricToolExecutionsInFlight is the number of ExecuteTool attempts running on this worker
	// process, as a gauge. Label: tool.
	MetricToolExecutionsInFlight = "toolgate_tool_executions_in_flight"
	// MetricToolExecutionDuration is the time one attempt ran the tool, in seconds, as a
	// histogram. Label: tool.
	MetricToolExecutionDuration = "toolgate_tool_execution_duration_seconds"
	// MetricToolWait is the time from the call's ExecuteTool being scheduled to this attempt's
	// start, in seconds, as a histogram: for a first attempt the wait on the server's matching (a
	// rate limit, a fairness turn, a priority level, a free slot of MaxConcurrent, or no worker);
	// for a retry that plus the backoffs and Retry-After waits before it. Labels: tool, attempt
	// ("first" or "retry"). It is the SDK's temporal_activity_schedule_to_start_latency by tool,
	// for tools that share a task queue as well as for those with a queue of their own.
	MetricToolWait = "toolgate_tool_wait_seconds"
	// MetricLabelTool is the label naming the tool (a registered name: attempts of unknown tools
	// never reach the tool).
	MetricLabelTool = "tool"
	// MetricLabelAttempt says whether MetricToolWait measures a first attempt or a retry.
	MetricLabelAttempt = "attempt"
)

// inFlight counts running attempts per tool for MetricToolExecutionsInFlight.
type inFlight struct {
	byTool sync.Map // tool name -> *atomic.Int64
}

// start records an attempt of tool starting and returns the func that records its end.
func (f *inFlight) start(ctx context.Context, tool string) (end func()) {
	v, _ := f.byTool.LoadOrStore(tool, new(atomic.Int64))
	n := v.(*atomic.Int64)
	h := activity.GetMetricsHandler(ctx).WithTags(map[string]string{MetricLabelTool: tool})
	gauge := h.Gauge(MetricToolExecutionsInFlight)
	gauge.Update(float64(n.Add(1)))
	recordWait(h, activity.GetInfo(ctx))
	began := time.Now()
	return func() {
		h.Timer(MetricToolExecutionDuration).Record(time.Since(began))
		gauge.Update(float64(n.Add(-1)))
	}
}

// recordWait records MetricToolWait of the attempt info describes (nothing when the server gave
// no times, as the SDK's test environment may not).
func recordWait(h client.MetricsHandler, info activity.Info) {
	if info.ScheduledTime.IsZero() || info.StartedTime.Before(info.ScheduledTime) {
		return
	}
	attempt := "first"
	if info.Attempt > 1 {
		attempt = "retry"
	}
	h.WithTags(map[string]string{MetricLabelAttempt: attempt}).Timer(MetricToolWait).Record(info.StartedTime.Sub(info.ScheduledTime))
}
