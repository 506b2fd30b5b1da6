package codec

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultSessionTTL is HandlerOptions.SessionTTL's default.
const DefaultSessionTTL = 12 * time.Hour

// SessionCookie is the name of the cookie a login at <prefix>/login sets.
const SessionCookie = "toolgate_codec_session"

// maxLoginBytes bounds a login form's body.
const maxLoginBytes = 4 << 10

// sessionVersion prefixes a session cookie's value and its MAC input.
const sessionVersion = "v1"

// loginPage is the form GET <prefix>/login shows: the token goes in a POST body, never in a URL
// that proxies and browser history keep.
const loginPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toolgate codec server: log in</title></head>
<body>
<h1>toolgate codec server</h1>
<p>%s</p>
<form method="post" action="%s">
<label>Token <input type="password" name="token" id="token" autocomplete="off" required></label>
<button type="submit" id="login">Log in</button>
</form>
</body></html>
`

// serveLogin serves <prefix>/login (GET: the form; POST: check the token, set the session
// cookie) and <prefix>/logout (POST: clear it).
func (o HandlerOptions) serveLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action 'self'")
	logout := strings.HasSuffix(r.URL.Path, "logout")
	switch {
	case r.Method == http.MethodGet && !logout:
		showLogin(w, r, http.StatusOK, "Enter the codec server's token once: this browser then keeps a session cookie, and the Temporal Web UI decodes payloads with it.")
		return
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	case !sameOrigin(r):
		// A form on another site cannot log this browser in (or out).
		http.Error(w, "log in from the codec server's own page", http.StatusForbidden)
		return
	}
	cookie := &http.Cookie{Name: SessionCookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: o.SecureCookie || r.TLS != nil}
	if logout {
		cookie.MaxAge = -1
		http.SetCookie(w, cookie)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "read login form", http.StatusBadRequest)
		return
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(r.PostForm.Get("token"))), []byte(o.Token)) != 1 {
		showLogin(w, r, http.StatusUnauthorized, "Wrong token.")
		return
	}
	ttl := o.SessionTTL
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	expires := time.Now().Add(ttl)
	cookie.Value = sessionValue(o.Token, expires.Unix())
	cookie.MaxAge = int(ttl.Seconds())
	http.SetCookie(w, cookie)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprintf(w, "<!doctype html><title>logged in</title><p id=\"loggedin\">Logged in until %s: the Temporal Web UI in this browser can decode payloads now.</p>\n",
		html.EscapeString(expires.UTC().Format(time.RFC3339)))
}

func showLogin(w http.ResponseWriter, r *http.Request, status int, message string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, loginPage, html.EscapeString(message), html.EscapeString(r.URL.Path))
}

// sameOrigin reports whether a state-changing request came from the codec server's own pages
// (or from no browser page at all).
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return r.Header.Get("Sec-Fetch-Site") == "" || r.Header.Get("Sec-Fetch-Site") == "same-origin" || r.Header.Get("Sec-Fetch-Site") == "none"
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// authorized reports whether r carries the bearer token, or a live session cookie from an
// allowed origin (or none) on a JSON request: a cross-site form cannot send JSON without a
// preflight, which only allowed origins pass.
func (o HandlerOptions) authorized(r *http.Request) bool {
	if bearerMatches(r.Header.Get("Authorization"), o.Token) {
		return true
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil || !sessionValid(o.Token, c.Value, time.Now()) {
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" && !o.allowed(origin) && !sameOrigin(r) {
		return false
	}
	mediaType, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return r.Method != http.MethodPost || strings.EqualFold(strings.TrimSpace(mediaType), "application/json")
}

// sessionValue is "v1.<unix expiry>.<MAC>": stateless, so sessions survive a restart and serve
// every replica, and a new token ends every session.
func sessionValue(token string, expiry int64) string {
	exp := strconv.FormatInt(expiry, 10)
	return sessionVersion + "." + exp + "." + base64.RawURLEncoding.EncodeToString(sessionMAC(token, exp))
}

func sessionMAC(token, expiry string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("toolgate codec session " + sessionVersion + " " + expiry))
	return m.Sum(nil)
}

func sessionValid(token, value string, now time.Time) bool {
	version, rest, ok := strings.Cut(value, ".")
	if !ok || version != sessionVersion {
		return false
	}
	exp, mac, ok := strings.Cut(rest, ".")
	if !ok {
		return false
	}
	expiry, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || now.Unix() >= expiry {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	return err == nil && hmac.Equal(got, sessionMAC(token, exp))
}
