package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// history builds events of the given types, at the given milliseconds after t0.
func history(t0 time.Time, steps ...any) []*historypb.HistoryEvent {
	var events []*historypb.HistoryEvent
	for i := 0; i < len(steps); i += 2 {
		at := t0.Add(time.Duration(steps[i].(int)) * time.Millisecond)
		events = append(events, &historypb.HistoryEvent{
			EventId:   int64(len(events) + 1),
			EventType: steps[i+1].(enumspb.EventType),
			EventTime: timestamppb.New(at),
		})
	}
	return events
}

func TestSegments(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	events := history(t0,
		1, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		1, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
		4, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED,
		7, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
		7, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
		8, enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED,
		10, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
		10, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
		12, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED,
		15, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
		16, enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
		16, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
	)
	r := record{start: t0, end: t0.Add(20 * time.Millisecond)}
	segs, names := segments(r, events)
	msd := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	assert.Equal(t, map[string]time.Duration{
		segToStart:      msd(1),
		segServerOther:  msd(1), // scheduled events and the upsert after its WFT
		"wft1 dispatch": msd(3),
		"wft1 run":      msd(3),
		segActDispatch:  msd(1),
		segActRun:       msd(2),
		"wft2 dispatch": msd(2),
		"wft2 run":      msd(3),
		segCloseToCall:  msd(4),
	}, segs)
	assert.Equal(t, []string{segToStart, segServerOther, "wft1 dispatch", "wft1 run", segActDispatch, segActRun,
		"wft2 dispatch", "wft2 run", segCloseToCall}, names)
	var sum time.Duration
	for _, d := range segs {
		sum += d
	}
	assert.Equal(t, r.took(), sum, "segments add up to the call")
}

func TestSpread(t *testing.T) {
	rs := make([]record, 10)
	for i := range rs {
		rs[i].workflowID = string(rune('a' + i))
	}
	tests := []struct {
		name string
		n    int
		want string
	}{
		{name: "fewer than n", n: 20, want: "abcdefghij"},
		{name: "every other", n: 5, want: "acegi"},
		{name: "one", n: 1, want: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			for _, r := range spread(rs, tt.n) {
				got += r.workflowID
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
