package mcp

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Replies that trigger no resumption (streamable HTTP, 2025-11-25 sessions). go-sdk v1.8.0 opens
// every SSE answer of a POST with a priming event carrying an ID, which makes the stream
// resumable; the TypeScript SDK 1.x resumes such a stream (GET with Last-Event-ID) whenever it
// ends without a *result*: after every error reply, and after a cancelled request's stream ends.
// So:
//
//   - the priming event of a POST is held back for up to primeHold; a reply that comes first is
//     answered as application/json, with no event ID (an ordinary error, a quick call), and
//     anything else first (a progress report, a request to the client, SSE polling's close)
//     sends the held event before it, as does primeHold passing: a longer call stays resumable;
//   - the reply of a cancelled request (cancelreply.go) is neither sent nor kept for resumption;
//   - a resumption of a stream that has nothing left (its reply delivered, or dropped) is
//     answered 204 No Content, on which the TypeScript SDK stops quietly instead of retrying.

// primeHold is how long a POST's priming event waits for the reply before it is sent.
const primeHold = TaskInlineWindow

// primeEvent starts go-sdk's priming event.
var primeEvent = []byte("event: prime\n")

// replyStream returns w for the stateful handler's answer to r (with its POST body): see above.
func replyStream(w http.ResponseWriter, r *http.Request, body []byte) (http.ResponseWriter, func()) {
	rw := &replyWriter{ResponseWriter: w}
	switch {
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
		rw.resume = true
	case r.Method == http.MethodPost && len(bytes.TrimSpace(body)) > 0 && bytes.TrimSpace(body)[0] == '{':
		rw.mayHold = true // one message: one reply at most (a batch keeps its stream)
	}
	return rw, rw.finish
}

// replyWriter is the ResponseWriter of one stateful request. go-sdk writes each SSE event with
// one Write (event, id and data lines), then flushes.
type replyWriter struct {
	http.ResponseWriter
	resume, mayHold bool

	mu      sync.Mutex
	started bool   // a header or a byte went to the client
	held    []byte // the priming event held back
	timer   *time.Timer
	ended   bool
}

func (w *replyWriter) Write(event []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return len(event), nil
	}
	if w.mayHold && !w.started && w.held == nil && bytes.HasPrefix(event, primeEvent) {
		w.held = bytes.Clone(event)
		w.timer = time.AfterFunc(primeHold, w.release)
		return len(event), nil
	}
	if w.held == nil && !bytes.Contains(event, cancelledMark) {
		w.started = true // the common case: no decoding
		return w.ResponseWriter.Write(event)
	}
	data, isReply := replyData(event)
	if isReply && isCancelledReplyData(data) {
		w.stopHold() // no answer to a cancelled request, and nothing to resume
		return len(event), nil
	}
	if w.held != nil && isReply {
		// The reply came first: answered as JSON, with no event ID to resume from.
		w.stopHold()
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Del("Connection")
		w.started = true
		w.ResponseWriter.WriteHeader(http.StatusOK)
		if _, err := w.ResponseWriter.Write(data); err != nil {
			return 0, err
		}
		w.ended = true // nothing may follow a JSON answer
		return len(event), nil
	}
	if err := w.sendHeld(); err != nil {
		return 0, err
	}
	w.started = true
	return w.ResponseWriter.Write(event)
}

func (w *replyWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.held != nil {
		return // the held answer's header goes with it
	}
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *replyWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.held != nil {
		return
	}
	w.started = true
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *replyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// release sends the held priming event once primeHold has passed.
func (w *replyWriter) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ended {
		_ = w.sendHeld()
	}
}

// sendHeld sends the held priming event, if any, and flushes it; mu is held.
func (w *replyWriter) sendHeld() error {
	if w.held == nil {
		return nil
	}
	held := w.held
	w.stopHold()
	w.started = true
	if _, err := w.ResponseWriter.Write(held); err != nil {
		return err
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// stopHold forgets the held event and its timer; mu is held.
func (w *replyWriter) stopHold() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.held, w.timer = nil, nil
}

// finish runs once the handler has returned: a stream still holding its priming event (the
// request ended without a reply: its client went away, or its reply was dropped) sends it, a
// resumption that got nothing is 204, and nothing is written after.
func (w *replyWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	switch {
	case w.held != nil:
		_ = w.sendHeld()
	case w.resume && !w.started:
		h := w.Header()
		h.Del("Content-Type")
		h.Del("Connection")
		w.ResponseWriter.WriteHeader(http.StatusNoContent)
	}
	w.ended = true
}

// replyData is the data of an SSE message event, and whether it is a JSON-RPC response.
func replyData(event []byte) ([]byte, bool) {
	var data []byte
	for line := range bytes.SplitSeq(event, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = d
		}
	}
	if len(data) == 0 {
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return data, false
	}
	_, isResponse := msg.(*jsonrpc.Response)
	return data, isResponse
}

// Append keeps data for resumption, except the reply of a cancelled request, kept as an empty
// event (as go-sdk keeps a priming event) so that the stream's event indexes stay aligned.
func (h *streamHolders) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	if isCancelledReplyData(data) {
		data = nil
	}
	return h.EventStore.Append(ctx, sessionID, streamID, data)
}
