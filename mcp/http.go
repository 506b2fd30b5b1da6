package mcp

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/loopback"
)

// HTTPOptions configure HTTPHandler. They work at their zero value.
type HTTPOptions struct {
	// AllowedHosts are the Host header names (without port) accepted besides the loopback names
	// (localhost, 127.0.0.1, ::1). Optional: default none, only loopback names.
	AllowedHosts []string
	// AllowedOrigins are the Origin header values (scheme://host[:port]) accepted besides loopback
	// origins. A request without an Origin header (a non-browser client) is accepted. Optional:
	// default none, only loopback origins.
	AllowedOrigins []string
}

// maxBodyBytes bounds a request body HTTPHandler reads.
const maxBodyBytes = 16 << 20

// HTTPHandler serves s over the streamable HTTP transport. It answers 403 Forbidden to a request
// whose Host is not a loopback name or one of opts.AllowedHosts (DNS rebinding), and to one whose
// Origin header is present but neither a loopback origin nor one of opts.AllowedOrigins, as the
// MCP transport spec requires. Like Transport, it moves the "task" member of a tools/call
// request into _meta for the server's task support.
func HTTPHandler(s *sdk.Server, opts HTTPOptions) http.Handler {
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, opts.AllowedHosts) {
			http.Error(w, "Forbidden: Host not allowed", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, opts.AllowedOrigins) {
			http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
			if err != nil {
				http.Error(w, "Request body too large or unreadable", http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(liftTaskBody(body)))
			r.ContentLength = -1
		}
		inner.ServeHTTP(w, r)
	})
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
