package codec_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/codec"
)

// TestHandlerLoginSession: a browser logs in once at /login with the token in a POST body and
// gets an HttpOnly, SameSite=Strict session cookie; the UI's decode requests then pass with that
// cookie from the allowed origin, and are refused without it, with a forged or expired one, from
// another origin, or as a form post.
func TestHandlerLoginSession(t *testing.T) {
	const ui = "http://127.0.0.1:8233"
	h := codec.Handler(codec.New(keyring(t, key("k1", 1))), codec.HandlerOptions{AllowedOrigins: []string{ui}, Token: "s3cret"})
	serve := func(req *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	login := func(token, origin string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		return serve(req)
	}
	decode := func(cookie *http.Cookie, origin, contentType string) int {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/decode", strings.NewReader(`{"payloads":[]}`))
		req.Header.Set("Origin", origin)
		req.Header.Set("Content-Type", contentType)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		return serve(req).Code
	}

	form := serve(httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8081/login", nil))
	require.Equal(t, http.StatusOK, form.Code)
	assert.Contains(t, form.Body.String(), `type="password" name="token"`)

	assert.Equal(t, http.StatusUnauthorized, login("wrong", "http://127.0.0.1:8081").Code)
	assert.Empty(t, login("wrong", "http://127.0.0.1:8081").Result().Cookies())
	assert.Equal(t, http.StatusForbidden, login("s3cret", "http://evil.example").Code, "another site cannot log this browser in")

	ok := login("s3cret", "http://127.0.0.1:8081")
	require.Equal(t, http.StatusOK, ok.Code, ok.Body.String())
	cookies := ok.Result().Cookies()
	require.Len(t, cookies, 1)
	session := cookies[0]
	assert.Equal(t, codec.SessionCookie, session.Name)
	assert.True(t, session.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, session.SameSite)
	assert.NotContains(t, session.Value, "s3cret")
	assert.Positive(t, session.MaxAge)

	assert.Equal(t, http.StatusOK, decode(session, ui, "application/json"), "the UI's origin with the session decodes")
	assert.Equal(t, http.StatusUnauthorized, decode(nil, ui, "application/json"), "no session")
	assert.Equal(t, http.StatusUnauthorized, decode(session, "http://evil.example", "application/json"), "another origin")
	assert.Equal(t, http.StatusUnauthorized, decode(session, ui, "text/plain"), "a form-like post")
	forged := *session
	forged.Value = strings.Replace(session.Value, ".", ".9", 1)
	assert.Equal(t, http.StatusUnauthorized, decode(&forged, ui, "application/json"), "a changed expiry breaks the MAC")
	expired := *session
	expired.Value = "v1.1." + strings.SplitN(session.Value, ".", 3)[2]
	assert.Equal(t, http.StatusUnauthorized, decode(&expired, ui, "application/json"))

	other := codec.Handler(codec.New(keyring(t, key("k1", 1))), codec.HandlerOptions{AllowedOrigins: []string{ui}, Token: "rotated"})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/decode", bytes.NewReader([]byte(`{"payloads":[]}`)))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(session)
	rec := httptest.NewRecorder()
	other.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "a new token ends every session")

	out := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/logout", nil)
	out.Header.Set("Origin", "http://127.0.0.1:8081")
	gone := serve(out)
	require.Equal(t, http.StatusNoContent, gone.Code)
	require.Len(t, gone.Result().Cookies(), 1)
	assert.Negative(t, gone.Result().Cookies()[0].MaxAge)
}
