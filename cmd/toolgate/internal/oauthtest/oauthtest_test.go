package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
)

// hydraFlag runs the tests against ORY Hydra too (make test-oauth): building it costs minutes of
// CPU on a cold cache.
var hydraFlag = flag.Bool("hydra", false, "also run the tests against ORY Hydra v2.3.0 (built from internal/tools/hydra)")

func TestMain(m *testing.M) {
	if cfg := os.Getenv(envWorker); cfg != "" {
		if err := runWorker(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	flag.Parse()
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// testTimeout bounds one test's waits (never a timing assertion).
const testTimeout = 3 * time.Minute

// runHydra builds and starts Hydra, or skips the test without -hydra.
func runHydra(t *testing.T) *Hydra {
	t.Helper()
	if !*hydraFlag {
		t.Skip("ORY Hydra runs with -args -hydra (make test-oauth)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), hydraBuildTimeout+time.Minute)
	defer cancel()
	bin, err := BuildHydra(ctx, t.TempDir())
	require.NoError(t, err)
	h, err := StartHydra(ctx, HydraConfig{Binary: bin})
	require.NoError(t, err)
	t.Cleanup(func() {
		h.Stop()
		if t.Failed() {
			t.Logf("hydra log:\n%s", h.LogTail(8000))
		}
	})
	return h
}

func startProvider(t *testing.T) *Provider {
	t.Helper()
	p, err := StartProvider(ProviderConfig{Users: []string{"alice", "bob", "carol"}})
	require.NoError(t, err)
	t.Cleanup(p.Stop)
	return p
}

// TestProviderAuthorizationCodeWithPKCE: the short form's server (zitadel/oidc's OP) issues a
// code only for the right PKCE verifier, a userinfo answer for each user's own token, refuses an
// access token past its lifetime, rotates the refresh token, and reports a refused consent as
// access_denied at the redirect URI.
func TestProviderAuthorizationCodeWithPKCE(t *testing.T) {
	p := startProvider(t)
	for _, public := range []bool{false, true} {
		t.Run(fmt.Sprintf("public=%v", public), func(t *testing.T) { checkAuthorizationCode(t, p, public) })
	}
}

// TestHydraAuthorizationCodeWithPKCE: the same against ORY Hydra (-args -hydra).
func TestHydraAuthorizationCodeWithPKCE(t *testing.T) {
	h := runHydra(t)
	for _, public := range []bool{false, true} {
		t.Run(fmt.Sprintf("public=%v", public), func(t *testing.T) { checkAuthorizationCode(t, h, public) })
	}
}

// checkAuthorizationCode runs the flows a credential's consent and refresh depend on against
// srv, as an OAuth client would (plain HTTP, so every parameter is the test's).
func checkAuthorizationCode(t *testing.T, srv Server, public bool) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	redirectURI := "http://127.0.0.1:1/oauth/callback" // never requested: Authorize stops there
	client, err := srv.NewClient(ctx, ClientSpec{RedirectURI: redirectURI, Public: public})
	require.NoError(t, err)
	oc := &oauthClient{t: t, ctx: ctx, client: client, redirectURI: redirectURI, endpoints: discover(t, ctx, srv.Issuer())}

	// A code is bound to its PKCE challenge: a wrong verifier gets no token.
	code, verifier := oc.authorize(srv, NewBrowser(), "alice")
	status, _ := oc.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier + "x"}})
	assert.Equal(t, http.StatusBadRequest, status, "a code exchanged with the wrong verifier")

	// Each user gets a token for their own subject.
	alice := oc.exchange(srv, NewBrowser(), "alice")
	bob := oc.exchange(srv, NewBrowser(), "bob")
	assert.Equal(t, "alice", oc.subject(alice.AccessToken))
	assert.Equal(t, "bob", oc.subject(bob.AccessToken))
	require.NotEmpty(t, alice.RefreshToken, "a refresh token for offline_access")

	// An access token past its lifetime is refused (Hydra answers 401, zitadel's OP 403); the
	// refresh token gets a new one.
	require.NoError(t, srv.SetAccessTokenLifetime(ctx, client.ID, 2*time.Second))
	short := oc.exchange(srv, NewBrowser(), "alice")
	assert.LessOrEqual(t, short.ExpiresIn, 2, "expires_in after SetAccessTokenLifetime")
	require.Eventually(t, func() bool { return oc.userinfoStatus(short.AccessToken) != http.StatusOK },
		testTimeout, 200*time.Millisecond, "the access token never expired")
	require.NoError(t, srv.SetAccessTokenLifetime(ctx, client.ID, time.Hour))
	status, body := oc.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {short.RefreshToken}})
	require.Equal(t, http.StatusOK, status, "refresh: %s", body)
	var refreshed tokenResponse
	require.NoError(t, json.Unmarshal(body, &refreshed))
	assert.NotEqual(t, short.AccessToken, refreshed.AccessToken)
	assert.NotEqual(t, short.RefreshToken, refreshed.RefreshToken, "the refresh token rotates")
	assert.Equal(t, "alice", oc.subject(refreshed.AccessToken))

	// A refused consent comes back as access_denied with the request's state.
	u, state := oc.authURL("")
	back, err := srv.Authorize(ctx, NewBrowser(), u, "bob", false)
	require.NoError(t, err)
	assert.Equal(t, "access_denied", back.Query().Get("error"))
	assert.Equal(t, state, back.Query().Get("state"))
	assert.Empty(t, back.Query().Get("code"))
}

// endpoints are what a discovery document says.
type endpoints struct {
	Issuer   string `json:"issuer"`
	Auth     string `json:"authorization_endpoint"`
	Token    string `json:"token_endpoint"`
	Userinfo string `json:"userinfo_endpoint"`
}

func discover(t *testing.T, ctx context.Context, issuer string) endpoints {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"/.well-known/openid-configuration", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var e endpoints
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	require.Equal(t, issuer, e.Issuer)
	return e
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
}

// oauthClient is the test's OAuth client of one registered client.
type oauthClient struct {
	t           *testing.T
	ctx         context.Context
	client      Client
	redirectURI string
	endpoints   endpoints
	verifier    string
}

// authURL is a new authorization URL with a fresh state and PKCE pair (the verifier is kept in
// oc.verifier); user is only a hint.
func (oc *oauthClient) authURL(string) (u, state string) {
	state = rand.Text()
	oc.verifier = rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(oc.verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {oc.client.ID},
		"redirect_uri":          {oc.redirectURI},
		"scope":                 {strings.Join(Scopes, " ")},
		"state":                 {state},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
	}
	return oc.endpoints.Auth + "?" + q.Encode(), state
}

// authorize runs the authorization as user and returns the code and its verifier.
func (oc *oauthClient) authorize(srv Server, b *Browser, user string) (code, verifier string) {
	oc.t.Helper()
	u, state := oc.authURL(user)
	back, err := srv.Authorize(oc.ctx, b, u, user, true)
	require.NoError(oc.t, err)
	require.True(oc.t, isRedirectTo(back, oc.redirectURI), "redirected to %s", back.Redacted())
	require.Equal(oc.t, state, back.Query().Get("state"))
	require.NotEmpty(oc.t, back.Query().Get("code"), "no code: %s", back.Query().Get("error_description"))
	return back.Query().Get("code"), oc.verifier
}

// exchange authorizes user and exchanges the code for tokens.
func (oc *oauthClient) exchange(srv Server, b *Browser, user string) tokenResponse {
	oc.t.Helper()
	code, verifier := oc.authorize(srv, b, user)
	status, body := oc.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}})
	require.Equal(oc.t, http.StatusOK, status, "code exchange: %s", body)
	var tr tokenResponse
	require.NoError(oc.t, json.Unmarshal(body, &tr))
	require.NotEmpty(oc.t, tr.AccessToken)
	return tr
}

// token posts form (plus redirect_uri and the client's authentication) to the token endpoint.
func (oc *oauthClient) token(form url.Values) (int, []byte) {
	oc.t.Helper()
	form.Set("redirect_uri", oc.redirectURI)
	if oc.client.Secret == "" {
		form.Set("client_id", oc.client.ID)
	}
	req, err := http.NewRequestWithContext(oc.ctx, http.MethodPost, oc.endpoints.Token, strings.NewReader(form.Encode()))
	require.NoError(oc.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if oc.client.Secret != "" {
		req.SetBasicAuth(url.QueryEscape(oc.client.ID), url.QueryEscape(oc.client.Secret))
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(oc.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	require.NoError(oc.t, err)
	return resp.StatusCode, body
}

func (oc *oauthClient) userinfo(token string) (int, []byte) {
	oc.t.Helper()
	req, err := http.NewRequestWithContext(oc.ctx, http.MethodGet, oc.endpoints.Userinfo, nil)
	require.NoError(oc.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(oc.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	require.NoError(oc.t, err)
	return resp.StatusCode, body
}

func (oc *oauthClient) userinfoStatus(token string) int {
	status, _ := oc.userinfo(token)
	return status
}

// subject is the sub the userinfo endpoint answers for token.
func (oc *oauthClient) subject(token string) string {
	oc.t.Helper()
	status, body := oc.userinfo(token)
	require.Equal(oc.t, http.StatusOK, status, "userinfo: %s", body)
	var info struct {
		Sub string `json:"sub"`
	}
	require.NoError(oc.t, json.Unmarshal(body, &info))
	return info.Sub
}
