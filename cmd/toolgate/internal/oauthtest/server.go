package oauthtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"
)

// Server is a real OAuth 2.x authorization server a test started.
type Server interface {
	// Issuer is the server's OpenID Connect issuer URL: its discovery document is at
	// Issuer + "/.well-known/openid-configuration".
	Issuer() string
	// NewClient registers a client for spec and returns its credentials.
	NewClient(ctx context.Context, spec ClientSpec) (Client, error)
	// SetAccessTokenLifetime makes the access tokens issued to the client from now on (by a code
	// exchange or a refresh) expire after d.
	SetAccessTokenLifetime(ctx context.Context, clientID string, d time.Duration) error
	// Authorize follows authURL (an authorization request) as user with b: it logs user in and,
	// when grant is true, grants every scope asked, else refuses the consent; it returns the
	// URL the server finally redirects b to (the client's redirect URI with code and state, or
	// with error=access_denied), without requesting it.
	Authorize(ctx context.Context, b *Browser, authURL, user string, grant bool) (*url.URL, error)
}

// ClientSpec is a client to register.
type ClientSpec struct {
	// RedirectURI is where the server sends the user back with the code. Required.
	RedirectURI string
	// Public registers a public client (no secret: PKCE alone binds the code) instead of a
	// confidential one authenticating with HTTP Basic.
	Public bool
}

// Client is a registered client.
type Client struct {
	ID string
	// Secret is empty for a public client.
	Secret string
}

// Scopes every test client may ask for: openid (the userinfo endpoint answers only for it) and
// offline_access (a refresh token is issued only for it).
var Scopes = []string{"openid", "offline_access"}

// maxHops bounds the redirects and form posts of one Authorize.
const maxHops = 16

// maxBody bounds a response body a Browser reads.
const maxBody = 1 << 20

// Browser is a user's browser: a cookie jar, redirects followed one at a time by Authorize, and
// a bound on every request. One per user: the servers remember a login in a cookie.
type Browser struct {
	client *http.Client
}

// NewBrowser returns a browser with an empty cookie jar.
func NewBrowser() *Browser {
	jar, _ := cookiejar.New(nil) // never fails without options
	return &Browser{client: &http.Client{
		Jar:     jar,
		Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // Authorize looks at every hop
		},
	}}
}

// Page is one response a Browser read.
type Page struct {
	Status   int
	Location *url.URL // resolved against the request URL; nil when the response is no redirect
	Body     string
}

// Get requests u as a browser following a link would.
func (b *Browser) Get(ctx context.Context, u string) (Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Page{}, err
	}
	return b.do(req)
}

// PostForm submits form to u as a browser submitting an HTML form would.
func (b *Browser) PostForm(ctx context.Context, u string, form url.Values) (Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return Page{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

func (b *Browser) do(req *http.Request) (Page, error) {
	resp, err := b.client.Do(req)
	if err != nil {
		return Page{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Page{}, fmt.Errorf("%s %s: read body: %w", req.Method, req.URL.Redacted(), err)
	}
	p := Page{Status: resp.StatusCode, Body: string(body)}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		loc, err := resp.Location()
		if err != nil {
			return Page{}, fmt.Errorf("%s %s: %d without a usable Location: %w", req.Method, req.URL.Redacted(), resp.StatusCode, err)
		}
		p.Location = loc
	}
	return p, nil
}

// errNotRedirected is returned when the server answered a hop that should redirect with a page.
var errNotRedirected = errors.New("the server answered with a page where a redirect was expected")

// redirect returns p's Location, or an error showing the page.
func redirect(p Page, what string) (*url.URL, error) {
	if p.Location == nil {
		return nil, fmt.Errorf("%s: %w: status %d: %s", what, errNotRedirected, p.Status, tail(p.Body, 400))
	}
	return p.Location, nil
}

// follow walks authURL hop by hop, each hop chosen by the server's hop (a page of its own to
// answer, or a plain GET), until a hop lands on the client's redirect URI, which it returns.
func follow(authURL string, hop func(next *url.URL) (*url.URL, error)) (*url.URL, error) {
	redirectURI, err := redirectURIOf(authURL)
	if err != nil {
		return nil, err
	}
	next, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("authorization URL: %w", err)
	}
	for range maxHops {
		if isRedirectTo(next, redirectURI) {
			return next, nil
		}
		if next, err = hop(next); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("authorize: more than %d hops", maxHops)
}

// isRedirectTo says whether u is the client's redirect URI (scheme, host and path equal).
func isRedirectTo(u *url.URL, redirectURI string) bool {
	r, err := url.Parse(redirectURI)
	if err != nil {
		return false
	}
	return u.Scheme == r.Scheme && u.Host == r.Host && u.Path == r.Path
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
