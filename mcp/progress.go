package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/toolcore"
)

// progressForwarder sends one call's progress for a request's progress token: while the call
// runs, the reports its running attempt's heartbeats carry (polled every interval); once it has
// closed, the last report, which the completed attempt's result carries in history. Each value is
// sent once, in the order read, and the last one before the result.
type progressForwarder struct {
	h          *callHandler
	req        *sdk.CallToolRequest
	token      any
	workflowID string
	runID      string

	stopPolling chan struct{} // closed by finish: the poll loop returns
	polled      chan struct{} // closed when the poll loop has returned

	// Owned by the poll loop until polled is closed, then by finish.
	last   toolcore.Progress
	sent   bool // last was sent
	broken bool // a notification could not be sent: nobody to tell
}

// startProgress starts polling the progress of the run for req's progress token, sending
// notifications within ctx; finish must be called.
func (h *callHandler) startProgress(ctx context.Context, req *sdk.CallToolRequest, token any, workflowID, runID string) *progressForwarder {
	f := &progressForwarder{h: h, req: req, token: token, workflowID: workflowID, runID: runID,
		stopPolling: make(chan struct{}), polled: make(chan struct{})}
	go f.poll(ctx)
	return f
}

// poll sends the running attempt's progress whenever it changes, until finish stops it, ctx ends
// or a notification cannot be sent.
func (f *progressForwarder) poll(ctx context.Context) {
	defer close(f.polled)
	// A read in flight ends when polling stops; a notification in flight completes (within ctx).
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-f.stopPolling:
			cancel()
		case <-readCtx.Done():
		}
	}()
	ticker := time.NewTicker(f.h.progressInterval)
	defer ticker.Stop()
	for !f.broken {
		select {
		case <-readCtx.Done():
			return
		case <-ticker.C:
		}
		p, ok, err := f.h.tg.ProgressByWorkflowID(readCtx, f.workflowID)
		if err != nil || !ok || readCtx.Err() != nil {
			continue
		}
		f.send(ctx, p)
	}
}

// finish stops polling, waits for a notification in flight and, when the call has closed with a
// result (closed true), sends its last progress report unless it was the last one sent. The
// caller sends the result after finish returns, so every notification precedes it.
func (f *progressForwarder) finish(ctx context.Context, closed bool) {
	close(f.stopPolling)
	<-f.polled
	if !closed || f.broken || ctx.Err() != nil {
		return
	}
	if p, ok, err := f.h.tg.FinalProgress(ctx, f.workflowID, f.runID); err == nil && ok {
		f.send(ctx, p)
	}
}

// send notifies p unless it is the value sent last.
func (f *progressForwarder) send(ctx context.Context, p toolcore.Progress) {
	if f.sent && p == f.last {
		return
	}
	f.last, f.sent = p, true
	err := f.req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
		ProgressToken: f.token,
		Progress:      float64(p.Completed),
		Total:         float64(p.Total),
		Message:       p.Message,
	})
	if err != nil {
		f.broken = true // the connection or the stream is gone
	}
}
