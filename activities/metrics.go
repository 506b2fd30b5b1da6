package activities

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
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
	// MetricLabelTool is the label naming the tool (a registered name: attempts of unknown tools
	// never reach the tool).
	MetricLabelTool = "tool"
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
	began := time.Now()
	return func() {
		h.Timer(MetricToolExecutionDuration).Record(time.Since(began))
		gauge.Update(float64(n.Add(-1)))
	}
}
