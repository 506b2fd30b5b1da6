package devserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func TestIsLoopbackHost(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"localhost", true},
		{"localhost:8233", true},
		{"LOCALHOST:8233", true},
		{"127.0.0.1", true},
		{"127.0.0.1:8233", true},
		{"[::1]", true},
		{"[::1]:8233", true},
		{"", false},
		{"evil.example", false},
		{"evil.example:8233", false},
		{"localhost.", false},
		{"localhost.:8233", false},
		{"app.localhost:8233", false},
		{"127.1:8233", false},
		{"127.0.0.2:8233", false},
		{"2130706433:8233", false},
		{"::1", false},
		{"0.0.0.0:8233", false},
		{"localhost:99999", false},
		{"localhost:http", false},
		{"[::1]:8233:1", false},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			assert.Equal(t, tt.want, isLoopbackHost(tt.give))
		})
	}
}

// A real HTTP request through the middleware: loopback names pass, any other Host gets 421 and
// never reaches the UI.
func TestLoopbackHostsOnly(t *testing.T) {
	reached := 0
	srv := httptest.NewServer(loopbackHostsOnly(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached++
		_, _ = io.WriteString(w, "ui")
	})))
	defer srv.Close()
	tests := []struct {
		host     string
		wantCode int
	}{
		{srv.Listener.Addr().String(), http.StatusOK},
		{"localhost", http.StatusOK},
		{"evil.example", http.StatusMisdirectedRequest},
		{"evil.example:" + portOf(t, srv), http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/default/workflows/x", nil)
		require.NoError(t, err)
		req.Host = tt.host
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, tt.wantCode, resp.StatusCode, tt.host)
	}
	assert.Equal(t, 2, reached, "only the loopback requests reached the UI")
}

func portOf(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	return port
}

// The UI server's limits (issue 22 item 5): a body declared over 4 MiB gets 413 from the real
// server before the UI reads it; a chunked body stops at 4 MiB with *http.MaxBytesError; header,
// read and idle timeouts are set.
func TestUIServerLimits(t *testing.T) {
	ln, err := listenUI(0)
	require.NoError(t, err)
	s, err := startUI(ln, "127.0.0.1:1", "default", "", zap.NewNop()) // the frontend is never dialed
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.stop(context.Background())) })
	assert.Positive(t, s.http.ReadHeaderTimeout)
	assert.Positive(t, s.http.ReadTimeout)
	assert.Positive(t, s.http.IdleTimeout)

	// A raw request: headers only, the body never sent, so the answer comes without reading it.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.Address(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /api/v1/namespaces/default/workflows/x/signal/y HTTP/1.1\r\nHost: localhost\r\n"+
		"Authorization: Bearer x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", uiMaxBodyBytes+1)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.True(t, resp.Close, "the connection is closed: the body is never read")

	var read int64
	var readErr error
	limited := limitBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read, readErr = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}), uiMaxBodyBytes)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/x", io.MultiReader(strings.NewReader(`"`), zeros{}))
	req.ContentLength = -1 // chunked: no length declared
	rec := httptest.NewRecorder()
	limited.ServeHTTP(rec, req)
	var tooLarge *http.MaxBytesError
	require.ErrorAs(t, readErr, &tooLarge)
	assert.Equal(t, int64(uiMaxBodyBytes), read, "read stops at the limit")
	assert.Equal(t, http.StatusNoContent, rec.Code)

	req = httptest.NewRequest(http.MethodPost, "/api/v1/x", strings.NewReader(`{}`))
	rec = httptest.NewRecorder()
	limited.ServeHTTP(rec, req)
	assert.NoError(t, readErr)
	assert.Equal(t, int64(2), read)
}

// zeros is an endless body.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
