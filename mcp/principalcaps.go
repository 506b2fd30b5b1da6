package mcp

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Per-principal caps. Every authenticated principal (PrincipalOf) of HTTPHandler is bounded on
// its own, so that one principal cannot lock the others out:
//
//   - live sessions: HTTPOptions.MaxSessionsPerPrincipal, counting the sessions it owns
//     (sessionowner.go) and those its initialize requests are creating;
//   - standalone SSE streams (a GET of a session without a request stream's Last-Event-ID):
//     HTTPOptions.MaxStreamsPerPrincipal;
//   - requests in flight (every POST until answered, a tools/call until its result, and a GET
//     resuming a request's stream; one that supersedes its own request holding that stream
//     passes the cap, since it ends that request): HTTPOptions.MaxCallsPerPrincipal.
//
// The global cap, HTTPOptions.MaxSessions, still bounds live sessions and stateless requests
// together, and no principal can exhaust it: a principal holding n of them (its sessions and
// its stateless requests in flight) opens another only while more than n are free, so as the
// server fills, the principals holding the most are refused first and the last free places go
// to principals holding the fewest (one principal alone never holds more than half).
//
// A principal at its cap, or beyond its share of the global cap, gets 429 Too Many Requests
// with Retry-After and a body naming its own cap; 503 "too many live sessions" is left for a
// request of a principal holding none when the server is full. The server's own principal (no
// token: an unauthenticated listener trusts whoever reaches it) is bounded by the global cap
// only, as before.

// Defaults of the per-principal caps of HTTPOptions.
const (
	DefaultMaxSessionsPerPrincipal = 64
	DefaultMaxStreamsPerPrincipal  = 16
	DefaultMaxCallsPerPrincipal    = 256
)

// principalCaps counts what each authenticated principal holds of an HTTPHandler.
type principalCaps struct {
	server  *sdk.Server
	owners  *sessionOwners
	holders *streamHolders
	// maxSessions is the global cap; perSessions, perStreams and perCalls the per-principal ones.
	maxSessions, perSessions, perStreams, perCalls int

	mu  sync.Mutex
	use map[string]*principalUse // by principal; an entry goes when all its counts are 0
}

// principalUse is what one principal holds besides the sessions it owns.
type principalUse struct {
	creating  int // POSTs without Mcp-Session-Id being served (each may create a session)
	stateless int // stateless requests in flight (each a session while it runs)
	streams   int // standalone SSE streams
	calls     int // requests in flight
}

func (u *principalUse) zero() bool { return *u == principalUse{} }

// kinds of request admit counts.
type requestKind int

const (
	requestOther     requestKind = iota // DELETE, and what go-sdk refuses anyway
	requestCall                         // a POST of a live session, or a resumption of a request's stream
	requestCreating                     // a POST without Mcp-Session-Id: may create a session
	requestStateless                    // a stateless (2026-07-28) POST
	requestStream                       // a standalone SSE stream
)

// kindOf is what r counts as; sessionless says r is a stateless request.
func (c *principalCaps) kindOf(r *http.Request, sessionless bool) requestKind {
	switch r.Method {
	case http.MethodPost:
		switch {
		case sessionless:
			return requestStateless
		case r.Header.Get("Mcp-Session-Id") == "":
			return requestCreating
		}
		return requestCall
	case http.MethodGet:
		if sessionless || r.Header.Get("Mcp-Session-Id") == "" {
			return requestOther // 405 or 400 from go-sdk
		}
		if _, resume := resumedStream(r); resume {
			return requestCall
		}
		return requestStream
	}
	return requestOther
}

// admit counts r for its principal until the returned release is called, or, when r is over a
// cap, answers it (429, or 503 when the server is full) and reports false.
func (c *principalCaps) admit(w http.ResponseWriter, r *http.Request, sessionless bool) (release func(), ok bool) {
	kind := c.kindOf(r, sessionless)
	principal := PrincipalOf(auth.TokenInfoFromContext(r.Context()))
	opens := kind == requestCreating || kind == requestStateless // a session, for the global cap
	if principal == "" {
		// The server's own principal: the global cap only.
		if opens && liveSessions(c.server, c.maxSessions) >= c.maxSessions {
			full(w)
			return nil, false
		}
		return func() {}, true
	}
	// A resumption of a stream its own request holds supersedes that request (supersede.go): it
	// passes the calls cap, since it ends the request it replaces, and counts like any.
	supersedes := false
	if key, resume := resumedStream(r); resume && kind == requestCall {
		holder, held := c.holders.principalHolding(key)
		supersedes = held && holder == principal
	}
	owned := c.owners.heldBy(principal)
	live := 0
	if opens {
		live = liveSessions(c.server, c.maxSessions) // outside the lock: it walks the sessions
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.use[principal]
	if u == nil {
		u = &principalUse{}
	}
	switch {
	case kind == requestStream && u.streams >= c.perStreams:
		refuse(w, fmt.Sprintf("this principal has %d standalone SSE streams open, its cap", u.streams), 10)
		return nil, false
	case kind != requestStream && kind != requestOther && !supersedes && u.calls >= c.perCalls:
		refuse(w, fmt.Sprintf("this principal has %d requests in flight, its cap", u.calls), 1)
		return nil, false
	case kind == requestCreating && owned+u.creating >= c.perSessions:
		refuse(w, fmt.Sprintf("this principal has %d live sessions, its cap", owned+u.creating), 10)
		return nil, false
	}
	if opens {
		holds := owned + u.creating + u.stateless
		switch free := c.maxSessions - live; {
		case holds > 0 && holds >= free:
			refuse(w, fmt.Sprintf("this principal holds %d of the %d live sessions and requests the server allows, with %d free: "+
				"a principal may hold fewer than are free", holds, c.maxSessions, max(free, 0)), 10)
			return nil, false
		case free <= 0:
			full(w)
			return nil, false
		}
	}
	switch kind {
	case requestCreating:
		u.creating++
		u.calls++
	case requestStateless:
		u.stateless++
		u.calls++
	case requestCall:
		u.calls++
	case requestStream:
		u.streams++
	}
	c.use[principal] = u
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			switch kind {
			case requestCreating:
				u.creating--
				u.calls--
			case requestStateless:
				u.stateless--
				u.calls--
			case requestCall:
				u.calls--
			case requestStream:
				u.streams--
			}
			if u.zero() && c.use[principal] == u {
				delete(c.use, principal)
			}
		})
	}, true
}

// refuse answers 429 naming the principal's own cap, with Retry-After seconds.
func refuse(w http.ResponseWriter, why string, retryAfter int) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	http.Error(w, "Too Many Requests: "+why, http.StatusTooManyRequests)
}

// full answers 503: the server holds as many live sessions as it allows.
func full(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "10")
	http.Error(w, "Service Unavailable: too many live sessions", http.StatusServiceUnavailable)
}
