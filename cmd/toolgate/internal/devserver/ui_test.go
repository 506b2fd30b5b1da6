package devserver

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
