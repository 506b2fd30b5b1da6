package mcp

import (
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session owners. A stateful session belongs to the full principal (PrincipalOf: issuer and
// subject) of the request that created it. go-sdk v1.8.0 binds a session to its token's subject
// only (TokenInfo.UserID): with several issuers trusted, a token of another issuer with the same
// sub would use the session, its requests, its standalone stream and its resumptions. So
// HTTPHandler records the principal when the session's ID is first sent (the response to the
// POST without Mcp-Session-Id that created it, before its headers go out: nobody can name the
// session earlier), and refuses a request naming the session from another principal as go-sdk
// refuses another subject: 403 "session user mismatch", the session untouched. Sessionless
// (2026-07-28) requests have no session and never get here.

// sessionOwners maps each live stateful session of a server to its principal: one entry per live
// session, removed when the session closes (DELETE, SessionTimeout, a failed initialize, the
// server closing it), by one goroutine per live session waiting on it.
type sessionOwners struct {
	server *sdk.Server

	mu     sync.RWMutex
	owners map[string]string // session ID → principal
	held   map[string]int    // principal → its entries in owners
}

func newSessionOwners(s *sdk.Server) *sessionOwners {
	return &sessionOwners{server: s, owners: map[string]string{}, held: map[string]int{}}
}

// admit reports whether r may use the session its Mcp-Session-Id names: no header, a session
// with no owner recorded (go-sdk answers an unknown one 404), or one of r's principal. Otherwise
// it answers 403 and reports false.
func (o *sessionOwners) admit(w http.ResponseWriter, r *http.Request) bool {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return true
	}
	o.mu.RLock()
	owner, ok := o.owners[id]
	o.mu.RUnlock()
	if !ok || owner == PrincipalOf(auth.TokenInfoFromContext(r.Context())) {
		return true
	}
	http.Error(w, "session user mismatch", http.StatusForbidden) // go-sdk's answer to another subject
	return false
}

// creating returns the writer through which the stateful handler answers r: for a POST without
// Mcp-Session-Id (which creates a session), one that binds the session its answer names to r's
// principal before the answer's headers go out; w itself otherwise.
func (o *sessionOwners) creating(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return w
	}
	return &sessionOwnerWriter{ResponseWriter: w, owners: o, principal: PrincipalOf(auth.TokenInfoFromContext(r.Context()))}
}

// bind records principal as the owner of the live session id, until it closes. A session no
// longer live gets no entry (a request naming it is go-sdk's 404).
func (o *sessionOwners) bind(id, principal string) {
	// The new session is the latest: search from the end.
	sessions := slices.Collect(o.server.Sessions())
	for i := len(sessions) - 1; i >= 0; i-- {
		ss := sessions[i]
		if ss.ID() != id {
			continue
		}
		o.mu.Lock()
		o.owners[id] = principal
		o.held[principal]++
		o.mu.Unlock()
		go func() {
			_ = ss.Wait()
			o.mu.Lock()
			delete(o.owners, id)
			if o.held[principal]--; o.held[principal] == 0 {
				delete(o.held, principal)
			}
			o.mu.Unlock()
		}()
		return
	}
}

// ownerOf is the recorded owner of session id.
func (o *sessionOwners) ownerOf(id string) (string, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	owner, ok := o.owners[id]
	return owner, ok
}

// heldBy is the number of live sessions principal owns.
func (o *sessionOwners) heldBy(principal string) int {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.held[principal]
}

// count is the number of sessions with an owner recorded.
func (o *sessionOwners) count() int {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return len(o.owners)
}

// sessionOwnerWriter binds the session named by the Mcp-Session-Id header of the answer it
// writes, once, when the header is about to go out.
type sessionOwnerWriter struct {
	http.ResponseWriter
	owners    *sessionOwners
	principal string
	bound     bool
}

func (w *sessionOwnerWriter) bind() {
	if w.bound {
		return
	}
	w.bound = true
	if id := w.Header().Get("Mcp-Session-Id"); id != "" {
		w.owners.bind(id, w.principal)
	}
}

func (w *sessionOwnerWriter) WriteHeader(code int) {
	w.bind()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionOwnerWriter) Write(b []byte) (int, error) {
	w.bind()
	return w.ResponseWriter.Write(b)
}

func (w *sessionOwnerWriter) Flush() {
	w.bind()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *sessionOwnerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
