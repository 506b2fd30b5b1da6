package credentials

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolgate/toolgate/toolcore"
)

// Errors of AccessToken besides *toolcore.ConsentRequiredError. Neither holds a token, and
// neither is the provider's own text.
var (
	// ErrNoPrincipal: the call runs for no principal, so there is no one to ask for consent.
	ErrNoPrincipal = errors.New("the call runs for no principal: a delegated credential needs one (toolgate call --as, or an authenticated MCP caller)")
	// ErrNotAuthenticated: the call's principal is only asserted by the client that started it,
	// and the worker gives tokens to authenticated principals only
	// (OAuthOptions.AuthenticatedOnly).
	ErrNotAuthenticated = errors.New("the call's principal is asserted, not authenticated: this worker gives per-user tokens to authenticated principals only (toolgate mcp with OAuth, or a frontend authorizer)")
	// ErrUnknownProvider: no provider of the worker's providers file has the name.
	ErrUnknownProvider = errors.New("no such provider in the worker's providers file")
	// ErrProviderFailed: the provider could not be reached or answered with an error (other
	// than refusing a refresh token, which asks for consent again).
	ErrProviderFailed = errors.New("the provider failed")
)

// Defaults of OAuthOptions.
const (
	// DefaultConsentTTL is how long a consent URL stays usable: as long as a call waits for it by
	// default (toolcore.DefaultApprovalTimeout, the default ConsentTimeout). A call shows one URL
	// per wait, so a URL that expired first would leave the call waiting on a dead link. The URL
	// is a capability (whoever completes it links their account to the call's principal), and
	// its life is not what guards it: it is single use, every URL of the principal and provider
	// dies once one is completed (Store.TakeWaiting), and the page says when a link was used
	// already. Set OAuthOptions.ConsentTTL lower where calls wait less.
	DefaultConsentTTL = toolcore.DefaultApprovalTimeout
	// DefaultHTTPTimeout bounds one request to a provider (discovery, exchange, refresh).
	DefaultHTTPTimeout = 30 * time.Second
	// expiryLeeway: a token expiring sooner than this counts as expired (the tool still has to
	// use it).
	expiryLeeway = time.Minute
	// stateBytes is the entropy of a consent's state.
	stateBytes = 32
)

// OAuthOptions configure NewOAuth.
type OAuthOptions struct {
	// Providers the tools may name (LoadProviders). Required: at least one.
	Providers []Provider
	// Store keeps the tokens and the pending consents. Required.
	Store Store
	// Secrets resolves each provider's ClientSecretName. Optional: default none (every provider
	// must then be a public client).
	Secrets toolcore.SecretSource
	// RedirectURL is the public URL of the consent endpoint (ConsentHandler), registered at
	// every provider as the client's redirect URI. Required.
	RedirectURL string
	// ConsentTTL is how long a consent URL may be used. Optional: default DefaultConsentTTL.
	ConsentTTL time.Duration
	// HTTPClient talks to the providers; it must not follow redirects (the code exchange would
	// go along). Optional: default a client with DefaultHTTPTimeout that follows none.
	HTTPClient *http.Client
	// AuthenticatedOnly refuses a call whose principal no one vouched for
	// (toolcore.Principal.Authenticated is false): any client that may start calls can assert any
	// principal, and with it use that principal's tokens. Optional: default false, every
	// principal a call carries.
	AuthenticatedOnly bool
	// Now is the clock. Optional: default time.Now.
	Now func() time.Time
}

// OAuth is a toolcore.CredentialSource: the OAuth 2.1 client (authorization code with PKCE,
// refresh) of every configured provider, over a Store shared by the workers. Safe for
// concurrent use.
type OAuth struct {
	providers map[string]*providerClient
	store     Store
	secrets   toolcore.SecretSource
	redirect  string
	ttl       time.Duration
	authOnly  bool
	client    *http.Client
	now       func() time.Time
}

// providerClient is one provider and its endpoints once discovered.
type providerClient struct {
	Provider
	endpoints endpoints
}

var _ toolcore.CredentialSource = (*OAuth)(nil)

// NewOAuth checks opts and returns the client. It does not reach the providers (an issuer's
// endpoints are discovered on first use).
func NewOAuth(opts OAuthOptions) (*OAuth, error) {
	if opts.Store == nil {
		return nil, errors.New("oauth: a Store is required")
	}
	if len(opts.Providers) == 0 {
		return nil, errors.New("oauth: no providers")
	}
	if err := checkRedirectURL(opts.RedirectURL); err != nil {
		return nil, fmt.Errorf("oauth: redirect URL: %w", err)
	}
	if opts.ConsentTTL < 0 {
		return nil, fmt.Errorf("oauth: consent TTL %s must not be negative", opts.ConsentTTL)
	}
	o := &OAuth{providers: map[string]*providerClient{}, store: opts.Store, secrets: opts.Secrets, redirect: opts.RedirectURL,
		ttl: opts.ConsentTTL, authOnly: opts.AuthenticatedOnly, client: opts.HTTPClient, now: opts.Now}
	for _, p := range opts.Providers {
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		if _, dup := o.providers[p.Name]; dup {
			return nil, fmt.Errorf("oauth: provider %q named twice", p.Name)
		}
		if p.ClientSecretName != "" && opts.Secrets == nil {
			return nil, fmt.Errorf("oauth: provider %q names client secret %q but the worker has no secret source", p.Name, p.ClientSecretName)
		}
		o.providers[p.Name] = &providerClient{Provider: p}
	}
	if o.ttl == 0 {
		o.ttl = DefaultConsentTTL
	}
	if o.client == nil {
		o.client = &http.Client{Timeout: DefaultHTTPTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o, nil
}

// checkRedirectURL accepts an absolute https URL, or http on a loopback host, without userinfo,
// query or fragment (the provider appends its own query).
func checkRedirectURL(raw string) error {
	if err := checkEndpoint(raw); err != nil {
		return err
	}
	if u, _ := url.Parse(raw); u.RawQuery != "" || u.ForceQuery {
		return errors.New("a redirect URL has no query")
	}
	return nil
}

// RedirectURL is the consent endpoint's public URL the client was configured with.
func (o *OAuth) RedirectURL() string { return o.redirect }

// AccessToken returns req.Principal's access token at req.Credential.Provider: the stored one
// while it is valid and carries the scopes asked; an expired one is refreshed inside
// Store.Update (concurrent attempts, on every worker, refresh once; a rotated refresh token is
// stored). No token, no refresh token, a refresh token the provider refuses (invalid_grant) or
// missing scopes record a Pending consent for req.Waiter and return a
// *toolcore.ConsentRequiredError with its authorization URL. Other errors name the provider
// only: ErrNoPrincipal, ErrNotAuthenticated, ErrUnknownProvider, ErrProviderFailed, or the
// context's.
func (o *OAuth) AccessToken(ctx context.Context, req toolcore.CredentialRequest) (string, error) {
	name := req.Credential.Provider
	p, ok := o.providers[name]
	if !ok {
		return "", fmt.Errorf("credential %q: %w", name, ErrUnknownProvider)
	}
	if req.Principal.IsZero() {
		return "", fmt.Errorf("credential %q: %w", name, ErrNoPrincipal)
	}
	if o.authOnly && !req.Principal.Authenticated() {
		return "", fmt.Errorf("credential %q: %w", name, ErrNotAuthenticated)
	}
	principal := req.Principal.Key()
	scopes := req.Credential.Scopes
	if len(scopes) == 0 {
		scopes = p.Scopes
	}
	t, found, err := o.store.Get(ctx, principal, name)
	if err != nil {
		return "", o.storeError(ctx, name, err)
	}
	if found && hasScopes(t, scopes) {
		if o.valid(t) {
			return t.AccessToken, nil
		}
		if t.RefreshToken != "" {
			if access, ok, err := o.refresh(ctx, p, principal, scopes); err != nil || ok {
				return access, err
			}
		}
	}
	// Incremental consent: ask for what the stored token had too, so that consenting for one
	// tool does not take another tool's scopes away.
	if found {
		scopes = union(scopes, t.Scopes)
	}
	return "", o.askConsent(ctx, p, principal, scopes, req.Waiter)
}

// valid reports whether t's access token may still be used for a while.
func (o *OAuth) valid(t Token) bool {
	return t.AccessToken != "" && (t.Expiry.IsZero() || t.Expiry.After(o.now().Add(expiryLeeway)))
}

// refresh refreshes the principal's token at p under the store's lock; ok is false when the
// provider refused the refresh token (consent is needed again; the dead refresh token is
// dropped so later calls do not try it again).
func (o *OAuth) refresh(ctx context.Context, p *providerClient, principal string, scopes []string) (access string, ok bool, err error) {
	var refused, refreshed bool
	var providerErr error // the provider's failure, not the store's
	next, err := o.store.Update(ctx, principal, p.Name, func(t Token, found bool) (Token, bool, error) {
		if !found || t.RefreshToken == "" || !hasScopes(t, scopes) {
			refused = true // revoked, or replaced meanwhile by a consent for other scopes
			return t, false, nil
		}
		if o.valid(t) {
			return t, false, nil // another attempt refreshed it first
		}
		conf, err := o.config(ctx, p, nil)
		if err != nil {
			providerErr = err
			return t, false, err
		}
		// Expiry in the past makes the token source refresh; it keeps the old refresh token
		// when the provider does not rotate it.
		got, err := conf.TokenSource(o.clientContext(ctx), &oauth2.Token{RefreshToken: t.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
		if err != nil {
			if invalidGrant(err) {
				refused = true
				t.RefreshToken = ""
				return t, true, nil
			}
			providerErr = o.providerError(ctx, p.Name, "refresh", err)
			return t, false, providerErr
		}
		refreshed = true
		return o.tokenOf(got, t.Scopes), true, nil
	})
	switch {
	case providerErr != nil:
		return "", false, providerErr
	case err != nil:
		return "", false, o.storeError(ctx, p.Name, err)
	case refused:
		return "", false, nil
	case refreshed && !hasScopes(next, scopes):
		return "", false, nil // the provider narrowed the scopes on refresh
	}
	return next.AccessToken, next.AccessToken != "", nil
}

// askConsent records a Pending consent for the principal at p and returns the
// *toolcore.ConsentRequiredError naming its URL.
func (o *OAuth) askConsent(ctx context.Context, p *providerClient, principal string, scopes []string, waiter string) error {
	state, err := randomState()
	if err != nil {
		return fmt.Errorf("credential %q: consent state: %w", p.Name, err)
	}
	verifier := oauth2.GenerateVerifier()
	conf, err := o.config(ctx, p, scopes)
	if err != nil {
		return err
	}
	pending := Pending{State: state, Principal: principal, Provider: p.Name, Scopes: scopes, Verifier: verifier,
		Expires: o.now().Add(o.ttl).UTC().Truncate(time.Second)}
	if waiter != "" {
		pending.Waiters = []string{waiter}
	}
	if err := o.store.PutPending(ctx, pending); err != nil {
		return o.storeError(ctx, p.Name, err)
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	for _, k := range sortedKeys(p.AuthParams) {
		opts = append(opts, oauth2.SetAuthURLParam(k, p.AuthParams[k]))
	}
	return &toolcore.ConsentRequiredError{Provider: p.Name, Scopes: scopes, URL: conf.AuthCodeURL(state, opts...), Expires: pending.Expires}
}

// config is p's oauth2.Config for scopes, with its client secret resolved now (a rotated secret
// is picked up) and its endpoints discovered once.
func (o *OAuth) config(ctx context.Context, p *providerClient, scopes []string) (*oauth2.Config, error) {
	authURL, tokenURL, err := p.endpoints.resolve(ctx, o.client, p.Provider)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return nil, cause
		}
		return nil, fmt.Errorf("credential %q: %w (%w)", p.Name, ErrProviderFailed, err) // discover's errors hold no response text
	}
	conf := &oauth2.Config{ClientID: p.ClientID, RedirectURL: o.redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: authURL, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInHeader}}
	if p.ClientAuth == "post" {
		conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	if p.ClientSecretName == "" {
		conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams // a public client sends client_id alone
		return conf, nil
	}
	secret, err := o.secrets.Secret(ctx, p.ClientSecretName)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return nil, cause
		}
		if errors.Is(err, toolcore.ErrSecretNotFound) {
			return nil, fmt.Errorf("credential %q: client secret %q: %w", p.Name, p.ClientSecretName, toolcore.ErrSecretNotFound)
		}
		return nil, fmt.Errorf("credential %q: client secret %q could not be resolved", p.Name, p.ClientSecretName)
	}
	conf.ClientSecret = secret
	return conf, nil
}

// exchange trades a consent's code for a token (PKCE: with the pending consent's verifier).
func (o *OAuth) exchange(ctx context.Context, p Pending, code string) (Token, error) {
	pc, ok := o.providers[p.Provider]
	if !ok {
		return Token{}, fmt.Errorf("credential %q: %w", p.Provider, ErrUnknownProvider)
	}
	conf, err := o.config(ctx, pc, p.Scopes)
	if err != nil {
		return Token{}, err
	}
	got, err := conf.Exchange(o.clientContext(ctx), code, oauth2.VerifierOption(p.Verifier))
	if err != nil {
		return Token{}, o.providerError(ctx, p.Provider, "code exchange", err)
	}
	if got.AccessToken == "" {
		return Token{}, fmt.Errorf("credential %q: code exchange: %w: no access token", p.Provider, ErrProviderFailed)
	}
	return o.tokenOf(got, p.Scopes), nil
}

// tokenOf is the Token to store of got; asked are the scopes requested, which RFC 6749 says were
// granted when the response names none. The response's scopes are split at spaces (RFC 6749)
// and at commas (GitHub's "repo,gist").
func (o *OAuth) tokenOf(got *oauth2.Token, asked []string) Token {
	granted := slices.Clone(asked)
	if s, ok := got.Extra("scope").(string); ok && strings.Trim(s, " ,") != "" {
		granted = strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
	}
	t := Token{AccessToken: got.AccessToken, RefreshToken: got.RefreshToken, TokenType: got.TokenType, Scopes: granted,
		Obtained: o.now().UTC()}
	if !got.Expiry.IsZero() {
		t.Expiry = got.Expiry.UTC()
	}
	return t
}

// clientContext carries o's HTTP client to package oauth2.
func (o *OAuth) clientContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, o.client)
}

// providerError reports a failed request to provider name by the provider, the step, and the
// HTTP status and RFC 6749 error code when there are any: never the response body or the error
// description (the provider's text), never a URL with a query. A cancellation is returned as
// the context's cause.
func (o *OAuth) providerError(ctx context.Context, name, step string, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	detail := "unreachable"
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		detail = "refused"
		if re.Response != nil {
			detail = fmt.Sprintf("HTTP %d", re.Response.StatusCode)
		}
		if code := errorCode(re.ErrorCode); code != "" {
			detail += " " + code
		}
	}
	return fmt.Errorf("credential %q: %s: %w (%s)", name, step, ErrProviderFailed, detail)
}

// storeError reports a failed store operation by provider; the store's errors hold no token.
func (o *OAuth) storeError(ctx context.Context, name string, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return fmt.Errorf("credential %q: token store: %w", name, err)
}

// invalidGrant reports whether err is the provider refusing a grant (a revoked or used refresh
// token, RFC 6749 5.2).
func invalidGrant(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == "invalid_grant"
}

// errorCode is an RFC 6749 error code as it may be shown: the characters the RFC allows
// (%x20-21 / %x23-5B / %x5D-7E) without space, at most 64 of them; anything else is dropped.
func errorCode(code string) string {
	if len(code) > 64 {
		return ""
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if c <= ' ' || c > '~' || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c == '\'' {
			return ""
		}
	}
	return code
}

// hasScopes reports whether t carries every scope of want.
func hasScopes(t Token, want []string) bool {
	for _, s := range want {
		if !slices.Contains(t.Scopes, s) {
			return false
		}
	}
	return true
}

// union is a's scopes followed by those of b that a lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// randomState is a consent's state: stateBytes random bytes, base64url without padding.
func randomState() (string, error) {
	b := make([]byte, stateBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
