package mcp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
)

// vmRSS is the resident set size of process pid in MiB, from /proc/PID/status.
func vmRSS(t *testing.T, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			require.NoError(t, err)
			return float64(kb) / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// A client that sends half its headers is dropped by --read-header-timeout: the server closes
// the connection.
func TestMCPSlowHeadersDropped(t *testing.T) {
	p := startMCPProcess(t, newFixture(t), "--read-header-timeout", "500ms")
	u, err := url.Parse(p.url)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n")
	require.NoError(t, err)
	// A generous guard against a hang, not a timing assertion: the server must close first.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
	_, err = io.ReadAll(conn)
	var netErr net.Error
	if err != nil && assert.ErrorAs(t, err, &netErr) {
		assert.False(t, netErr.Timeout(), "the server never closed the half-sent request")
	}
}

// Idle sessions expire after --session-timeout: with --max-sessions taken, initialize gets 503
// until they do, then works again.
func TestMCPSessionsExpire(t *testing.T) {
	p := startMCPProcess(t, newFixture(t), "--max-sessions", "4", "--session-timeout", "1s")
	for range 4 {
		require.Equal(t, http.StatusOK, postInitialize(t, p.url, "localhost", "").StatusCode)
	}
	// The fifth is refused unless the first four have already expired (a loaded machine).
	status := postInitialize(t, p.url, "localhost", "").StatusCode
	assert.Contains(t, []int{http.StatusServiceUnavailable, http.StatusOK}, status)
	require.Eventually(t, func() bool {
		return postInitialize(t, p.url, "localhost", "").StatusCode == http.StatusOK
	}, time.Minute, 200*time.Millisecond, "idle sessions expire")
}

// A flood of 2,000 initialize calls leaves at most --max-sessions (default 1,024) live, the rest
// get 503; a body over --max-body-bytes gets 413 before the server reads it all (by
// Content-Length, or while reading a chunked one); the process's RSS stays bounded through both
// attacks (the figures are in RELIABILITY.md).
func TestMCPSessionFloodAndLargeBodies(t *testing.T) {
	const maxSessions = 1024 // mcp.DefaultMaxSessions
	p := startMCPProcess(t, newFixture(t))
	pid := p.cmd.Process.Pid
	before := vmRSS(t, pid)

	var ok, unavailable, other atomic.Int64
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 16 {
		wg.Go(func() {
			for range jobs {
				switch postInitialize(t, p.url, "localhost", "").StatusCode {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusServiceUnavailable:
					unavailable.Add(1)
				default:
					other.Add(1)
				}
			}
		})
	}
	for i := range 2000 {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	afterFlood := vmRSS(t, pid)
	assert.LessOrEqual(t, ok.Load(), int64(maxSessions+16), "live sessions are bounded") // +16: a race between the count and a session's registration
	assert.GreaterOrEqual(t, ok.Load(), int64(maxSessions))
	assert.Equal(t, 2000-ok.Load(), unavailable.Load())
	assert.Zero(t, other.Load())

	// By Content-Length: 800 MB declared, refused before the body is read.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.url, io.LimitReader(zeros{}, 800<<20))
	require.NoError(t, err)
	req.ContentLength = 800 << 20
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "any") // the sessions are all taken: not an initialize
	resp, err := http.DefaultClient.Do(req)
	if assert.NoError(t, err) {
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		_ = resp.Body.Close()
	}

	// Chunked: 30 concurrent 16 MiB bodies; each is cut off after the limit.
	var sent atomic.Int64
	var tooLarge atomic.Int64
	for range 30 {
		wg.Go(func() {
			body := &countingReader{r: io.LimitReader(zeros{}, 16<<20), n: &sent}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.url, body)
			if !assert.NoError(t, err) {
				return
			}
			req.ContentLength = -1 // chunked
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", "any")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return // the server may close before the client has sent everything
			}
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusRequestEntityTooLarge {
				tooLarge.Add(1)
			}
		})
	}
	wg.Wait()
	afterBodies := vmRSS(t, pid)
	assert.Positive(t, tooLarge.Load(), "chunked bodies over the limit get 413")
	t.Logf("VmRSS of toolgate mcp: %.0f MiB at start, %.0f MiB after 2,000 initialize calls (%d sessions admitted), %.0f MiB after an 800 MB and 30 chunked 16 MiB bodies (%d MiB sent, %d answered 413)",
		before, afterFlood, ok.Load(), afterBodies, sent.Load()>>20, tooLarge.Load())
	assert.Less(t, afterBodies-before, 200.0, "memory stays bounded")
	assert.Less(t, sent.Load(), int64(30*16<<20), "the server stopped reading the bodies")
}

// zeros reads as endless '0' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A body sent too slowly is dropped after BodyReadTimeout (413), and that read deadline is lifted
// once a body is read: a tools/call held longer than it still gets its result on its SSE stream.
func TestHTTPBodyReadTimeoutSparesLongCalls(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(mcp.HTTPHandler(f.server(), mcp.HTTPOptions{BodyReadTimeout: 200 * time.Millisecond}))
	t.Cleanup(srv.Close)
	cs := connectClient(t, &sdk.StreamableClientTransport{Endpoint: srv.URL})

	const key = "body-timeout-long"
	gate := f.tools.hold(key)
	type outcome struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"key": key}})
		done <- outcome{res, err}
	}()
	require.Equal(t, key, <-f.tools.started)

	// The slow body: 10 of 1,000 declared bytes, then nothing.
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute))) // a guard against a hang
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the server answers the stalled body")
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	// The held call started before the probe, so it has outlived the timeout.
	close(gate)
	got := <-done
	require.NoError(t, got.err)
	assert.False(t, got.res.IsError)
	assert.JSONEq(t, `{"runs":1}`, text(t, got.res))
}
