package mcp_test

import (
	"bufio"
	"context"
	"crypto"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
)

const connTestToken = "conn-test-static-token-0123456789"

// servedLimited serves an authenticated HTTPHandler at /mcp on a loopback ConnLimiter with opts,
// as toolgate mcp --listen does, and returns the limiter and the listener's address.
func servedLimited(t testing.TB, opts mcp.ConnOptions) (*mcp.ConnLimiter, string) {
	t.Helper()
	verifier, err := mcp.StaticTokenVerifier(connTestToken)
	require.NoError(t, err)
	return servedLimitedWith(t, verifier, opts, time.Now)
}

// servedLimitedWith is servedLimited with another verifier and the limiter's clock.
func servedLimitedWith(t testing.TB, verifier auth.TokenVerifier, opts mcp.ConnOptions, now func() time.Time) (*mcp.ConnLimiter, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.HTTPHandler(mcp.NewServer(nil, nil, mcp.Options{}), mcp.HTTPOptions{Verifier: verifier, Resource: testResource, MaxSessions: 1 << 16}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	limited := mcp.LimitConnsClock(ln, opts, now)
	srv := limited.Server(mux)
	go func() { _ = srv.Serve(limited) }()
	t.Cleanup(func() { _ = srv.Close() })
	return limited, ln.Addr().String()
}

// dialFrom opens a connection to addr from the loopback address local (Linux routes all of
// 127/8 to lo).
func dialFrom(ctx context.Context, local, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return d.DialContext(ctx, "tcp", addr)
}

// initializeRequest is an authenticated initialize on /mcp, as raw HTTP/1.1.
func initializeRequest(token string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	return fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", token, len(body), body)
}

// roundTrip writes req on conn and reads the response's status, draining its body.
func roundTrip(t testing.TB, conn net.Conn, br *bufio.Reader, req string) int {
	t.Helper()
	_, err := io.WriteString(conn, req)
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// attackSockets is how many idle sockets an attack opens: 700 (the figure), fewer if the
// test's file descriptor limit (two per socket, both ends being in this process) is lower.
func attackSockets(t testing.TB) int {
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	n := min(700, (int(lim.Cur)-256)/2)
	require.Greater(t, n, 200, "too few file descriptors for the attack")
	return n
}

// Hundreds of idle unauthenticated sockets (half of them idle, half with half-sent headers), from
// one other address, from 50 others, or from the client's own address, do not delay an
// authenticated initialize: it completes well within the guard (before, Accept waited for 188 of
// the 700 to time out their headers, 8 s and more). The unauthenticated connections left open
// stay within the per-address and total bounds.
func TestUnauthenticatedSocketsDoNotDelayInitialize(t *testing.T) {
	n := attackSockets(t)
	many := make([]string, 50)
	for i := range many {
		many[i] = fmt.Sprintf("127.0.0.%d", 10+i)
	}
	tests := []struct {
		name      string
		attackers []string
	}{
		{"one other address", []string{"127.0.0.2"}},
		{"fifty other addresses", many},
		{"the client's own address", []string{"127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limited, addr := servedLimited(t, mcp.ConnOptions{})
			openAttack(t, addr, tt.attackers, n)

			// A generous guard, not a timing assertion: before the limiter, this took 8 s and more.
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			start := time.Now()
			conn, err := dialFrom(ctx, "127.0.0.1", addr)
			require.NoError(t, err)
			defer conn.Close()
			deadline, _ := ctx.Deadline()
			require.NoError(t, conn.SetDeadline(deadline))
			status := roundTrip(t, conn, bufio.NewReader(conn), initializeRequest(connTestToken))
			t.Logf("initialize behind %d idle unauthenticated sockets from %d address(es): %v", n, len(tt.attackers), time.Since(start))
			assert.Equal(t, http.StatusOK, status)

			// The kernel hands connections over in order: every attack socket was accepted
			// before the client's.
			authed, unauth := limited.Counts()
			assert.Equal(t, 1, authed)
			assert.LessOrEqual(t, unauth, mcp.DefaultMaxConns/2)
		})
	}
}

// Past MaxUnauthenticatedPerAddress, an address's oldest unauthenticated connections are closed
// for a newcomer once they have had their grace (a second) to authenticate; a burst of fresh
// connections from one address is spared meanwhile.
func TestUnauthenticatedPerAddressBound(t *testing.T) {
	verifier, err := mcp.StaticTokenVerifier(connTestToken)
	require.NoError(t, err)
	var later atomic.Int64 // how far ahead the limiter's clock runs
	now := func() time.Time { return time.Now().Add(time.Duration(later.Load())) }
	limited, addr := servedLimitedWith(t, verifier, mcp.ConnOptions{MaxUnauthenticatedPerAddress: 4, UnauthenticatedTimeout: time.Minute}, now)
	unauthenticated := func(want int) func() bool {
		return func() bool {
			_, unauth := limited.Counts()
			return unauth == want
		}
	}

	var burst []net.Conn
	for range 8 {
		conn, err := dialFrom(t.Context(), "127.0.0.2", addr)
		require.NoError(t, err)
		defer conn.Close()
		burst = append(burst, conn)
	}
	require.Eventually(t, unauthenticated(8), time.Minute, 10*time.Millisecond, "a burst of fresh connections is kept")

	later.Store(int64(2 * time.Second))
	newcomer, err := dialFrom(t.Context(), "127.0.0.2", addr)
	require.NoError(t, err)
	defer newcomer.Close()
	require.Eventually(t, unauthenticated(4), time.Minute, 10*time.Millisecond, "the 5 oldest closed for the newcomer")
	require.NoError(t, burst[0].SetReadDeadline(time.Now().Add(time.Minute))) // a guard against a hang
	_, err = burst[0].Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the oldest was closed")
	assert.Equal(t, http.StatusOK, roundTrip(t, newcomer, bufio.NewReader(newcomer), initializeRequest(connTestToken)),
		"the newcomer is served")
}

// An unauthenticated connection is closed UnauthenticatedTimeout after its accept, idle
// keep-alive after a 401 or not; one whose request authenticated keeps the server's own idle
// timeout and serves a second request after an unauthenticated connection accepted later was
// closed.
func TestUnauthenticatedConnectionsExpire(t *testing.T) {
	// Long enough for a loaded machine to serve a request within it; the test waits that long.
	_, addr := servedLimited(t, mcp.ConnOptions{UnauthenticatedTimeout: 2 * time.Second})

	authed, err := dialFrom(t.Context(), "127.0.0.1", addr)
	require.NoError(t, err)
	defer authed.Close()
	br := bufio.NewReader(authed)
	require.Equal(t, http.StatusOK, roundTrip(t, authed, br, initializeRequest(connTestToken)))

	// One sends a request with a wrong token and idles after the 401, one never sends anything.
	var refused []*bufio.Reader
	for _, token := range []string{"wrong-token-0123456789", ""} {
		conn, err := dialFrom(t.Context(), "127.0.0.1", addr)
		require.NoError(t, err)
		defer conn.Close()
		// A guard against a hang, not a timing assertion: the server must close it first.
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
		br := bufio.NewReader(conn)
		if token != "" {
			_, err = io.WriteString(conn, initializeRequest(token))
			require.NoError(t, err)
			if resp, err := http.ReadResponse(br, nil); err == nil { // an error: closed first
				assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
				_, _ = io.Copy(io.Discard, resp.Body)
			}
		}
		refused = append(refused, br)
	}
	for _, br := range refused {
		_, err = br.ReadByte()
		require.ErrorIs(t, err, io.EOF, "the server closed the unauthenticated connection")
	}

	// authed was accepted before the refused ones, so its unauthenticated lifetime is over too.
	assert.Equal(t, http.StatusOK, roundTrip(t, authed, br, initializeRequest(connTestToken)),
		"the authenticated connection outlived the unauthenticated deadline")
}

// With every slot held by authenticated connections, a newcomer waits for one to close; an
// unauthenticated connection never holds a slot against it.
func TestAuthenticatedConnectionsHoldTheSlots(t *testing.T) {
	limited, addr := servedLimited(t, mcp.ConnOptions{MaxConns: 2})
	var conns []net.Conn
	for range 2 {
		c, err := dialFrom(t.Context(), "127.0.0.1", addr)
		require.NoError(t, err)
		defer c.Close()
		require.Equal(t, http.StatusOK, roundTrip(t, c, bufio.NewReader(c), initializeRequest(connTestToken)))
		conns = append(conns, c)
	}
	third, err := dialFrom(t.Context(), "127.0.0.1", addr)
	require.NoError(t, err)
	defer third.Close()
	thirdDone := make(chan int, 1)
	go func() {
		_, _ = io.WriteString(third, initializeRequest(connTestToken))
		resp, err := http.ReadResponse(bufio.NewReader(third), nil)
		if err != nil {
			thirdDone <- 0
			return
		}
		_ = resp.Body.Close()
		thirdDone <- resp.StatusCode
	}()
	require.NoError(t, conns[0].Close())
	select {
	case status := <-thirdDone:
		assert.Equal(t, http.StatusOK, status)
	case <-time.After(time.Minute): // a guard against a hang
		t.Fatal("the waiting connection was not served after a slot freed")
	}
	authed, unauth := limited.Counts()
	assert.Equal(t, 2, authed, "the closed connection's slot went to the newcomer")
	assert.Zero(t, unauth)
}

// openAttack opens n idle unauthenticated sockets to addr from the attackers' addresses in turn,
// every other one with half-sent headers, closed when t ends.
func openAttack(t testing.TB, addr string, attackers []string, n int) {
	t.Helper()
	for i := range n {
		conn, err := dialFrom(t.Context(), attackers[i%len(attackers)], addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		if i%2 == 1 {
			_, _ = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
		}
	}
}

// BenchmarkInitializeBehindIdleSockets measures an authenticated initialize on a fresh
// connection (dial, request, answer) with no attack, and behind 700 idle unauthenticated sockets
// from one other address or from 50 (before the ConnLimiter: 10 s; docs/BENCHMARKS.md).
func BenchmarkInitializeBehindIdleSockets(b *testing.B) {
	many := make([]string, 50)
	for i := range many {
		many[i] = fmt.Sprintf("127.0.0.%d", 10+i)
	}
	for _, bb := range []struct {
		name      string
		attackers []string
	}{
		{"no-attack", nil},
		{"one-address", []string{"127.0.0.2"}},
		{"fifty-addresses", many},
	} {
		b.Run(bb.name, func(b *testing.B) {
			_, addr := servedLimited(b, mcp.ConnOptions{})
			if bb.attackers != nil {
				openAttack(b, addr, bb.attackers, attackSockets(b))
			}
			req := initializeRequest(connTestToken)
			for b.Loop() {
				conn, err := dialFrom(b.Context(), "127.0.0.1", addr)
				require.NoError(b, err)
				if status := roundTrip(b, conn, bufio.NewReader(conn), req); status != http.StatusOK {
					b.Fatalf("initialize: %d", status)
				}
				_ = conn.Close()
			}
		})
	}
}

// One token principal holds at most MaxConnsPerPrincipal connections: its request on one more
// gets 429 and that connection is closed, while another principal is served; a connection the
// principal closes frees its place.
func TestConnectionsPerPrincipal(t *testing.T) {
	s := newRSASigner(t, "k")
	verifier, err := mcp.JWTVerifier(mcp.JWTOptions{Audience: testResource, Keys: []crypto.PublicKey{s.key.Public()}})
	require.NoError(t, err)
	limited, addr := servedLimitedWith(t, verifier, mcp.ConnOptions{MaxConns: 8, MaxConnsPerPrincipal: 2}, time.Now)
	alice := s.token(t, validClaims())
	bobClaims := validClaims()
	bobClaims["sub"] = "bob"
	bob := s.token(t, bobClaims)

	open := func(token string) (net.Conn, *bufio.Reader, int) {
		conn, err := dialFrom(t.Context(), "127.0.0.1", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		require.NoError(t, conn.SetDeadline(time.Now().Add(time.Minute))) // a guard against a hang
		br := bufio.NewReader(conn)
		return conn, br, roundTrip(t, conn, br, initializeRequest(token))
	}
	first, _, status := open(alice)
	require.Equal(t, http.StatusOK, status)
	_, _, status = open(alice)
	require.Equal(t, http.StatusOK, status)
	_, refusedReader, status := open(alice)
	assert.Equal(t, http.StatusTooManyRequests, status, "alice's third connection")
	_, err = refusedReader.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the refused connection is closed")
	_, _, status = open(bob)
	assert.Equal(t, http.StatusOK, status, "another principal is served")
	authed, _ := limited.Counts()
	assert.Equal(t, 3, authed)

	require.NoError(t, first.Close())
	require.Eventually(t, func() bool { // the server notices the close on its own time
		authed, _ := limited.Counts()
		return authed == 2
	}, time.Minute, 10*time.Millisecond)
	_, _, status = open(alice)
	assert.Equal(t, http.StatusOK, status, "a closed connection frees its place")
}

// toolgate mcp --listen serves through the ConnLimiter: 700 idle sockets from another address
// leave an authenticated initialize served at once, and the connection it came on outlives
// --unauthenticated-timeout (the server marks it authenticated) while an idle one accepted
// later is closed.
func TestMCPProcessUnauthenticatedSockets(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(connTestToken), 0o600))
	p := startMCPProcess(t, newFixture(t), "--auth-token-file", tokenFile, "--unauthenticated-timeout", "2s")
	u, err := url.Parse(p.url)
	require.NoError(t, err)
	openAttack(t, u.Host, []string{"127.0.0.2"}, attackSockets(t))

	// A generous guard, not a timing assertion: before the limiter, this took 10 s.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	authed, err := dialFrom(ctx, "127.0.0.1", u.Host)
	require.NoError(t, err)
	defer authed.Close()
	deadline, _ := ctx.Deadline()
	require.NoError(t, authed.SetDeadline(deadline))
	br := bufio.NewReader(authed)
	require.Equal(t, http.StatusOK, roundTrip(t, authed, br, initializeRequest(connTestToken)))
	require.NoError(t, authed.SetDeadline(time.Time{}))

	idle, err := dialFrom(t.Context(), "127.0.0.1", u.Host)
	require.NoError(t, err)
	defer idle.Close()
	require.NoError(t, idle.SetReadDeadline(time.Now().Add(time.Minute))) // a guard against a hang
	_, err = idle.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the server closed the idle unauthenticated connection")
	assert.Equal(t, http.StatusOK, roundTrip(t, authed, br, initializeRequest(connTestToken)),
		"the authenticated connection outlived --unauthenticated-timeout")
}
