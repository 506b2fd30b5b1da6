package mcp

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// What a refused request is told: only what the MCP authorization spec and RFC 6750 ask for. The
// reason (a verifier's error may name the JWKS URL, a key ID, a claim) goes to the log only.
const (
	// invalidTokenDescription is the error_description of a 401 to a request with a token.
	invalidTokenDescription = "The access token is invalid or expired"
	// missingStaticTokenDescription is the error_description of a 401 to a request without a
	// token when no OAuth resource metadata is configured (a static token, StaticTokenVerifier):
	// a client then has no authorization server to go to, and shows this instead.
	missingStaticTokenDescription = "A bearer token is required: this server accepts a configured token, not OAuth"
	unauthorizedBody              = "Unauthorized: a valid bearer token is required\n"
	insufficientScopeBody         = "Forbidden: the access token lacks a required scope\n"
	// maxRefusalReason bounds the reason kept for the log.
	maxRefusalReason = 512
)

// refuseQuietly serves next behind the SDK's bearer-token middleware mw, answering mw's refusals
// itself: a 401 carries "WWW-Authenticate: Bearer" with resource_metadata (or a realm without
// one), the required scopes, and error="invalid_token" with a fixed description when the request
// carried a token (RFC 6750 section 3: none without, when OAuth is configured); without resource
// metadata (a static token) every 401 says why with error="invalid_token" and an
// error_description, so a client shows the reason instead of starting an OAuth flow that cannot
// succeed; a 403 error="insufficient_scope"; every refusal a fixed body. mw's own message is logged at Debug on logger, never sent.
func refuseQuietly(mw func(http.Handler) http.Handler, next http.Handler, metadataURL string, scopes []string, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rw, ok := w.(*refusalWriter); ok {
			rw.passed = true
			w = rw.ResponseWriter // the served request writes without the wrapper
		}
		next.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &refusalWriter{ResponseWriter: w, metadataURL: metadataURL, scopes: scopes,
			hadToken: hasBearer(r.Header.Get("Authorization"))}
		inner.ServeHTTP(rw, r)
		if rw.code != 0 {
			logger.Debug("MCP request refused", "status", rw.code, "remote", r.RemoteAddr,
				"reason", strings.TrimSpace(rw.reason.String()))
		}
	})
}

// refusalWriter is the ResponseWriter of the bearer-token middleware until it passes a request.
type refusalWriter struct {
	http.ResponseWriter
	metadataURL string
	scopes      []string
	hadToken    bool

	passed bool
	code   int             // the refusal's status, once written
	reason strings.Builder // what the middleware wrote, up to maxRefusalReason bytes
}

// WriteHeader answers the refusal with fixed headers and body.
func (w *refusalWriter) WriteHeader(code int) {
	if w.passed || w.code != 0 {
		return
	}
	w.code = code
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	body := http.StatusText(code) + "\n"
	switch code {
	case http.StatusUnauthorized:
		params := w.challenge()
		switch {
		case w.hadToken:
			params = append(params, `error="invalid_token"`, fmt.Sprintf("error_description=%q", invalidTokenDescription))
		case w.metadataURL == "":
			params = append(params, `error="invalid_token"`, fmt.Sprintf("error_description=%q", missingStaticTokenDescription))
		}
		h.Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
		body = unauthorizedBody
	case http.StatusForbidden:
		h.Set("WWW-Authenticate", "Bearer "+strings.Join(append(w.challenge(), `error="insufficient_scope"`), ", "))
		body = insufficientScopeBody
	default:
		h.Del("WWW-Authenticate")
	}
	w.ResponseWriter.WriteHeader(code)
	_, _ = io.WriteString(w.ResponseWriter, body)
}

// challenge is the parameters every challenge carries: the metadata URL (or a realm) and scopes.
func (w *refusalWriter) challenge() []string {
	var params []string
	if w.metadataURL != "" {
		params = append(params, fmt.Sprintf("resource_metadata=%q", w.metadataURL))
	} else {
		params = append(params, `realm="toolgate"`)
	}
	if len(w.scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(w.scopes, " ")))
	}
	return params
}

// Write keeps what the middleware writes for the log: the client got the fixed body.
func (w *refusalWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK) // never happens: the middleware writes only refusals
	}
	if room := maxRefusalReason - w.reason.Len(); room > 0 {
		w.reason.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// hasBearer reports whether an Authorization header presents a bearer token (RFC 6750 section 3:
// a challenge to a request without one carries no error code).
func hasBearer(authorization string) bool {
	scheme, _, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	return strings.EqualFold(scheme, "bearer")
}
