package bench

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
)

// fetchHistory reads the whole history of the latest run of workflowID.
func (h *harness) fetchHistory(ctx context.Context, workflowID string) ([]*historypb.HistoryEvent, error) {
	it := h.sdk.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("read history of %s: %w", workflowID, err)
		}
		events = append(events, e)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("read history of %s: no events", workflowID)
	}
	return events, nil
}

// breakdown reads the histories of up to BreakdownSample measured calls per subject (evenly
// spread) and splits each call's wall time into segments between its events.
func (h *harness) breakdown(ctx context.Context, records map[string][]record) ([]BreakdownRow, error) {
	total := 0
	for _, s := range h.subjects {
		total += min(len(records[s.name]), h.cfg.BreakdownSample)
	}
	done := 0
	h.cfg.Progress(Progress{Phase: "breakdown", Total: total})
	rows := make([]BreakdownRow, 0, len(h.subjects))
	for _, s := range h.subjects {
		sample := spread(records[s.name], h.cfg.BreakdownSample)
		var calls []map[string]time.Duration
		var order []string
		for _, r := range sample {
			events, err := h.fetchHistory(ctx, r.workflowID)
			if err != nil {
				return nil, err
			}
			segs, names := segments(r, events)
			calls = append(calls, segs)
			for _, n := range names {
				if !contains(order, n) {
					order = append(order, n)
				}
			}
			done++
			h.cfg.Progress(Progress{Phase: "breakdown", Done: done, Total: total})
		}
		rows = append(rows, segmentRow(s.name, calls, order))
	}
	return rows, nil
}

// spread returns up to n records evenly spaced through rs.
func spread(rs []record, n int) []record {
	if len(rs) <= n {
		return rs
	}
	out := make([]record, 0, n)
	for i := range n {
		out = append(out, rs[i*len(rs)/n])
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Segment names. Each is the time between two events of the call's history (the server stamps
// them), or between the caller's clock and the first or last event.
const (
	segToStart     = "call to started event"
	segDispatch    = "wft%d dispatch"
	segRun         = "wft%d run"
	segActDispatch = "activity dispatch"
	segActRun      = "activity run"
	segServerOther = "server, other steps"
	segCloseToCall = "closed to caller"
)

// segments splits r's wall time by the events of its history: every gap between two
// consecutive events is named by the event that ends it. The segments add up to r.took().
// It returns them with their names in order of first appearance.
func segments(r record, events []*historypb.HistoryEvent) (map[string]time.Duration, []string) {
	var st segmentTimes
	add := st.add
	add(segToStart, events[0].GetEventTime().AsTime().Sub(r.start))
	wft := 0
	for i := 1; i < len(events); i++ {
		d := events[i].GetEventTime().AsTime().Sub(events[i-1].GetEventTime().AsTime())
		switch events[i].GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			wft++
			add(fmt.Sprintf(segDispatch, wft), d)
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			add(fmt.Sprintf(segRun, wft), d)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			add(segActDispatch, d)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			add(segActRun, d)
		default:
			add(segServerOther, d)
		}
	}
	add(segCloseToCall, r.end.Sub(events[len(events)-1].GetEventTime().AsTime()))
	return st.byName, st.names
}

// segmentTimes adds up a call's stretches by segment name, keeping the names in order of first
// appearance.
type segmentTimes struct {
	byName map[string]time.Duration
	names  []string
}

func (s *segmentTimes) add(name string, d time.Duration) {
	if _, ok := s.byName[name]; !ok {
		if s.byName == nil {
			s.byName = map[string]time.Duration{}
		}
		s.names = append(s.names, name)
	}
	s.byName[name] += d
}

// histories makes one successful and one failing call per subject and measures their histories.
func (h *harness) histories(ctx context.Context) ([]HistoryRow, error) {
	cases := []struct {
		name string
		kind callKind
	}{{CaseSuccess, callNoop}, {CaseError, callFail}}
	total := len(cases) * len(h.subjects)
	h.cfg.Progress(Progress{Phase: "history", Total: total})
	var rows []HistoryRow
	for _, s := range h.subjects {
		for _, c := range cases {
			r, err := s.call(ctx, c.kind)
			if err != nil {
				return nil, err
			}
			events, err := h.fetchHistory(ctx, r.workflowID)
			if err != nil {
				return nil, err
			}
			row := HistoryRow{Subject: s.name, Case: c.name, Events: len(events)}
			for _, e := range events {
				row.Bytes += proto.Size(e)
				row.Types = append(row.Types, e.GetEventType().String())
			}
			rows = append(rows, row)
			h.cfg.Progress(Progress{Phase: "history", Done: len(rows), Total: total})
		}
	}
	for i := range rows {
		for _, base := range rows {
			if base.Subject == Baseline && base.Case == rows[i].Case {
				rows[i].RatioEvents = ratio(float64(rows[i].Events), float64(base.Events))
				rows[i].RatioBytes = ratio(float64(rows[i].Bytes), float64(base.Bytes))
			}
		}
	}
	return rows, nil
}
