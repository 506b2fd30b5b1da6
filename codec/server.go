package codec

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"
)

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
}

// Handler serves the Temporal codec-server protocol for codec: POST .../encode and .../decode
// with {"payloads":[...]} in the body, answered in kind; OPTIONS preflights for allowed origins.
func Handler(codec converter.PayloadCodec, opts HandlerOptions) http.Handler {
	inner := converter.NewPayloadCodecHTTPHandler(codec)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && opts.allowed(origin) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Namespace")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if opts.Token != "" && !bearerMatches(r.Header.Get("Authorization"), opts.Token) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	})
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
