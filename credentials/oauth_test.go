package credentials

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

const redirectURL = "http://127.0.0.1:8250/oauth/callback"

var (
	alice = toolcore.Principal{Issuer: "https://idp.example", Subject: "alice"}
	bob   = toolcore.Principal{Issuer: "https://idp.example", Subject: "bob"}
)

// harness is an OAuth client over a memoryStore against a fakeProvider, and its consent
// endpoint, whose notifications and log lines it records.
type harness struct {
	t        *testing.T
	provider *fakeProvider
	store    *memoryStore
	clock    *testClock
	oauth    *OAuth
	handler  http.Handler
	logs     *syncBuffer

	mu       sync.Mutex
	notified []notification
	texts    []string // every error text and page the test saw
}

type notification struct {
	waiter string
	sig    wire.ConsentSignal
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, provider: newFakeProvider(t), store: newMemoryStore(), clock: &testClock{now: time.Now()}, logs: &syncBuffer{}}
	var err error
	h.oauth, err = NewOAuth(OAuthOptions{Providers: []Provider{h.provider.provider()}, Store: h.store,
		Secrets: mapSecrets{testSecretName: testClientSecret}, RedirectURL: redirectURL, Now: h.clock.Now})
	require.NoError(t, err)
	h.handler, err = ConsentHandler(h.oauth, ConsentOptions{
		Notify: func(_ context.Context, waiter string, sig wire.ConsentSignal) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.notified = append(h.notified, notification{waiter, sig})
			return nil
		},
		AllowedHosts:      []string{"consent.example.com"},
		RequestsPerMinute: 1000,
		Logger:            slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	require.NoError(t, err)
	t.Cleanup(h.assertNothingLeaked)
	return h
}

// accessToken asks for p's token at the example provider for waiter.
func (h *harness) accessToken(p toolcore.Principal, waiter string, scopes ...string) (string, error) {
	tok, err := h.oauth.AccessToken(context.Background(), toolcore.CredentialRequest{Principal: p,
		Credential: toolcore.Credential{Provider: "example", Scopes: scopes}, Waiter: waiter})
	if err != nil {
		h.saw(err.Error())
	}
	return tok, err
}

// consentRequired asks for p's token and requires a *toolcore.ConsentRequiredError.
func (h *harness) consentRequired(p toolcore.Principal, waiter string, scopes ...string) *toolcore.ConsentRequiredError {
	h.t.Helper()
	_, err := h.accessToken(p, waiter, scopes...)
	var consent *toolcore.ConsentRequiredError
	require.ErrorAs(h.t, err, &consent)
	return consent
}

// get requests target (a path and query) on the consent endpoint with Host host.
func (h *harness) get(host, target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = host
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, r)
	h.saw(w.Body.String())
	return w
}

// redirect is the provider's redirect back to the consent endpoint with query.
func (h *harness) redirect(query url.Values) *httptest.ResponseRecorder {
	return h.get("127.0.0.1:8250", "/oauth/callback?"+query.Encode())
}

// consent has the user consent at the provider and follows its redirect.
func (h *harness) consent(c *toolcore.ConsentRequiredError) *httptest.ResponseRecorder {
	state, code := h.provider.authorize(c.URL)
	return h.redirect(url.Values{"state": {state}, "code": {code}})
}

func (h *harness) saw(text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.texts = append(h.texts, text)
}

func (h *harness) notifications() []notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]notification(nil), h.notified...)
}

// assertNothingLeaked checks that no error, page or log line held a token, code or the client
// secret.
func (h *harness) assertNothingLeaked() {
	h.mu.Lock()
	all := strings.Join(append(h.texts, h.logs.String()), "\n")
	h.mu.Unlock()
	for _, secret := range h.provider.secrets() {
		assert.NotContains(h.t, all, secret, "a token, code or client secret leaked into an error, a page or a log line")
	}
	for _, p := range h.store.pendingVerifiers() {
		assert.NotContains(h.t, all, p, "a PKCE verifier leaked")
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Query()
}

func TestAccessTokenReturnsAValidStoredToken(t *testing.T) {
	h := newHarness(t)
	h.provider.grantRefresh("refresh-unused-0000000000", []string{"read"})
	require.NoError(t, h.store.Put(context.Background(), alice.Key(), "example", Token{AccessToken: "access-stored-0000000000",
		RefreshToken: "refresh-unused-0000000000", Scopes: []string{"read", "write"}, Expiry: h.clock.Now().Add(time.Hour)}))
	h.provider.remember("access-stored-0000000000")

	tok, err := h.accessToken(alice, "wf-1", "write")
	require.NoError(t, err)
	assert.Equal(t, "access-stored-0000000000", tok)
	exchanges, refreshes := h.provider.counts()
	assert.Zero(t, exchanges+refreshes, "a valid token needs no request to the provider")

	// Another principal has none of alice's tokens.
	c := h.consentRequired(bob, "wf-2", "write")
	assert.Equal(t, "example", c.Provider)
}

func TestRefreshRotatesOnceUnderConcurrency(t *testing.T) {
	h := newHarness(t)
	h.provider.grantRefresh("refresh-first-0000000000", []string{"read"})
	require.NoError(t, h.store.Put(context.Background(), alice.Key(), "example", Token{AccessToken: "access-old-0000000000",
		RefreshToken: "refresh-first-0000000000", Scopes: []string{"read"}, Expiry: h.clock.Now().Add(-time.Minute)}))
	h.provider.remember("access-old-0000000000")
	gate := make(chan struct{})
	h.provider.setRefreshGate(gate)

	const attempts = 8
	h.store.updating = make(chan struct{}, attempts)
	tokens := make([]string, attempts)
	errs := make([]error, attempts)
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() { tokens[i], errs[i] = h.accessToken(alice, "wf", "read") })
	}
	for range attempts {
		<-h.store.updating // every attempt found the token expired and asks to refresh it
	}
	close(gate) // the first refresh answers while the others wait for the store's lock
	wg.Wait()

	for i := range attempts {
		require.NoError(t, errs[i])
		assert.Equal(t, tokens[0], tokens[i], "every attempt gets the one refreshed token")
	}
	assert.NotEqual(t, "access-old-0000000000", tokens[0])
	_, refreshes := h.provider.counts()
	assert.Equal(t, 1, refreshes, "concurrent attempts refresh once (a second use of the rotated refresh token would be refused)")
	stored, found, err := h.store.Get(context.Background(), alice.Key(), "example")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, tokens[0], stored.AccessToken)
	assert.NotEqual(t, "refresh-first-0000000000", stored.RefreshToken, "the rotated refresh token is stored")
	assert.True(t, stored.Expiry.After(h.clock.Now()))

	// The stored, rotated refresh token works for the next refresh.
	h.store.updating = nil
	h.clock.Advance(2 * time.Hour)
	next, err := h.accessToken(alice, "wf", "read")
	require.NoError(t, err)
	assert.NotEqual(t, tokens[0], next)
	_, refreshes = h.provider.counts()
	assert.Equal(t, 2, refreshes)
}

func TestRefreshRefusedAsksForConsent(t *testing.T) {
	h := newHarness(t)
	// The provider does not know this refresh token (revoked): invalid_grant.
	require.NoError(t, h.store.Put(context.Background(), alice.Key(), "example", Token{AccessToken: "access-old-0000000000",
		RefreshToken: "refresh-revoked-0000000000", Scopes: []string{"read"}, Expiry: h.clock.Now().Add(-time.Minute)}))
	h.provider.remember("access-old-0000000000", "refresh-revoked-0000000000")

	c := h.consentRequired(alice, "wf-1")
	assert.Equal(t, []string{"read"}, c.Scopes)
	assert.Equal(t, h.clock.Now().Add(DefaultConsentTTL).Truncate(time.Second).Unix(), c.Expires.Unix())
	q := mustQuery(t, c.URL)
	assert.Equal(t, redirectURL, q.Get("redirect_uri"))
	assert.Equal(t, "read", q.Get("scope"))
	assert.Len(t, q.Get("state"), 43, "32 random bytes, base64url")
	assert.Equal(t, "S256", q.Get("code_challenge_method"))
	assert.True(t, strings.HasPrefix(c.URL, h.provider.srv.URL+"/authorize?"))

	stored, _, err := h.store.Get(context.Background(), alice.Key(), "example")
	require.NoError(t, err)
	assert.Empty(t, stored.RefreshToken, "the refused refresh token is dropped: the next call does not try it again")
	_, refreshes := h.provider.counts()
	h.consentRequired(alice, "wf-1")
	_, again := h.provider.counts()
	assert.Equal(t, refreshes, again)
	assert.Equal(t, 2, h.store.pendingCount())
}

func TestMissingScopesAskForConsent(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.store.Put(context.Background(), alice.Key(), "example", Token{AccessToken: "access-read-0000000000",
		Scopes: []string{"read"}, Expiry: h.clock.Now().Add(time.Hour)}))
	h.provider.remember("access-read-0000000000")

	c := h.consentRequired(alice, "wf-1", "write")
	assert.Equal(t, []string{"write", "read"}, c.Scopes, "the new consent keeps the scopes the stored token had")
	assert.Equal(t, "write read", mustQuery(t, c.URL).Get("scope"))

	// After consenting, both tools' scopes are served by one token.
	require.Equal(t, http.StatusOK, h.consent(c).Code)
	w, err := h.accessToken(alice, "wf-1", "write")
	require.NoError(t, err)
	r, err := h.accessToken(alice, "wf-2", "read")
	require.NoError(t, err)
	assert.Equal(t, w, r)
}

func TestAccessTokenErrorsNameTheProviderOnly(t *testing.T) {
	h := newHarness(t)
	_, err := h.accessToken(toolcore.Principal{}, "wf-1")
	require.ErrorIs(t, err, ErrNoPrincipal)
	assert.Contains(t, err.Error(), `"example"`)

	_, err = h.oauth.AccessToken(context.Background(), toolcore.CredentialRequest{Principal: alice, Credential: toolcore.Credential{Provider: "other"}})
	require.ErrorIs(t, err, ErrUnknownProvider)

	// A provider answering 500 with tokens in its body: the error says which provider and the
	// status, not the body.
	h.provider.grantRefresh("refresh-live-0000000000", []string{"read"})
	require.NoError(t, h.store.Put(context.Background(), alice.Key(), "example", Token{AccessToken: "access-old-0000000000",
		RefreshToken: "refresh-live-0000000000", Scopes: []string{"read"}, Expiry: h.clock.Now().Add(-time.Minute)}))
	h.provider.remember("access-old-0000000000")
	h.provider.setFailWith(http.StatusInternalServerError)
	_, err = h.accessToken(alice, "wf-1")
	require.ErrorIs(t, err, ErrProviderFailed)
	assert.Equal(t, `credential "example": refresh: the provider failed (HTTP 500 server_error)`, err.Error())

	// An unreachable provider.
	h.provider.srv.Close()
	_, err = h.accessToken(alice, "wf-1")
	require.ErrorIs(t, err, ErrProviderFailed)
	assert.Equal(t, `credential "example": refresh: the provider failed (unreachable)`, err.Error())
	assert.NotContains(t, err.Error(), h.provider.srv.URL)
}

func TestAccessTokenAuthenticatedOnly(t *testing.T) {
	h := newHarness(t)
	o, err := NewOAuth(OAuthOptions{Providers: []Provider{h.provider.provider()}, Store: h.store, AuthenticatedOnly: true,
		Secrets: mapSecrets{testSecretName: testClientSecret}, RedirectURL: redirectURL})
	require.NoError(t, err)
	_, err = o.AccessToken(context.Background(), toolcore.CredentialRequest{Principal: alice, Credential: toolcore.Credential{Provider: "example"}})
	require.ErrorIs(t, err, ErrNotAuthenticated, "an asserted principal")
	assert.Zero(t, h.store.pendingCount(), "no consent is asked for an asserted principal")

	vouched := alice
	vouched.AuthenticatedBy = toolcore.AuthenticatedByMCP
	_, err = o.AccessToken(context.Background(), toolcore.CredentialRequest{Principal: vouched, Credential: toolcore.Credential{Provider: "example"}})
	var consent *toolcore.ConsentRequiredError
	require.ErrorAs(t, err, &consent)
}

func TestAccessTokenMissingClientSecret(t *testing.T) {
	h := newHarness(t)
	o, err := NewOAuth(OAuthOptions{Providers: []Provider{h.provider.provider()}, Store: h.store, Secrets: mapSecrets{}, RedirectURL: redirectURL})
	require.NoError(t, err)
	_, err = o.AccessToken(context.Background(), toolcore.CredentialRequest{Principal: alice, Credential: toolcore.Credential{Provider: "example"}})
	require.ErrorIs(t, err, toolcore.ErrSecretNotFound)
	assert.Contains(t, err.Error(), testSecretName)

	_, err = NewOAuth(OAuthOptions{Providers: []Provider{h.provider.provider()}, Store: h.store, RedirectURL: redirectURL})
	assert.ErrorContains(t, err, "no secret source")
}

func TestAccessTokenCanceled(t *testing.T) {
	h := newHarness(t)
	h.provider.grantRefresh("refresh-live-0000000000", []string{"read"})
	require.NoError(t, h.store.Put(context.Background(), alice.Key(), "example", Token{AccessToken: "access-old-0000000000",
		RefreshToken: "refresh-live-0000000000", Scopes: []string{"read"}, Expiry: h.clock.Now().Add(-time.Minute)}))
	h.provider.remember("access-old-0000000000")
	gate := make(chan struct{})
	h.provider.setRefreshGate(gate)
	defer close(gate)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("attempt canceled")
	done := make(chan error, 1)
	go func() {
		_, err := h.oauth.AccessToken(ctx, toolcore.CredentialRequest{Principal: alice, Credential: toolcore.Credential{Provider: "example"}})
		done <- err
	}()
	cancel(cause)
	assert.ErrorIs(t, <-done, cause, "a cancellation is returned as such, not as a provider failure")
}

func TestDiscoveryFromIssuer(t *testing.T) {
	h := newHarness(t)
	p := h.provider.provider()
	p.AuthURL, p.TokenURL, p.Issuer = "", "", h.provider.srv.URL
	o, err := NewOAuth(OAuthOptions{Providers: []Provider{p}, Store: h.store, Secrets: mapSecrets{testSecretName: testClientSecret},
		RedirectURL: redirectURL})
	require.NoError(t, err)
	_, err = o.AccessToken(context.Background(), toolcore.CredentialRequest{Principal: alice, Credential: toolcore.Credential{Provider: "example"}})
	var c *toolcore.ConsentRequiredError
	require.ErrorAs(t, err, &c)
	assert.True(t, strings.HasPrefix(c.URL, h.provider.srv.URL+"/authorize?"), c.URL)

	p.Issuer = "http://127.0.0.1:1/other"
	o, err = NewOAuth(OAuthOptions{Providers: []Provider{p}, Store: h.store, Secrets: mapSecrets{testSecretName: testClientSecret},
		RedirectURL: redirectURL})
	require.NoError(t, err)
	_, err = o.AccessToken(context.Background(), toolcore.CredentialRequest{Principal: alice, Credential: toolcore.Credential{Provider: "example"}})
	require.ErrorIs(t, err, ErrProviderFailed)
}
