package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// rpcKind is an RPC of the bench's client that marks a step of a call.
type rpcKind uint8

const (
	rpcStart      rpcKind = iota + 1 // StartWorkflowExecution (with an eager first task or not)
	rpcPollWFT                       // PollWorkflowTaskQueue, at the moment it hands a task over
	rpcPollAct                       // PollActivityTaskQueue, likewise
	rpcRespondWFT                    // RespondWorkflowTaskCompleted (may hand over an eager activity)
	rpcRespondAct                    // RespondActivityTaskCompleted
)

var rpcKinds = map[string]rpcKind{
	workflowservice.WorkflowService_StartWorkflowExecution_FullMethodName:       rpcStart,
	workflowservice.WorkflowService_PollWorkflowTaskQueue_FullMethodName:        rpcPollWFT,
	workflowservice.WorkflowService_PollActivityTaskQueue_FullMethodName:        rpcPollAct,
	workflowservice.WorkflowService_RespondWorkflowTaskCompleted_FullMethodName: rpcRespondWFT,
	workflowservice.WorkflowService_RespondActivityTaskCompleted_FullMethodName: rpcRespondAct,
}

// rpcSpan is one RPC as the client saw it: sent at start, answered at end. workflowID is set
// for starts and for polls that returned a task.
type rpcSpan struct {
	kind       rpcKind
	workflowID string
	start, end time.Time
}

// rpcTrace records the client's RPCs while on (the latency phase, whose calls run one at a time),
// so that each call's time can be split between the caller, the server and the worker.
type rpcTrace struct {
	mu    sync.Mutex
	on    bool
	spans []rpcSpan
}

// record turns recording on or off.
func (t *rpcTrace) record(on bool) {
	t.mu.Lock()
	t.on = on
	t.mu.Unlock()
}

// intercept is a gRPC client interceptor that records the RPCs of rpcKinds.
func (t *rpcTrace) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	end := time.Now()
	kind, ok := rpcKinds[method]
	if !ok || err != nil {
		return err
	}
	span := rpcSpan{kind: kind, start: start, end: end}
	switch m := reply.(type) {
	case *workflowservice.PollWorkflowTaskQueueResponse:
		span.workflowID = m.GetWorkflowExecution().GetWorkflowId()
	case *workflowservice.PollActivityTaskQueueResponse:
		span.workflowID = m.GetWorkflowExecution().GetWorkflowId()
	}
	if m, ok := req.(*workflowservice.StartWorkflowExecutionRequest); ok {
		span.workflowID = m.GetWorkflowId()
	}
	if (kind == rpcPollWFT || kind == rpcPollAct) && span.workflowID == "" {
		return err // an empty poll
	}
	t.mu.Lock()
	if t.on {
		t.spans = append(t.spans, span)
	}
	t.mu.Unlock()
	return err
}

// taken returns the recorded spans and forgets them.
func (t *rpcTrace) taken() []rpcSpan {
	t.mu.Lock()
	defer t.mu.Unlock()
	spans := t.spans
	t.spans = nil
	return spans
}

// Segment names of the RPC split.
const (
	rpcSegCaller      = "caller, before the start"
	rpcSegStart       = "start RPC"
	rpcSegDispatch    = "wft%d dispatch (poll)"
	rpcSegWorker      = "worker: wft%d"
	rpcSegCompleteWFT = "wft%d completion RPC"
	rpcSegActDispatch = "activity dispatch (poll)"
	rpcSegActWorker   = "worker: activity"
	rpcSegCompleteAct = "activity completion RPC"
	rpcSegResult      = "result to caller"
	rpcSegOther       = "other"
)

// point is a moment of a call seen from the client: what happened (an RPC sent or answered, or
// a task handed over by a poll) and which workflow task it belongs to.
type point struct {
	at   time.Time
	kind rpcKind
	sent bool // the RPC was sent (else answered)
}

// rpcSplitRows splits the calls of records by the spans recorded while they ran, per subject:
// mean and p50 per segment, as the breakdown does from histories. A call whose start RPC was
// not recorded is left out.
func rpcSplitRows(subjects []subject, records map[string][]record, spans []rpcSpan) []BreakdownRow {
	idx := indexSpans(spans)
	var rows []BreakdownRow
	for _, s := range subjects {
		var calls []map[string]time.Duration
		var order []string
		for _, r := range records[s.name] {
			segs, names, ok := splitCall(r, idx)
			if !ok {
				continue
			}
			calls = append(calls, segs)
			for _, n := range names {
				if !contains(order, n) {
					order = append(order, n)
				}
			}
		}
		if len(calls) > 0 {
			rows = append(rows, segmentRow(s.name, calls, order))
		}
	}
	return rows
}

// spanIndex holds the spans for splitCall: starts and completions by the time they were sent,
// polls (which began long before the call they serve) by the workflow of the task they handed
// over.
type spanIndex struct {
	sent  []rpcSpan // sorted by start
	polls map[string][]rpcSpan
}

func indexSpans(spans []rpcSpan) spanIndex {
	idx := spanIndex{polls: map[string][]rpcSpan{}}
	for _, sp := range spans {
		if sp.kind == rpcPollWFT || sp.kind == rpcPollAct {
			idx.polls[sp.workflowID] = append(idx.polls[sp.workflowID], sp)
		} else {
			idx.sent = append(idx.sent, sp)
		}
	}
	slices.SortFunc(idx.sent, func(a, b rpcSpan) int { return a.start.Compare(b.start) })
	return idx
}

// splitCall names the stretches between the moments of r: the gaps between consecutive points
// are named by the points that bound them. The segments add up to r.took().
func splitCall(r record, idx spanIndex) (map[string]time.Duration, []string, bool) {
	var points []point
	started := false
	first, _ := slices.BinarySearchFunc(idx.sent, r.start, func(sp rpcSpan, t time.Time) int { return sp.start.Compare(t) })
	for _, sp := range idx.sent[first:] {
		if sp.start.After(r.end) {
			break
		}
		switch sp.kind {
		case rpcStart:
			if sp.workflowID != r.workflowID {
				continue
			}
			started = true
			points = append(points, point{at: sp.start, kind: rpcStart, sent: true}, point{at: sp.end, kind: rpcStart})
		case rpcRespondWFT, rpcRespondAct:
			points = append(points, point{at: sp.start, kind: sp.kind, sent: true}, point{at: sp.end, kind: sp.kind})
		}
	}
	// Polls count from the moment they hand over the call's task.
	for _, sp := range idx.polls[r.workflowID] {
		if !sp.end.Before(r.start) && !sp.end.After(r.end) {
			points = append(points, point{at: sp.end, kind: sp.kind})
		}
	}
	if !started {
		return nil, nil, false
	}
	slices.SortStableFunc(points, func(a, b point) int { return a.at.Compare(b.at) })

	var st segmentTimes
	add := st.add
	add(rpcSegCaller, points[0].at.Sub(r.start))
	wft := 1
	for i := 1; i < len(points); i++ {
		add(segmentBetween(points[i-1], points[i], &wft), points[i].at.Sub(points[i-1].at))
	}
	add(rpcSegResult, r.end.Sub(points[len(points)-1].at))
	return st.byName, st.names, true
}

// segmentBetween names the stretch from a to b; wft is the number of the current workflow task,
// advanced when one completes.
func segmentBetween(a, b point, wft *int) string {
	switch {
	case a.kind == rpcStart && a.sent && b.kind == rpcStart:
		return rpcSegStart
	case b.kind == rpcPollWFT && !a.sent:
		return fmt.Sprintf(rpcSegDispatch, *wft)
	case b.kind == rpcRespondWFT && b.sent && !a.sent && a.kind != rpcRespondAct:
		return fmt.Sprintf(rpcSegWorker, *wft)
	case a.kind == rpcRespondWFT && a.sent && b.kind == rpcRespondWFT:
		*wft++
		return fmt.Sprintf(rpcSegCompleteWFT, *wft-1)
	case b.kind == rpcPollAct && !a.sent:
		return rpcSegActDispatch
	case b.kind == rpcRespondAct && b.sent && !a.sent:
		return rpcSegActWorker
	case a.kind == rpcRespondAct && a.sent && b.kind == rpcRespondAct:
		return rpcSegCompleteAct
	}
	return rpcSegOther
}

// segmentRow summarizes per-call segments (a call without a segment counts 0 for it).
func segmentRow(subject string, calls []map[string]time.Duration, order []string) BreakdownRow {
	row := BreakdownRow{Subject: subject, Calls: len(calls)}
	for _, n := range order {
		d := make([]time.Duration, len(calls))
		for i, c := range calls {
			d[i] = c[n]
		}
		l := summarize(d)
		row.Segments = append(row.Segments, Segment{Name: n, MeanMs: l.MeanMs, P50Ms: l.P50Ms})
	}
	return row
}
