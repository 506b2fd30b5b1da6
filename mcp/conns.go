package mcp

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Connection limits of the streamable HTTP listener, so that unauthenticated connections cannot
// queue ahead of authenticated ones.
//
// A connection is unauthenticated until one of its requests passes HTTPHandler's authentication
// (any request past the Host and Origin checks when HTTPHandler has no Verifier). Unauthenticated
// connections hold no slot of their own: they are bounded per remote address and all together,
// and past either bound the oldest unauthenticated one (of that address, or of all) is closed to
// make room for the newcomer, which is how a legitimate client, who sends its token at once,
// gets in however many idle sockets others hold. The per-address bound spares connections
// accepted less than a second ago (a client's burst of fresh connections); the total ones
// (MaxUnauthenticated, MaxConns) are hard. An unauthenticated connection lives at most
// UnauthenticatedTimeout from its accept: its read and write deadlines never pass that moment,
// whatever the server sets for headers, bodies or keep-alive, until it authenticates. Only
// authenticated connections can make the listener wait: with MaxConns of them open, Accept holds
// the next connection until one closes, and one token principal holds at most
// MaxConnsPerPrincipal of them.

// unauthenticatedGrace is how long a connection is spared by its address's bound (at most half
// of UnauthenticatedTimeout).
const unauthenticatedGrace = time.Second

// Defaults of ConnOptions.
const (
	// DefaultMaxConns bounds the open connections, authenticated or not.
	DefaultMaxConns = 512
	// DefaultMaxConnsPerPrincipal bounds the authenticated connections of one token principal.
	DefaultMaxConnsPerPrincipal = 128
	// DefaultMaxUnauthenticatedPerAddress bounds the unauthenticated connections of one remote
	// address (an IPv6 /64).
	DefaultMaxUnauthenticatedPerAddress = 16
	// DefaultUnauthenticatedTimeout is how long a connection may stay unauthenticated.
	DefaultUnauthenticatedTimeout = 5 * time.Second
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes an authenticated keep-alive connection idle for this long.
	DefaultIdleTimeout = 2 * time.Minute
)

// ConnOptions bound the connections of a listener serving HTTPHandler (LimitConns). They work at
// their zero value.
type ConnOptions struct {
	// MaxConns bounds the open connections. Unauthenticated ones never make a newcomer wait: the
	// oldest is closed instead. Optional: default DefaultMaxConns.
	MaxConns int
	// MaxConnsPerPrincipal bounds the connections one token principal (PrincipalOf) has
	// authenticated: a request of the principal on a further connection gets 429 and the
	// connection is closed, so that a few principals cannot hold every slot. Requests without a
	// token (no Verifier) are not bounded by it. Every holder of a static token is one principal:
	// raise it when many clients share one. Optional: default DefaultMaxConnsPerPrincipal;
	// negative for no bound.
	MaxConnsPerPrincipal int
	// MaxUnauthenticated bounds the unauthenticated connections, all addresses together; past it
	// the oldest is closed. Optional: default half of MaxConns.
	MaxUnauthenticated int
	// MaxUnauthenticatedPerAddress bounds the unauthenticated connections of one remote address
	// (an IPv4 address, an IPv6 /64); past it that address's oldest is closed, unless it was
	// accepted less than a second ago (a burst of fresh connections goes over it until then). Behind a reverse
	// proxy every client has the proxy's address: raise it. Optional: default
	// DefaultMaxUnauthenticatedPerAddress; negative for no bound.
	MaxUnauthenticatedPerAddress int
	// UnauthenticatedTimeout closes a connection this long after its accept unless one of its
	// requests has authenticated (headers, body and keep-alive idling of an unauthenticated
	// connection all fall within it). Optional: default DefaultUnauthenticatedTimeout.
	UnauthenticatedTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (http.Server.ReadHeaderTimeout).
	// Optional: default DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle for this long (http.Server.IdleTimeout).
	// Optional: default DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// ConnLimiter is a net.Listener enforcing ConnOptions. Serve it with the http.Server its Server
// method returns: that server tells the limiter which connections have authenticated.
type ConnLimiter struct {
	net.Listener
	opts ConnOptions
	now  func() time.Time

	mu     sync.Mutex
	room   *sync.Cond // signalled when an authenticated connection closes, or the limiter does
	closed bool
	authed int
	unauth *list.List // of *limitedConn, oldest first
	// byAddress holds each address's unauthenticated connections, oldest first.
	byAddress map[string][]*limitedConn
	// byPrincipal counts each token principal's authenticated connections.
	byPrincipal map[string]int
}

// LimitConns wraps ln to enforce opts.
func LimitConns(ln net.Listener, opts ConnOptions) *ConnLimiter {
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.MaxUnauthenticated <= 0 {
		opts.MaxUnauthenticated = max(opts.MaxConns/2, 1)
	}
	if opts.MaxConnsPerPrincipal == 0 {
		opts.MaxConnsPerPrincipal = DefaultMaxConnsPerPrincipal
	}
	if opts.MaxUnauthenticatedPerAddress == 0 {
		opts.MaxUnauthenticatedPerAddress = DefaultMaxUnauthenticatedPerAddress
	}
	if opts.UnauthenticatedTimeout <= 0 {
		opts.UnauthenticatedTimeout = DefaultUnauthenticatedTimeout
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	l := &ConnLimiter{Listener: ln, opts: opts, now: time.Now, unauth: list.New(), byAddress: map[string][]*limitedConn{},
		byPrincipal: map[string]int{}}
	l.room = sync.NewCond(&l.mu)
	return l
}

// Server returns an http.Server serving h on l's connections: l's header and idle timeouts,
// and the connection in each request's context so that HTTPHandler marks it authenticated. No
// ReadTimeout or WriteTimeout: a tools/call answers on an SSE stream that lasts as long as the
// call (HTTPOptions.BodyReadTimeout bounds a body).
func (l *ConnLimiter) Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.opts.ReadHeaderTimeout,
		IdleTimeout:       l.opts.IdleTimeout,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if lc, ok := c.(*limitedConn); ok {
				return context.WithValue(ctx, limitedConnKey{}, lc)
			}
			return ctx
		},
	}
}

// Counts returns the open connections: authenticated and not.
func (l *ConnLimiter) Counts() (authenticated, unauthenticated int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.authed, l.unauth.Len()
}

// Accept accepts the next connection as unauthenticated, closing the oldest unauthenticated
// ones past the bounds; with MaxConns authenticated connections open it waits until one closes.
func (l *ConnLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	now := l.now()
	lc := &limitedConn{Conn: c, limiter: l, address: addressKey(c.RemoteAddr().String()),
		accepted: now, expires: now.Add(l.opts.UnauthenticatedTimeout)}
	_ = c.SetReadDeadline(lc.expires)
	_ = c.SetWriteDeadline(lc.expires)

	l.mu.Lock()
	for l.authed >= l.opts.MaxConns && !l.closed {
		l.room.Wait()
	}
	if l.closed {
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	var victims []*limitedConn
	// The per-address bound spares connections younger than the grace: a client's burst of fresh
	// connections is not cut before its requests are read. The total bounds below are hard.
	grace := min(unauthenticatedGrace, l.opts.UnauthenticatedTimeout/2)
	for l.opts.MaxUnauthenticatedPerAddress > 0 {
		same := l.byAddress[lc.address]
		if len(same) < l.opts.MaxUnauthenticatedPerAddress || now.Sub(same[0].accepted) < grace {
			break
		}
		victims = append(victims, l.dropLocked(same[0]))
	}
	if l.unauth.Len() >= l.opts.MaxUnauthenticated || (l.authed+l.unauth.Len() >= l.opts.MaxConns && l.unauth.Len() > 0) {
		victims = append(victims, l.dropLocked(l.unauth.Front().Value.(*limitedConn)))
	}
	lc.element = l.unauth.PushBack(lc)
	l.byAddress[lc.address] = append(l.byAddress[lc.address], lc)
	l.mu.Unlock()
	for _, v := range victims {
		_ = v.Conn.Close()
	}
	return lc, nil
}

// Close closes the listener and wakes an Accept waiting for room.
func (l *ConnLimiter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.room.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// dropLocked removes an unauthenticated c from the bounds' lists (l.mu held) and returns it.
func (l *ConnLimiter) dropLocked(c *limitedConn) *limitedConn {
	l.unauth.Remove(c.element)
	c.element = nil
	same := l.byAddress[c.address]
	for i, o := range same {
		if o == c {
			same = append(same[:i:i], same[i+1:]...)
			break
		}
	}
	if len(same) == 0 {
		delete(l.byAddress, c.address)
	} else {
		l.byAddress[c.address] = same
	}
	c.state = connGone
	return c
}

// connState is where a limitedConn is counted.
type connState int

const (
	connUnauthenticated connState = iota // in unauth and byAddress
	connAuthenticated                    // in authed
	connGone                             // counted nowhere
)

// limitedConn is a connection of a ConnLimiter. While unauthenticated, its deadlines never pass
// expires; the deadlines the server asks for are kept and applied once it authenticates.
type limitedConn struct {
	net.Conn
	limiter  *ConnLimiter
	address  string
	accepted time.Time
	expires  time.Time

	// Guarded by limiter.mu.
	state     connState
	element   *list.Element
	principal string // once authenticated: the token principal, "" for none

	deadlineMu          sync.Mutex
	authenticated       bool
	wantRead, wantWrite time.Time
}

// limitedConnKey is the request context key of a request's *limitedConn.
type limitedConnKey struct{}

// markAuthenticated records that a request of principal ("" for none: no Verifier) on ctx's
// connection (if a ConnLimiter's) has passed authentication: the connection leaves the
// unauthenticated bounds and gets the deadlines the server asked for. It reports false, leaving
// the connection unauthenticated, when principal already holds MaxConnsPerPrincipal
// connections: the request is to be refused and the connection closed.
func markAuthenticated(ctx context.Context, principal string) bool {
	c, ok := ctx.Value(limitedConnKey{}).(*limitedConn)
	if !ok {
		return true
	}
	l := c.limiter
	l.mu.Lock()
	if c.state != connUnauthenticated {
		l.mu.Unlock()
		return true // counted once, for the principal that first authenticated it
	}
	if principal != "" && l.opts.MaxConnsPerPrincipal > 0 && l.byPrincipal[principal] >= l.opts.MaxConnsPerPrincipal {
		l.mu.Unlock()
		return false
	}
	l.dropLocked(c)
	c.state = connAuthenticated
	c.principal = principal
	l.authed++
	if principal != "" {
		l.byPrincipal[principal]++
	}
	l.mu.Unlock()

	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	c.authenticated = true
	_ = c.Conn.SetReadDeadline(c.wantRead)
	_ = c.Conn.SetWriteDeadline(c.wantWrite)
	return true
}

// Close closes the connection and releases what it counted for.
func (c *limitedConn) Close() error {
	l := c.limiter
	l.mu.Lock()
	switch c.state {
	case connUnauthenticated:
		l.dropLocked(c)
	case connAuthenticated:
		l.authed--
		if c.principal != "" {
			if l.byPrincipal[c.principal]--; l.byPrincipal[c.principal] <= 0 {
				delete(l.byPrincipal, c.principal)
			}
		}
		c.state = connGone
		l.room.Signal()
	}
	l.mu.Unlock()
	return c.Conn.Close()
}

// clamp is t, or expires if the connection is unauthenticated and t is later (zero: none).
func (c *limitedConn) clamp(t time.Time) time.Time {
	if !c.authenticated && (t.IsZero() || t.After(c.expires)) {
		return c.expires
	}
	return t
}

func (c *limitedConn) SetDeadline(t time.Time) error {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	c.wantRead, c.wantWrite = t, t
	if err := c.Conn.SetReadDeadline(c.clamp(t)); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(c.clamp(t))
}

func (c *limitedConn) SetReadDeadline(t time.Time) error {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	c.wantRead = t
	return c.Conn.SetReadDeadline(c.clamp(t))
}

func (c *limitedConn) SetWriteDeadline(t time.Time) error {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	c.wantWrite = t
	return c.Conn.SetWriteDeadline(c.clamp(t))
}

// addressKey is the address a remote "host:port" counts under: the IP address, an IPv6 one's /64
// (one host usually holds a whole /64).
func addressKey(remote string) string {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return remote
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		prefix, _ := ip.Prefix(64)
		return prefix.String()
	}
	return ip.String()
}
