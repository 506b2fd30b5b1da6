package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolgate/toolgate/internal/loopback"
)

// Defaults of HTTPOptions.
const (
	// DefaultMaxBodyBytes bounds a request body: four times toolcore.MaxCallBytes, room for the
	// JSON-RPC envelope of the largest call.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultSessionTimeout closes a session that received no request for this long.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultMaxSessions bounds the live sessions; an initialize or a stateless request beyond it
	// gets 503.
	DefaultMaxSessions = 1024
	// DefaultBodyReadTimeout bounds reading one request body.
	DefaultBodyReadTimeout = time.Minute
	// DefaultEventStoreBytes bounds the SSE events HTTPHandler keeps for resumption, all sessions
	// together: past it the oldest are dropped, and a resumption needing one of them gets an error.
	DefaultEventStoreBytes = 10 << 20
)

// ProtectedResourcePath is where ProtectedResourceHandler is served (RFC 9728), at the root and
// followed by the MCP endpoint's path.
const ProtectedResourcePath = "/.well-known/oauth-protected-resource"

// HTTPOptions configure HTTPHandler. They work at their zero value: loopback only, no
// authentication.
type HTTPOptions struct {
	// AllowedHosts are the Host header names (without port) accepted besides the loopback names
	// (localhost, 127.0.0.1, ::1). Optional: default none, only loopback names.
	AllowedHosts []string
	// AllowedOrigins are the Origin header values (scheme://host[:port]) accepted besides loopback
	// origins. A request without an Origin header (a non-browser client) is accepted. Optional:
	// default none, only loopback origins.
	AllowedOrigins []string
	// Verifier, when set, authenticates every request by its bearer token (JWTVerifier,
	// StaticTokenVerifier); one without a valid token gets 401. The token's principal
	// (PrincipalOf) owns the calls and tasks it creates. Optional: default none, every request is
	// the server's own principal.
	Verifier auth.TokenVerifier
	// Resource is this server's resource identifier (its canonical URL, e.g.
	// "https://mcp.example.com/mcp"), for the protected-resource metadata: a 401 names
	// ResourceMetadataURL(Resource) in its WWW-Authenticate header. Optional.
	Resource string
	// Scopes a token must all carry. Optional: default none.
	Scopes []string
	// MaxBodyBytes bounds a request body, read once; a larger one gets 413. Optional: default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionTimeout closes a session idle for this long. Optional: default
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// MaxSessions bounds the live sessions: an initialize beyond it gets 503 with Retry-After, and
	// so does a stateless (2026-07-28) request, a session while it runs. Optional: default
	// DefaultMaxSessions.
	MaxSessions int
	// BodyReadTimeout bounds reading a request body (a read deadline on the connection, lifted
	// once the body is read: http.Server's ReadTimeout would also cancel the long-lived SSE
	// answer of a tools/call). Optional: default DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	// EventStoreBytes bounds the memory of the SSE events kept so that a client whose stream
	// dropped resumes it with GET and Last-Event-ID (every session's streams together; the
	// oldest events go first, and a session's go when it closes). Optional: default
	// DefaultEventStoreBytes.
	EventStoreBytes int
	// MaxSessionsPerPrincipal bounds the live sessions of one authenticated principal: an
	// initialize beyond it gets 429 (principalcaps.go). Optional: default
	// DefaultMaxSessionsPerPrincipal.
	MaxSessionsPerPrincipal int
	// MaxStreamsPerPrincipal bounds the standalone SSE streams (GET) one authenticated principal
	// holds open: one more gets 429. Optional: default DefaultMaxStreamsPerPrincipal.
	MaxStreamsPerPrincipal int
	// MaxCallsPerPrincipal bounds the requests one authenticated principal has in flight (a
	// tools/call until its result): one more gets 429. Optional: default
	// DefaultMaxCallsPerPrincipal.
	MaxCallsPerPrincipal int
	// Logger logs each refused authentication at Debug, with its reason (which a 401 body never
	// carries). Optional: default none.
	Logger *slog.Logger
}

// HTTPHandler serves s over the streamable HTTP transport. It answers 403 Forbidden to a request
// whose Host is not a loopback name or one of opts.AllowedHosts (DNS rebinding), and to one whose
// Origin header is present but neither a loopback origin nor one of opts.AllowedOrigins, as the
// MCP transport spec requires; 401 to one without a valid bearer token when opts.Verifier is
// set; 413 to a body over opts.MaxBodyBytes (refused by Content-Length or when the read passes
// the limit, never buffered further); 503 to an initialize when opts.MaxSessions are live; 429 to
// a token's principal over a cap of its own or beyond its share of MaxSessions
// (principalcaps.go); 403 to
// a request naming a session that another principal (PrincipalOf) created (sessionowner.go). Like
// Transport, it moves the "task" member of a tools/call request into _meta for the server's task
// support.
//
// One endpoint serves both kinds of revision, chosen per request (isStatelessRequest):
// server/discover and requests naming StatelessRevision or later (Mcp-Protocol-Version header or
// _meta) are served statelessly, each POST on its own with no Mcp-Session-Id read or set (one sent
// is ignored); everything else (2025-06-18, 2025-11-25) keeps its session, resumable streams and
// standalone stream. Every check above guards both, and a stateless request counts against
// opts.MaxSessions while it runs.
func HTTPHandler(s *sdk.Server, opts HTTPOptions) http.Handler {
	h, _ := httpHandler(s, opts)
	return h
}

// httpHandler is HTTPHandler, with the owners of its sessions.
func httpHandler(s *sdk.Server, opts HTTPOptions) (http.Handler, *sessionOwners) {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.BodyReadTimeout <= 0 {
		opts.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if opts.EventStoreBytes <= 0 {
		opts.EventStoreBytes = DefaultEventStoreBytes
	}
	if opts.MaxSessionsPerPrincipal <= 0 {
		opts.MaxSessionsPerPrincipal = DefaultMaxSessionsPerPrincipal
	}
	if opts.MaxStreamsPerPrincipal <= 0 {
		opts.MaxStreamsPerPrincipal = DefaultMaxStreamsPerPrincipal
	}
	if opts.MaxCallsPerPrincipal <= 0 {
		opts.MaxCallsPerPrincipal = DefaultMaxCallsPerPrincipal
	}
	// Resumable streams (2025-11-25 transports, SEP-1699): each SSE answer opens with a priming
	// event carrying an id, every event is kept, and a GET with Last-Event-ID replays what came
	// after it, then goes on with the stream.
	events := sdk.NewMemoryEventStore(nil)
	events.SetMaxBytes(opts.EventStoreBytes)
	// A resumption supersedes the request still holding its stream (supersede.go).
	holders := newStreamHolders(events)
	// A session belongs to the full principal that created it (sessionowner.go).
	owners := newSessionOwners(s)
	// Each authenticated principal is bounded on its own (principalcaps.go).
	caps := &principalCaps{server: s, owners: owners, holders: holders, maxSessions: opts.MaxSessions,
		perSessions: opts.MaxSessionsPerPrincipal, perStreams: opts.MaxStreamsPerPrincipal, perCalls: opts.MaxCallsPerPrincipal,
		use: map[string]*principalUse{}}
	stateful := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{
		EventStore:     holders,
		SessionTimeout: opts.SessionTimeout,
		// The body is already bounded and read; the SDK reads our in-memory copy.
		MaxRequestBodyBytes: opts.MaxBodyBytes + 1,
	})
	// The same server without sessions, for the revisions that have none (2026-07-28, SEP-2575):
	// each POST is a whole request with its own answer stream; GET and DELETE get 405. With
	// nothing to resume, a POST's handler ends with it (PropagateRequestCancellation), under
	// errRequestGone (see serveStateless).
	stateless := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{
		Stateless:                    true,
		MaxRequestBodyBytes:          opts.MaxBodyBytes + 1,
		PropagateRequestCancellation: true,
	})
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The connection leaves the unauthenticated bounds, unless its principal holds too many
		// (conns.go).
		if !markAuthenticated(r.Context(), PrincipalOf(auth.TokenInfoFromContext(r.Context()))) {
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "10")
			http.Error(w, "Too Many Requests: this principal holds too many connections", http.StatusTooManyRequests)
			return
		}
		var body []byte
		if r.Method == http.MethodPost && r.Body != nil {
			var err error
			if body, err = readBody(w, r, opts.MaxBodyBytes, opts.BodyReadTimeout); err != nil {
				http.Error(w, "Request body too large or unreadable", http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(liftTaskBody(body)))
			r.ContentLength = -1
		}
		sessionless := isStatelessRequest(r, body)
		// A stateless request is a session for as long as it runs: the global cap bounds both,
		// and each principal has caps of its own.
		release, ok := caps.admit(w, r, sessionless)
		if !ok {
			return // 429 naming the principal's cap, or 503 when the server is full
		}
		defer release()
		if sessionless {
			if refuseTaskRouting(w, r, body) {
				return // a task method's Mcp-Name is missing or not its taskId: 400, -32020
			}
			// The revision has no sessions: an Mcp-Session-Id header is ignored, and the
			// session it names (if any) is neither used nor touched.
			serveStateless(stateless, w, r)
			return
		}
		if !owners.admit(w, r) {
			return // another principal's session: 403, the session untouched
		}
		sessionVersion(s, r)
		// Replies that trigger no resumption, none to a cancelled request (streamreply.go).
		rw, finish := replyStream(w, r, body)
		holders.serve(stateful, taskStatusStream(owners.creating(rw, r), r), r) // task statuses, see taskstatus.go
		finish()
	})
	if opts.Verifier != nil {
		var metadataURL string
		if opts.Resource != "" {
			metadataURL = ResourceMetadataURL(opts.Resource)
		}
		handler = refuseQuietly(auth.RequireBearerToken(opts.Verifier, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL: metadataURL,
			Scopes:              opts.Scopes,
			ClockSkew:           DefaultJWTLeeway,
		}), handler, metadataURL, opts.Scopes, opts.Logger)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, opts.AllowedHosts) {
			http.Error(w, "Forbidden: Host not allowed", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, opts.AllowedOrigins) {
			http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
			return
		}
		handler.ServeHTTP(w, r)
	}), owners
}

// errRequestGone ends the handler of a stateless request whose client went away before its
// answer: at 2026-07-28 that is how a client cancels, and the call is cancelled (requestEnded).
// It is not context.Canceled, which only a notifications/cancelled gives.
var errRequestGone = errors.New("the client closed its request; the call is cancelled")

// carrierKey is the context key of a stateless request's own HTTP context (see requestGone).
type carrierKey struct{}

// requestGone reports whether ctx belongs to a stateless request whose HTTP request has ended.
// Its handler's context may then carry the SDK's bare context.Canceled instead of
// errRequestGone: the SDK tears the one-request session down (its reader's error cancels the
// handlers) when its write to the gone client fails, which can come before the AfterFunc of
// serveStateless has run.
func requestGone(ctx context.Context) bool {
	carrier, ok := ctx.Value(carrierKey{}).(context.Context)
	return ok && carrier.Err() != nil
}

// serveStateless serves r with h, whose handlers' context ends when r's does, with the cause
// errRequestGone instead of r's context.Canceled.
func serveStateless(h http.Handler, w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancelCause(context.WithValue(context.WithoutCancel(r.Context()), carrierKey{}, r.Context()))
	defer cancel(nil)
	stop := context.AfterFunc(r.Context(), func() { cancel(errRequestGone) })
	defer stop()
	h.ServeHTTP(w, r.WithContext(ctx))
}

// readBody reads r's body up to limit bytes within timeout: a declared or actual length beyond
// it is an error before more than limit+1 bytes are read.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	size := r.ContentLength
	if size < 0 || size > limit {
		size = 512
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+1))
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		// The deadline stays: the server must not wait for the rest of the body after the 413.
		w.Header().Set("Connection", "close")
		return nil, err
	}
	if deadline {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return buf.Bytes(), nil
}

// sessionVersion makes the revision a session negotiated govern its requests: a request of a live
// session whose MCP-Protocol-Version header names an older revision (a client that sends a fixed
// header, as the conformance suite's raw requests do) is served as the negotiated one, so its
// SSE answer still opens with the priming event and closes with a retry field when polled.
func sessionVersion(s *sdk.Server, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	header := r.Header.Get("Mcp-Protocol-Version")
	if id == "" || header == "" {
		return
	}
	for ss := range s.Sessions() {
		if ss.ID() != id {
			continue
		}
		if params := ss.InitializeParams(); params != nil && params.ProtocolVersion > header && slices.Contains(servedVersions, params.ProtocolVersion) {
			r.Header.Set("Mcp-Protocol-Version", params.ProtocolVersion)
		}
		return
	}
}

// servedVersions are the revisions whose negotiation sessionVersion honours: those with
// sessions.
var servedVersions = []string{"2025-06-18", "2025-11-25"}

// StatelessRevision is the first MCP revision without sessions or initialize (SEP-2575), which
// HTTPHandler serves statelessly; revisions before it keep their sessions.
const StatelessRevision = "2026-07-28"

// isStatelessRequest reports whether r (with its POST body) belongs to StatelessRevision or
// later: server/discover (how such a client starts, whatever revision it ends up with), or a
// request naming such a revision in its Mcp-Protocol-Version header or in _meta. Everything
// else, an initialize included, goes to the handler with sessions.
func isStatelessRequest(r *http.Request, body []byte) bool {
	if r.Header.Get("Mcp-Protocol-Version") >= StatelessRevision {
		return true
	}
	if !bytes.Contains(body, []byte("server/discover")) && !bytes.Contains(body, []byte(sdk.MetaKeyProtocolVersion)) {
		return false // the common case: no second parse
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false // a batch or malformed: the handler with sessions answers it
	}
	return msg.Method == "server/discover" || msg.Params.Meta[sdk.MetaKeyProtocolVersion] != nil
}

// liveSessions counts s's sessions, stopping at limit.
func liveSessions(s *sdk.Server, limit int) int {
	n := 0
	for range s.Sessions() {
		if n++; n >= limit {
			break
		}
	}
	return n
}

// ResourceMetadataURL is the protected-resource metadata URL of resource (RFC 9728 section 3.1):
// ProtectedResourcePath inserted between its host and its path.
func ResourceMetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return ""
	}
	path := strings.TrimSuffix(u.Path, "/")
	return u.Scheme + "://" + u.Host + ProtectedResourcePath + path
}

// ProtectedResourceHandler serves the protected-resource metadata (RFC 9728) of opts.Resource:
// the resource, authorizationServers (the issuers whose tokens it accepts), the header bearer
// method and opts.Scopes. Mount it at ProtectedResourcePath and ProtectedResourcePath followed by
// the MCP endpoint's path. It checks Host like HTTPHandler.
func ProtectedResourceHandler(opts HTTPOptions, authorizationServers []string) (http.Handler, error) {
	if opts.Resource == "" {
		return nil, errors.New("protected-resource metadata: a resource URL is required")
	}
	inner := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               opts.Resource,
		AuthorizationServers:   authorizationServers,
		BearerMethodsSupported: []string{"header"},
		ScopesSupported:        opts.Scopes,
		ResourceName:           "toolgate",
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, opts.AllowedHosts) {
			http.Error(w, "Forbidden: Host not allowed", http.StatusForbidden)
			return
		}
		inner.ServeHTTP(w, r)
	}), nil
}

// hostAllowed reports whether a Host header names a loopback host or one of allowed.
func hostAllowed(hostport string, allowed []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	return loopback.Host(host) || slices.Contains(allowed, host)
}

// originAllowed reports whether an Origin header is a loopback origin or one of allowed.
func originAllowed(origin string, allowed []string) bool {
	if slices.Contains(allowed, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopback.Host(u.Hostname())
}
