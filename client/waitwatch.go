package client

import (
	"context"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/wire"
)

// waitKind is what a waitWatch reads: one kind of wait of a call (consent, input), in its state
// type S.
type waitKind[S any] struct {
	// outcome is the ToolOutcome of a running call that waits so.
	outcome string
	// query reads the state, bounded by its own timeout.
	query func(ctx context.Context, c *Client, workflowID string) (S, error)
	// waiting reports whether a state waits; same whether two states are one wait (delivered
	// once); ended is a state with Waiting false.
	waiting func(S) bool
	same    func(a, b S) bool
	ended   func(S) S
	// unknown is a state whose details are unknown: Waiting as given, the rest zero.
	unknown func(waiting bool) S
	// readFirst reads once at the start, before the first interval.
	readFirst bool
}

// waitWatch hands one call's waits of one kind to a deliver function: a state that waits once for
// each new wait, and, once that wait has ended (the call went on, or closed), the same state
// ended. Every interval it reads the call's ToolOutcome (one DescribeWorkflowExecution) and
// queries the call only while that says it waits.
type waitWatch[S any] struct {
	c          *Client
	workflowID string
	kind       waitKind[S]
	deliver    func(context.Context, S) error
	cancel     context.CancelFunc
	done       chan struct{}
	after      func() // run by stop once reading has stopped; nil for none

	// Owned by the poll loop until done is closed.
	open   *S   // the wait delivered last, while its end is not delivered
	broken bool // deliver failed: nobody to tell any more
}

// startWaitWatch starts reading the waits of workflowID every interval for deliver, which gets
// ctx and whose error stops the watch; stop must be called.
func startWaitWatch[S any](ctx context.Context, c *Client, workflowID string, interval time.Duration, kind waitKind[S],
	deliver func(context.Context, S) error) *waitWatch[S] {
	w := &waitWatch[S]{c: c, workflowID: workflowID, kind: kind, deliver: deliver, done: make(chan struct{})}
	readCtx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	go w.poll(readCtx, interval)
	return w
}

func (w *waitWatch[S]) poll(ctx context.Context, interval time.Duration) {
	defer close(w.done)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	if w.kind.readFirst && w.read(ctx) {
		return
	}
	for !w.broken {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if closed := w.read(ctx); closed {
			return
		}
	}
}

// read looks at the call once; closed is true once it has closed.
func (w *waitWatch[S]) read(ctx context.Context) (closed bool) {
	desc, err := w.c.describe(ctx, w.workflowID)
	if err != nil || ctx.Err() != nil {
		return false
	}
	running := stateOf(desc.GetWorkflowExecutionInfo().GetStatus()) == Running
	if !w.kind.awaits(w.c, desc) {
		w.ended(ctx)
		return !running
	}
	st, err := w.kind.query(ctx, w.c, w.workflowID)
	switch {
	case err != nil || ctx.Err() != nil:
		// No answer (no worker yet): look again next time.
	case !w.kind.waiting(st):
		w.ended(ctx)
	case w.open == nil || !w.kind.same(*w.open, st):
		w.ended(ctx) // a new wait replaces the one delivered before
		w.send(ctx, st)
		if !w.broken {
			w.open = &st
		}
	}
	return false
}

// ended delivers the end of the open wait, if any.
func (w *waitWatch[S]) ended(ctx context.Context) {
	if w.open == nil || w.broken {
		return
	}
	end := w.kind.ended(*w.open)
	w.open = nil
	w.send(ctx, end)
}

func (w *waitWatch[S]) send(ctx context.Context, st S) {
	if w.broken {
		return
	}
	if err := w.deliver(ctx, st); err != nil {
		w.broken = true
	}
}

// stop stops reading, waits for a delivery in flight, runs after, and returns the wait delivered
// last when its end was not delivered, else nil.
func (w *waitWatch[S]) stop() *S {
	w.cancel()
	<-w.done
	if w.after != nil {
		w.after()
	}
	return w.open
}

// awaits reports whether the described call says it waits so: it runs and its ToolOutcome is
// the kind's. Namespaces without the attribute never say so.
func (k waitKind[S]) awaits(c *Client, desc *workflowservice.DescribeWorkflowExecutionResponse) bool {
	info := desc.GetWorkflowExecutionInfo()
	return stateOf(info.GetStatus()) == Running &&
		c.keyword(info.GetSearchAttributes().GetIndexedFields()[wire.SearchAttributeToolOutcome]) == k.outcome
}

// waitOf is Status's view of one kind of wait of a described call: nil unless it says it waits
// so; then the queried state, or, when no worker answered in time (or the wait has just ended and
// the attribute lags the query by a workflow task), a state whose details are unknown.
func waitOf[S any](ctx context.Context, c *Client, workflowID string, desc *workflowservice.DescribeWorkflowExecutionResponse, kind waitKind[S]) *S {
	if !kind.awaits(c, desc) {
		return nil
	}
	st, err := kind.query(ctx, c, workflowID)
	if err != nil || !kind.waiting(st) {
		u := kind.unknown(err != nil)
		return &u
	}
	return &st
}
