package mcp_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cutProxy is a TCP proxy in front of an HTTP server that cuts the connection carrying an SSE
// answer in the middle of it. It forwards every byte both ways until the server has sent
// `pass` on a connection; that connection's later bytes are withheld from the client until they
// contain `withhold` (an event the server sent and the client never got), and then both of its
// TCP connections are closed, the HTTP response unfinished. The server sees its client gone
// (EOF); bytes any client sends after the cut are held until the server has closed its side of
// the cut connection, i.e. its handler has returned and released the stream. A silent proxy
// (newSilentCutProxy) cuts like a network drop: the server is never told, its side of the cut
// connection stays open, and what clients send after the cut goes through at once.
type cutProxy struct {
	t              *testing.T
	target         string
	ln             net.Listener
	pass, withhold []byte

	passed  chan struct{} // closed once `pass` went through to the client
	cut     chan struct{} // closed once the server closed its side of the cut connection (silent: once the client's is)
	cutting atomic.Bool   // set just before a cut that is not silent: later requests wait for cut
	claimed atomic.Bool   // one connection is cut, the first to carry `pass`
	silent  bool          // the server is not told of the cut

	redelivered     chan struct{} // closed once `withhold` reached a client (a resumption replayed it)
	redeliveredOnce sync.Once

	mu     sync.Mutex
	conns  []*proxiedConn
	closed bool // the test ended: no new connection
}

// proxiedConn records what went through one connection.
type proxiedConn struct {
	client, server net.Conn

	mu        sync.Mutex
	requests  []byte // client to server
	forwarded []byte // server to client, as the client got it
	cut       bool
}

// newCutProxy listens on a loopback port in front of target (host:port) until the test ends.
func newCutProxy(t *testing.T, target, pass, withhold string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{t: t, target: target, ln: ln, pass: []byte(pass), withhold: []byte(withhold),
		passed: make(chan struct{}), cut: make(chan struct{}), redelivered: make(chan struct{})}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		p.closed = true
		for _, c := range p.conns {
			_ = c.client.Close()
			_ = c.server.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.serve(client)
			}()
		}
	}()
	return p
}

// newSilentCutProxy is newCutProxy whose cut the server never sees.
func newSilentCutProxy(t *testing.T, target, pass, withhold string) *cutProxy {
	p := newCutProxy(t, target, pass, withhold)
	p.silent = true
	return p
}

// addr is the proxy's host:port.
func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		p.t.Errorf("proxy: dial %s: %v", p.target, err)
		return
	}
	defer server.Close()
	c := &proxiedConn{client: client, server: server}
	p.mu.Lock()
	closed := p.closed
	p.conns = append(p.conns, c)
	p.mu.Unlock()
	if closed {
		return
	}

	go func() { // client to server
		buf := make([]byte, 32<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if p.cutting.Load() {
					<-p.cut
				}
				c.mu.Lock()
				c.requests = append(c.requests, buf[:n]...)
				c.mu.Unlock()
				if _, werr := server.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				c.mu.Lock()
				cut := c.cut
				c.mu.Unlock()
				if !cut || !p.silent {
					_ = server.(*net.TCPConn).CloseWrite()
				}
				return
			}
		}
	}()

	// Server to client: forward, or withhold on the connection carrying `pass` and cut it.
	var seen, held []byte
	withholding := false
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		chunk := buf[:n]
		if withholding {
			held = append(held, chunk...)
			if bytes.Contains(held, p.withhold) {
				p.cutConn(c, client, server)
				return
			}
		} else if n > 0 {
			seen = append(seen, chunk...)
			c.mu.Lock()
			c.forwarded = append(c.forwarded, chunk...)
			c.mu.Unlock()
			if _, werr := client.Write(chunk); werr != nil {
				return
			}
			if bytes.Contains(seen, p.pass) && p.claimed.CompareAndSwap(false, true) {
				withholding = true
				close(p.passed)
			}
			if bytes.Contains(seen, p.withhold) {
				p.redeliveredOnce.Do(func() { close(p.redelivered) })
			}
		}
		if err != nil {
			return
		}
	}
}

// cutConn closes both sides of c without ending its HTTP response, waits until the server has
// closed its side (its handler returned), then lets held requests through. A silent cut closes
// the client's side only, lets requests through at once, and keeps reading the server's side
// (never closing it) until the server closes it or the test ends.
func (p *cutProxy) cutConn(c *proxiedConn, client, server net.Conn) {
	p.cutting.Store(!p.silent)
	c.mu.Lock()
	c.cut = true
	c.mu.Unlock()
	_ = client.Close()
	if p.silent {
		close(p.cut)
		_, _ = io.Copy(io.Discard, server)
		return
	}
	_ = server.(*net.TCPConn).CloseWrite()
	_, _ = io.Copy(io.Discard, server)
	close(p.cut)
}

// proxiedRequest is one HTTP request that went through the proxy.
type proxiedRequest struct {
	method, lastEventID, body string
	onCutConn                 bool
}

// requests parses the HTTP requests that went through the proxy, connection by connection in
// the order they were opened.
func (p *cutProxy) requests() []proxiedRequest {
	p.t.Helper()
	p.mu.Lock()
	conns := append([]*proxiedConn(nil), p.conns...)
	p.mu.Unlock()
	var out []proxiedRequest
	for _, c := range conns {
		c.mu.Lock()
		r := bufio.NewReader(bytes.NewReader(c.requests))
		cut := c.cut
		c.mu.Unlock()
		for {
			req, err := http.ReadRequest(r)
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				break // the end, or a request cut short
			}
			require.NoError(p.t, err)
			body, err := io.ReadAll(req.Body)
			if err != nil {
				break // a body cut short
			}
			out = append(out, proxiedRequest{method: req.Method, lastEventID: req.Header.Get("Last-Event-ID"),
				body: string(body), onCutConn: cut})
		}
	}
	return out
}

// sseEventID matches an SSE id field.
var sseEventID = regexp.MustCompile(`(?m)^id: ?(\S+)\r?$`)

// lastIDBeforeCut is the id of the last event the client got on the cut connection.
func (p *cutProxy) lastIDBeforeCut() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.mu.Lock()
		cut, forwarded := c.cut, c.forwarded
		c.mu.Unlock()
		if cut {
			ids := sseEventID.FindAllSubmatch(forwarded, -1)
			if len(ids) == 0 {
				return ""
			}
			return string(ids[len(ids)-1][1])
		}
	}
	return ""
}

// assertOneCallOneResumption checks what passed through the proxy: one tools/call, on the
// connection that was cut, and one resumption, a GET whose Last-Event-ID is lastEventID.
func (p *cutProxy) assertOneCallOneResumption(lastEventID string) {
	p.t.Helper()
	var calls, resumes int
	for _, r := range p.requests() {
		if r.method == http.MethodPost && strings.Contains(r.body, `"tools/call"`) {
			calls++
			assert.True(p.t, r.onCutConn, "the call's connection was cut")
		}
		if r.method == http.MethodGet && r.lastEventID != "" {
			resumes++
			assert.Equal(p.t, lastEventID, r.lastEventID, "the resumption's Last-Event-ID")
		}
	}
	assert.Equal(p.t, 1, calls, "one tools/call")
	assert.Equal(p.t, 1, resumes, "one resumption")
}
