package activities

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
)

// timers is a client.MetricsHandler that keeps every timer recording with its tags.
type timers struct {
	tags map[string]string
	got  *[]recorded
}

type recorded struct {
	name string
	tags map[string]string
	d    time.Duration
}

func (h timers) WithTags(tags map[string]string) client.MetricsHandler {
	merged := map[string]string{}
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return timers{tags: merged, got: h.got}
}
func (timers) Counter(string) client.MetricsCounter { return client.MetricsNopHandler.Counter("") }
func (timers) Gauge(string) client.MetricsGauge     { return client.MetricsNopHandler.Gauge("") }
func (h timers) Timer(name string) client.MetricsTimer {
	return timerFunc(func(d time.Duration) { *h.got = append(*h.got, recorded{name, h.tags, d}) })
}

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }

func TestRecordWait(t *testing.T) {
	scheduled := time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		give activity.Info
		want []recorded
	}{
		{
			name: "first attempt: the wait on matching",
			give: activity.Info{ScheduledTime: scheduled, StartedTime: scheduled.Add(1500 * time.Millisecond), Attempt: 1},
			want: []recorded{{MetricToolWait, map[string]string{MetricLabelTool: "t", MetricLabelAttempt: "first"}, 1500 * time.Millisecond}},
		},
		{
			name: "retry: backoffs and Retry-After waits included",
			give: activity.Info{ScheduledTime: scheduled, StartedTime: scheduled.Add(30 * time.Second), Attempt: 3},
			want: []recorded{{MetricToolWait, map[string]string{MetricLabelTool: "t", MetricLabelAttempt: "retry"}, 30 * time.Second}},
		},
		{
			name: "no times from the server: nothing",
			give: activity.Info{Attempt: 1},
		},
		{
			name: "started before scheduled (clock skew): nothing",
			give: activity.Info{ScheduledTime: scheduled, StartedTime: scheduled.Add(-time.Second), Attempt: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []recorded
			recordWait(timers{got: &got}.WithTags(map[string]string{MetricLabelTool: "t"}), tt.give)
			assert.Equal(t, tt.want, got)
		})
	}
}
