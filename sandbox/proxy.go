package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The proxy of a command with AllowHosts: it listens on proxyAddr inside the sandbox's own
// network namespace (fresh and empty, so the port is always free), and HTTP_PROXY/HTTPS_PROXY
// name it.
const (
	proxyAddr         = "127.0.0.1:3128"
	proxyURL          = "http://" + proxyAddr
	maxAllowHosts     = 64
	maxProxyConns     = 64 // connections the sandbox may hold open to the proxy at once
	proxyDialTimeout  = 30 * time.Second
	proxyHeaderTimout = 30 * time.Second
)

// proxyEnv are the variables that point HTTP clients at the proxy; a command with AllowHosts
// cannot set them itself.
var proxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}

// hostName is a DNS name as an allowed host is written (lower case after normalizing).
var hostName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// allowHosts parses Command.AllowHosts: "name" allows ports 80 and 443, "name:port" that port.
// It returns the allowed "name:port" set.
func allowHosts(entries []string) (map[string]bool, error) {
	if len(entries) > maxAllowHosts {
		return nil, fmt.Errorf("%w: %d allowed hosts (at most %d)", ErrInvalidCommand, len(entries), maxAllowHosts)
	}
	allow := make(map[string]bool, 2*len(entries))
	for _, e := range entries {
		host, port, err := net.SplitHostPort(e)
		ports := []string{port}
		if err != nil {
			host, ports = e, []string{"80", "443"}
		} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return nil, fmt.Errorf("%w: allowed host %q: port is not between 1 and 65535", ErrInvalidCommand, truncate(e, 300))
		}
		host = normalizeHost(host)
		if len(host) > 253 || !hostName.MatchString(host) {
			return nil, fmt.Errorf("%w: allowed host %q is not a host name", ErrInvalidCommand, truncate(e, 300))
		}
		for _, p := range ports {
			allow[net.JoinHostPort(host, p)] = true
		}
	}
	return allow, nil
}

// normalizeHost lowercases a host name and drops one trailing dot.
func normalizeHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// proxy is the HTTP CONNECT and forward proxy of one command: it lets the command reach its
// allowed hosts (through the runner's Dial, which refuses private addresses) and nothing else.
type proxy struct {
	allow     map[string]bool
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	ctx       context.Context // ends when the command does
	cancel    context.CancelFunc
	srv       *http.Server
	transport *http.Transport
	forward   *httputil.ReverseProxy

	mu      sync.Mutex
	tunnels map[net.Conn]struct{} // both ends of every CONNECT tunnel, closed with the proxy
	closed  bool
}

// newProxy returns the proxy of allow, dialing through dial.
func newProxy(allow map[string]bool, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *proxy {
	p := &proxy{allow: allow, dial: dial, tunnels: map[net.Conn]struct{}{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.transport = &http.Transport{
		Proxy:                 nil, // never the worker's own proxy settings
		DialContext:           p.dialAllowed,
		MaxIdleConns:          8,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
	}
	p.forward = &httputil.ReverseProxy{
		// The request is already absolute (http://host/path); no X-Forwarded headers.
		Rewrite:   func(*httputil.ProxyRequest) {},
		Transport: p.transport,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "sandbox proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: proxyHeaderTimout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return p.ctx },
		// What the sandbox sends is never logged.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	return p
}

// serve serves the proxy on ln until close.
func (p *proxy) serve(ln net.Listener) {
	go p.srv.Serve(&limitListener{Listener: ln, slots: make(chan struct{}, maxProxyConns), done: make(chan struct{})})
}

// close stops the proxy and closes every connection it holds.
func (p *proxy) close() {
	p.cancel()
	p.srv.Close()
	p.transport.CloseIdleConnections()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
}

// dialAllowed dials addr ("host:port") when it is allowed.
func (p *proxy) dialAllowed(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !p.allow[net.JoinHostPort(normalizeHost(host), port)] {
		return nil, errNotAllowed
	}
	ctx, cancel := context.WithTimeout(ctx, proxyDialTimeout)
	defer cancel()
	return p.dial(ctx, network, net.JoinHostPort(normalizeHost(host), port))
}

// errNotAllowed: a host the command's AllowHosts does not name.
var errNotAllowed = errors.New("host not allowed")

// ServeHTTP serves CONNECT host:port (a tunnel, e.g. for HTTPS) and absolute http:// requests.
func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "sandbox proxy: send absolute http:// requests, or CONNECT for https", http.StatusBadRequest)
		return
	}
	hostport := r.URL.Host
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		hostport = net.JoinHostPort(hostport, "80")
	}
	if !p.allowed(hostport) {
		http.Error(w, "sandbox proxy: host not allowed: "+strconv.Quote(truncate(r.URL.Host, 300)), http.StatusForbidden)
		return
	}
	p.forward.ServeHTTP(w, r)
}

// allowed reports whether hostport is an allowed "host:port".
func (p *proxy) allowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	return err == nil && p.allow[net.JoinHostPort(normalizeHost(host), port)]
}

// connect tunnels the request's connection to its allowed target.
func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	if !p.allowed(r.Host) {
		http.Error(w, "sandbox proxy: host not allowed: "+strconv.Quote(truncate(r.Host, 300)), http.StatusForbidden)
		return
	}
	up, err := p.dialAllowed(r.Context(), "tcp", r.Host)
	if err != nil {
		http.Error(w, "sandbox proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "sandbox proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		p.untrack(up, down)
		return
	}
	go func() {
		defer p.untrack(up, down)
		done := make(chan struct{}, 2)
		go func() { pipe(up, buf.Reader); done <- struct{}{} }()
		go func() { pipe(down, up); done <- struct{}{} }()
		<-done
	}()
}

// pipe copies from src to dst until either ends.
func pipe(dst io.Writer, src io.Reader) {
	io.Copy(dst, src)
}

// track records a tunnel's two ends (false, closing them, when the proxy is closed already).
func (p *proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		a.Close()
		b.Close()
		return false
	}
	p.tunnels[a], p.tunnels[b] = struct{}{}, struct{}{}
	return true
}

// untrack closes a tunnel's two ends.
func (p *proxy) untrack(a, b net.Conn) {
	a.Close()
	b.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.tunnels, a)
	delete(p.tunnels, b)
}

// limitListener accepts at most cap(slots) connections at once.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{} // closed by Close
	once  sync.Once
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

// Close closes the listener and ends a wait for a slot.
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// slotConn frees its listener slot when closed.
type slotConn struct {
	net.Conn
	release func()
}

// Close closes the connection and frees its slot.
func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
