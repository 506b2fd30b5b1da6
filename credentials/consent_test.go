package credentials

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/wire"
)

func TestConsentStoresTheTokenAndWakesEveryWaiter(t *testing.T) {
	h := newHarness(t)
	first := h.consentRequired(alice, "toolcall-1")
	h.consentRequired(alice, "toolcall-2")
	h.consentRequired(bob, "toolcall-3")

	w := h.consent(first)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), "Consent recorded")
	assert.Contains(t, w.Body.String(), "alice")
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	assert.Equal(t, "no-referrer", w.Header().Get("Referrer-Policy"))
	assert.ElementsMatch(t, []notification{
		{"toolcall-1", wire.ConsentSignal{Provider: "example"}},
		{"toolcall-2", wire.ConsentSignal{Provider: "example"}},
	}, h.notifications(), "both of alice's waiting calls wake; bob's does not")
	assert.Equal(t, 1, h.store.pendingCount(), "bob's consent is still pending")

	stored, found, err := h.store.Get(context.Background(), alice.Key(), "example")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, []string{"read"}, stored.Scopes)
	assert.NotEmpty(t, stored.RefreshToken)
	assert.True(t, stored.Expiry.After(h.clock.Now().Add(50*time.Minute)), "the expiry the provider gave (1 h)")
	assert.False(t, stored.Obtained.IsZero())

	tok, err := h.accessToken(alice, "toolcall-1")
	require.NoError(t, err)
	assert.Equal(t, stored.AccessToken, tok)
	_, err = h.accessToken(bob, "toolcall-3")
	assert.Error(t, err, "bob has still no token")
}

func TestConsentStateIsSingleUse(t *testing.T) {
	h := newHarness(t)
	c := h.consentRequired(alice, "toolcall-1")
	state, code := h.provider.authorize(c.URL)
	require.Equal(t, http.StatusOK, h.redirect(url.Values{"state": {state}, "code": {code}}).Code)

	w := h.redirect(url.Values{"state": {state}, "code": {code}})
	assert.Equal(t, http.StatusGone, w.Code)
	assert.Contains(t, w.Body.String(), "expired or was used already")
	exchanges, _ := h.provider.counts()
	assert.Equal(t, 1, exchanges, "a used state exchanges nothing")
	assert.Len(t, h.notifications(), 1)
}

func TestConsentExpiredStateIsRefused(t *testing.T) {
	h := newHarness(t)
	c := h.consentRequired(alice, "toolcall-1")
	h.clock.Advance(DefaultConsentTTL + time.Second)
	w := h.consent(c)
	assert.Equal(t, http.StatusGone, w.Code)
	exchanges, _ := h.provider.counts()
	assert.Zero(t, exchanges)
	assert.Empty(t, h.notifications())
	_, found, err := h.store.Get(context.Background(), alice.Key(), "example")
	require.NoError(t, err)
	assert.False(t, found)
}

func TestConsentRefusedSignalsRefused(t *testing.T) {
	h := newHarness(t)
	c := h.consentRequired(alice, "toolcall-1")
	h.consentRequired(alice, "toolcall-2") // another consent link of alice's stays usable
	state := mustQuery(t, c.URL).Get("state")

	w := h.redirect(url.Values{"state": {state}, "error": {"access_denied"}, "error_description": {"<script>alert(1)</script> no\u202e"}})
	require.Equal(t, http.StatusOK, w.Code)
	body := w.Body.String()
	assert.Contains(t, body, "Consent refused")
	assert.Contains(t, body, "access_denied")
	assert.NotContains(t, body, "<script>", "the provider's description is escaped")
	assert.Contains(t, body, "&lt;script&gt;")
	assert.NotContains(t, body, "\u202e", "invisible characters are shown as escapes")
	assert.Equal(t, []notification{{"toolcall-1", wire.ConsentSignal{Provider: "example", Refused: "access_denied"}}}, h.notifications())
	assert.Equal(t, 1, h.store.pendingCount())
}

func TestConsentProviderFailureAsksAgain(t *testing.T) {
	h := newHarness(t)
	c := h.consentRequired(alice, "toolcall-1")
	w := h.redirect(url.Values{"state": {mustQuery(t, c.URL).Get("state")}, "error": {"temporarily_unavailable"}})
	assert.Equal(t, http.StatusBadGateway, w.Code)
	assert.Equal(t, []notification{{"toolcall-1", wire.ConsentSignal{Provider: "example"}}}, h.notifications(),
		"the call is woken without Refused: it asks again with a new link")

	// A code the provider refuses: the same.
	c = h.consentRequired(alice, "toolcall-2")
	w = h.redirect(url.Values{"state": {mustQuery(t, c.URL).Get("state")}, "code": {"code-forged-0000000000"}})
	assert.Equal(t, http.StatusBadGateway, w.Code)
	assert.Contains(t, w.Body.String(), "did not accept")
	assert.Equal(t, notification{"toolcall-2", wire.ConsentSignal{Provider: "example"}}, h.notifications()[1])
	assert.NotContains(t, w.Body.String(), "code-forged")
}

func TestConsentNarrowedScopes(t *testing.T) {
	h := newHarness(t)
	h.provider.grantScopes = []string{"read"}
	c := h.consentRequired(alice, "toolcall-1", "read", "write")
	w := h.consent(c)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), "fewer permissions")
	stored, _, err := h.store.Get(context.Background(), alice.Key(), "example")
	require.NoError(t, err)
	assert.Equal(t, []string{"read"}, stored.Scopes, "the scopes granted, not those asked")
	h.consentRequired(alice, "toolcall-1", "read", "write")
}

func TestConsentCommaSeparatedScopes(t *testing.T) {
	h := newHarness(t)
	h.provider.scopeSeparator = "," // GitHub's token response says "repo,gist"
	c := h.consentRequired(alice, "toolcall-1", "read", "write")
	require.Equal(t, http.StatusOK, h.consent(c).Code)
	stored, _, err := h.store.Get(context.Background(), alice.Key(), "example")
	require.NoError(t, err)
	assert.Equal(t, []string{"read", "write"}, stored.Scopes)
	_, err = h.accessToken(alice, "toolcall-1", "read", "write")
	assert.NoError(t, err, "the token carries both scopes: no consent asked again")
}

func TestConsentEndpointRefusesWhatItMustNotServe(t *testing.T) {
	h := newHarness(t)
	c := h.consentRequired(alice, "toolcall-1")
	state, code := h.provider.authorize(c.URL)
	query := url.Values{"state": {state}, "code": {code}}.Encode()

	tests := []struct {
		name   string
		method string
		host   string
		target string
		want   int
	}{
		{"host of another site (DNS rebinding)", http.MethodGet, "evil.example", "/oauth/callback?" + query, http.StatusForbidden},
		{"host spelled oddly", http.MethodGet, "127.1:8250", "/oauth/callback?" + query, http.StatusForbidden},
		{"POST", http.MethodPost, "127.0.0.1:8250", "/oauth/callback?" + query, http.StatusMethodNotAllowed},
		{"query too long", http.MethodGet, "127.0.0.1:8250", "/oauth/callback?" + query + "&pad=" + strings.Repeat("a", DefaultMaxQueryBytes), http.StatusRequestURITooLong},
		{"state twice", http.MethodGet, "127.0.0.1:8250", "/oauth/callback?" + query + "&state=x", http.StatusBadRequest},
		{"no state", http.MethodGet, "127.0.0.1:8250", "/oauth/callback?code=" + code, http.StatusBadRequest},
		{"malformed state", http.MethodGet, "127.0.0.1:8250", "/oauth/callback?state=nope&code=" + code, http.StatusGone},
		{"unknown state", http.MethodGet, "127.0.0.1:8250", "/oauth/callback?state=" + strings.Repeat("A", 43) + "&code=" + code, http.StatusGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			r.Host = tt.host
			w := httptest.NewRecorder()
			h.handler.ServeHTTP(w, r)
			h.saw(w.Body.String())
			assert.Equal(t, tt.want, w.Code)
		})
	}
	exchanges, _ := h.provider.counts()
	require.Zero(t, exchanges, "nothing refused reached the provider")
	assert.Empty(t, h.notifications())

	// The state was not spent by the refused requests; the allowed public host serves it.
	w := h.get("consent.example.com", "/oauth/callback?"+query)
	assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
}

func TestConsentRateLimitPerClient(t *testing.T) {
	h := newHarness(t)
	handler, err := ConsentHandler(h.oauth, ConsentOptions{Notify: func(context.Context, string, wire.ConsentSignal) error { return nil }, RequestsPerMinute: 3})
	require.NoError(t, err)
	get := func(remote string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/oauth/callback?state=nope", nil)
		r.Host, r.RemoteAddr = "localhost:8250", remote
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		return w
	}
	for range 3 {
		require.Equal(t, http.StatusGone, get("192.0.2.1:1000").Code)
	}
	w := get("192.0.2.1:1001")
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "the fourth request of one address in a minute")
	assert.NotEmpty(t, w.Header().Get("Retry-After"))
	assert.Equal(t, http.StatusGone, get("192.0.2.2:1000").Code, "another address has its own budget")
	h.clock.Advance(time.Minute)
	assert.Equal(t, http.StatusGone, get("192.0.2.1:1002").Code, "the budget refills")
}

func TestConsentHandlerNeedsNotify(t *testing.T) {
	h := newHarness(t)
	_, err := ConsentHandler(h.oauth, ConsentOptions{})
	assert.ErrorContains(t, err, "Notify")
}
