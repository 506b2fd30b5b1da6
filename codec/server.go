package codec

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/internal/loopback"
)

// DefaultMaxBodyBytes is HandlerOptions.MaxBodyBytes's default: 4 MiB, the Temporal server's
// default largest payload (blob size limit error level is 2 MiB per payload).
const DefaultMaxBodyBytes = 4 << 20

// HandlerOptions configure Handler. They work at their zero value.
type HandlerOptions struct {
	// AllowedOrigins may call the codec server from a browser (the Web UI's origin, such as
	// "http://127.0.0.1:8233"); "*" allows any. Optional: default none (no CORS headers: only
	// non-browser clients such as the Temporal CLI).
	AllowedOrigins []string
	// AllowOrigin, when set, decides instead of AllowedOrigins (for an origin known only after
	// the codec server starts, such as a Web UI on a port picked later). Optional: default nil.
	AllowOrigin func(origin string) bool
	// Token, when set, is the bearer token every request must carry ("Authorization: Bearer
	// <token>"). Optional: default "" accepts every request (bind to loopback then).
	Token string
	// AllowedHosts are Host header names (without port, case-insensitive) answered beside
	// localhost, 127.0.0.1 and [::1]; any other Host gets 421 Misdirected Request, so a web page
	// that rebinds its own DNS name to this server cannot read plaintext. Optional: default none
	// (loopback names only).
	AllowedHosts []string
	// MaxBodyBytes bounds a request body: a longer one gets 413 after at most this many bytes are
	// read. Optional: default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionTTL is how long the session cookie a login at <prefix>/login sets lasts (with a
	// Token only; see the package documentation, Codec server). Optional: default
	// DefaultSessionTTL.
	SessionTTL time.Duration
	// SecureCookie marks the session cookie Secure, sent over HTTPS only: set it when browsers
	// reach the codec server through a TLS proxy. Optional: default false (the cookie is Secure
	// anyway when the request itself came over TLS).
	SecureCookie bool
}

// Handler serves the Temporal codec-server protocol for codec: POST .../encode and .../decode
// with {"payloads":[...]} in the body, answered in kind; OPTIONS preflights for allowed origins.
func Handler(codec converter.PayloadCodec, opts HandlerOptions) http.Handler {
	inner := converter.NewPayloadCodecHTTPHandler(codec)
	limit := opts.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !opts.hostAllowed(r.Host) {
			http.Error(w, "this codec server answers only to localhost, 127.0.0.1, [::1] and its --allow-host names", http.StatusMisdirectedRequest)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && opts.allowed(origin) {
			h := w.Header()
			if opts.AllowOrigin == nil && slices.Contains(opts.AllowedOrigins, "*") {
				// Any origin: never with credentials, so a page cannot ride on a browser's
				// cookies or HTTP authentication.
				h.Set("Access-Control-Allow-Origin", "*")
			} else {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Namespace")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if opts.Token != "" {
			if path.Base(r.URL.Path) == "login" || path.Base(r.URL.Path) == "logout" {
				opts.serveLogin(w, r)
				return
			}
			if !opts.authorized(r) {
				w.Header().Set("WWW-Authenticate", "Bearer")
				http.Error(w, "missing or wrong bearer token or session (browsers: log in at /login)", http.StatusUnauthorized)
				return
			}
		}
		if r.Method == http.MethodPost {
			if r.ContentLength > limit {
				tooLarge(w, limit)
				return
			}
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
			if err != nil {
				if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
					tooLarge(w, limit)
					return
				}
				http.Error(w, "read body", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		inner.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, fmt.Sprintf("request body larger than %d bytes", limit), http.StatusRequestEntityTooLarge)
}

func (o HandlerOptions) hostAllowed(host string) bool {
	return loopback.HostAllowed(host, o.AllowedHosts)
}

func (o HandlerOptions) allowed(origin string) bool {
	if o.AllowOrigin != nil {
		return o.AllowOrigin(origin)
	}
	return slices.Contains(o.AllowedOrigins, "*") || slices.Contains(o.AllowedOrigins, origin)
}

// bearerMatches compares in constant time.
func bearerMatches(header, token string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}
