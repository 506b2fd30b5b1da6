package mcp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Superseding a held stream. go-sdk v1.8.0 attaches a resumable SSE stream to the request that
// serves it (the POST that opened it, or the GET that last resumed it) until that request's
// handler returns, and answers a resumption (GET with Last-Event-ID) of a stream still attached
// with 409 "stream ID conflicts with ongoing stream". A client whose connection died without a
// FIN or RST reaching the server (a network drop) resumes at once, while its old request still
// holds the stream: the server would notice only when TCP gives up on the connection, minutes
// later, after the client gave up (the TypeScript SDK retries twice in 2.5 s). So a resumption by
// the principal whose request holds the stream ends that request first and is served once its
// handler has returned. Ending the request ends only its HTTP response: the call goes on (the
// stateful handler does not pass request cancellation on to calls, contract 10.7) and its events
// keep going to the event store, from which the resumption replays them.

// errSuperseded ends the request holding a stream that its principal resumed on another one.
var errSuperseded = errors.New("the stream was resumed by another request of its principal")

// streamHolders is the event store of the stateful handler, which learns from it which request
// holds which stream: go-sdk opens a POST's stream in the store with the POST's context, before
// the stream can be named to the client (its priming event), so no response bytes are parsed.
// It keeps one entry per live request holding a stream, removed when the request ends.
type streamHolders struct {
	sdk.EventStore

	mu   sync.Mutex
	held map[streamKey]*streamHolder
}

// streamKey names a stream: its session and its ID (the part of an event ID before "_").
type streamKey struct{ session, stream string }

// streamHolder is one request that may hold a stream.
type streamHolder struct {
	principal string
	cancel    context.CancelCauseFunc
	done      chan struct{} // closed once the request's handler returned and go-sdk released the stream

	key  streamKey // guarded by streamHolders.mu; zero until it holds one
	held bool
}

type holderContextKey struct{}

func newStreamHolders(store sdk.EventStore) *streamHolders {
	return &streamHolders{EventStore: store, held: map[streamKey]*streamHolder{}}
}

// Open records that the request of ctx (if serve passed it) holds the stream it opens.
func (h *streamHolders) Open(ctx context.Context, session, stream string) error {
	if holder, ok := ctx.Value(holderContextKey{}).(*streamHolder); ok {
		h.hold(streamKey{session, stream}, holder)
	}
	return h.EventStore.Open(ctx, session, stream)
}

// serve serves r with next (the stateful handler). A POST may open a stream (Open records it);
// a GET resuming a stream held by a request of the same principal ends that request and waits
// for its handler to return, then holds the stream in its turn. Another principal's resumption
// supersedes nothing (go-sdk then refuses it). Other requests pass untouched.
func (h *streamHolders) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	key, resume := resumedStream(r)
	if r.Method != http.MethodPost && !resume {
		next.ServeHTTP(w, r)
		return
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	holder := &streamHolder{
		principal: PrincipalOf(auth.TokenInfoFromContext(r.Context())),
		cancel:    cancel,
		done:      make(chan struct{}),
	}
	defer close(holder.done) // last: once released, a superseding request may hold the key
	defer h.release(holder)
	defer cancel(nil)
	if resume && h.supersede(ctx, key, holder.principal) {
		h.hold(key, holder)
	}
	if ctx.Err() != nil {
		return // the resuming client went away while the request it supersedes ended
	}
	next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, holderContextKey{}, holder)))
}

// resumedStream is the stream a GET resumes: the session of its Mcp-Session-Id and the stream ID
// of its Last-Event-ID, read as go-sdk reads it (<stream>_<index>).
func resumedStream(r *http.Request) (streamKey, bool) {
	if r.Method != http.MethodGet {
		return streamKey{}, false
	}
	session, lastID := r.Header.Get("Mcp-Session-Id"), r.Header.Get("Last-Event-ID")
	stream, index, ok := strings.Cut(lastID, "_")
	if session == "" || !ok || stream == "" || strings.Contains(index, "_") {
		return streamKey{}, false
	}
	if n, err := strconv.Atoi(index); err != nil || n < 0 {
		return streamKey{}, false
	}
	return streamKey{session, stream}, true
}

// supersede ends the request holding key when it is principal's, and waits until its handler
// returned. It reports whether key is free for principal: nobody held it, or its holder ended;
// false when another principal holds it (nothing is ended) or ctx ended first.
func (h *streamHolders) supersede(ctx context.Context, key streamKey, principal string) bool {
	h.mu.Lock()
	old := h.held[key]
	h.mu.Unlock()
	if old == nil {
		return true
	}
	if old.principal != principal {
		return false
	}
	old.cancel(errSuperseded)
	select {
	case <-old.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// hold records that holder holds key, when key is free; a holder holds at most one stream.
func (h *streamHolders) hold(key streamKey, holder *streamHolder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if holder.held || h.held[key] != nil {
		return
	}
	holder.key, holder.held = key, true
	h.held[key] = holder
}

// release forgets the stream holder held, unless another holds it now.
func (h *streamHolders) release(holder *streamHolder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if holder.held && h.held[holder.key] == holder {
		delete(h.held, holder.key)
	}
}

// principalHolding is the principal of the request holding key, and whether one holds it.
func (h *streamHolders) principalHolding(key streamKey) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.held[key]
	if old == nil {
		return "", false
	}
	return old.principal, true
}

// holding is the number of requests holding a stream.
func (h *streamHolders) holding() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}
