package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Password is the password of every user of a Provider.
const Password = "correct horse battery staple"

// ProviderConfig configures StartProvider.
type ProviderConfig struct {
	// Users are the users who may log in (each with Password); a user's name is its subject.
	// Required.
	Users []string
}

// Provider is zitadel/oidc's OpenID provider (pkg/op) on a loopback port, in process, with the
// example server's in-memory storage and a login form of its own.
type Provider struct {
	issuer  string
	server  *http.Server
	storage *providerStorage
	op      *op.Provider
}

// StartProvider starts a provider for cfg's users on a free loopback port. The caller stops it.
func StartProvider(cfg ProviderConfig) (*Provider, error) {
	if len(cfg.Users) == 0 {
		return nil, errors.New("provider: no users")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("provider: listen: %w", err)
	}
	users := userStore{}
	for _, u := range cfg.Users {
		users[u] = &storage.User{ID: u, Username: u, Password: Password, EmailVerified: true}
	}
	p := &Provider{
		issuer: "http://" + l.Addr().String(),
		storage: &providerStorage{
			Storage:  storage.NewStorageWithClients(users, map[string]*storage.Client{}),
			clients:  map[string]*storage.Client{},
			secrets:  map[string]string{},
			lifetime: map[string]time.Duration{},
			expiry:   map[string]time.Time{},
		},
	}
	var key [32]byte
	_, _ = rand.Read(key[:])
	config := &op.Config{
		CryptoKey:             key,
		CodeMethodS256:        true,
		GrantTypeRefreshToken: true,
	}
	p.op, err = op.NewProvider(config, p.storage, op.StaticIssuer(p.issuer),
		op.WithAllowInsecure(), // http on loopback
		op.WithLogger(slog.New(slog.DiscardHandler)),
	)
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("provider: %w", err)
	}
	router := chi.NewRouter()
	interceptor := op.NewIssuerInterceptor(p.op.IssuerFromRequest)
	// The example storage's clients send users to /login/username?authRequestID=...
	router.Get("/login/username", p.loginPage)
	router.Post("/login/username", interceptor.HandlerFunc(p.login))
	router.Mount("/", p.op)
	p.server = &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// Stop closes the provider's listener and connections.
func (p *Provider) Stop() { _ = p.server.Close() }

// Issuer is the provider's base URL.
func (p *Provider) Issuer() string { return p.issuer }

// NewClient registers a client: the example storage's native client (public, PKCE required)
// or web client (confidential, HTTP Basic), both with the authorization code and refresh token
// grants.
func (p *Provider) NewClient(_ context.Context, spec ClientSpec) (Client, error) {
	id := rand.Text()
	c := Client{ID: id}
	var client *storage.Client
	if spec.Public {
		client = storage.NativeClient(id, spec.RedirectURI)
	} else {
		c.Secret = rand.Text()
		client = storage.WebClient(id, c.Secret, spec.RedirectURI)
	}
	p.storage.mu.Lock()
	defer p.storage.mu.Unlock()
	p.storage.clients[id] = client
	if c.Secret != "" {
		p.storage.secrets[id] = c.Secret
	}
	return c, nil
}

// SetAccessTokenLifetime makes the client's access tokens issued from now on expire after d.
func (p *Provider) SetAccessTokenLifetime(_ context.Context, clientID string, d time.Duration) error {
	p.storage.mu.Lock()
	defer p.storage.mu.Unlock()
	if _, ok := p.storage.clients[clientID]; !ok {
		return fmt.Errorf("no client %q", clientID)
	}
	p.storage.lifetime[clientID] = d
	return nil
}

// Authorize follows authURL as user: the provider redirects to its login form, which Authorize
// submits with user's name and Password (or a refusal when grant is false); the provider then
// redirects through its callback to the client's redirect URI. The provider asks no separate
// consent: logging in grants what the client asked.
func (p *Provider) Authorize(ctx context.Context, b *Browser, authURL, user string, grant bool) (*url.URL, error) {
	return follow(authURL, func(next *url.URL) (*url.URL, error) {
		var page Page
		var err error
		if next.Path == "/login/username" {
			id := next.Query().Get("authRequestID")
			if page, err = b.Get(ctx, next.String()); err != nil {
				return nil, err
			}
			if page.Status != http.StatusOK {
				return nil, fmt.Errorf("login page: status %d: %s", page.Status, tail(page.Body, 400))
			}
			form := url.Values{"id": {id}, "username": {user}, "password": {Password}}
			if !grant {
				form.Set("refuse", "1")
			}
			page, err = b.PostForm(ctx, next.String(), form)
		} else {
			page, err = b.Get(ctx, next.String())
		}
		if err != nil {
			return nil, err
		}
		return redirect(page, "provider "+next.Path)
	})
}

// loginTemplate is the login form (the HTML is what a user sees; the tests post it directly).
var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<form method="post" action="/login/username">
<input type="hidden" name="id" value="{{.}}">
<label>Username <input name="username"></label>
<label>Password <input name="password" type="password"></label>
<button type="submit">Log in</button>
<button type="submit" name="refuse" value="1">Refuse</button>
</form>`))

func (p *Provider) loginPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = loginTemplate.Execute(w, r.URL.Query().Get("authRequestID"))
}

// login checks the form's user and password against the auth request and sends the browser to
// the provider's callback, which issues the code; a refusal ends the request with access_denied
// at the client's redirect URI.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id := r.PostForm.Get("id")
	if r.PostForm.Get("refuse") != "" {
		req, err := p.storage.AuthRequestByID(r.Context(), id)
		if err != nil {
			http.Error(w, "unknown auth request", http.StatusBadRequest)
			return
		}
		op.AuthRequestError(w, r, req, oidc.ErrAccessDenied().WithDescription("the user refused"), p.op)
		return
	}
	if err := p.storage.CheckUsernamePassword(r.PostForm.Get("username"), r.PostForm.Get("password"), id); err != nil {
		http.Error(w, "wrong username or password", http.StatusForbidden)
		return
	}
	http.Redirect(w, r, op.AuthCallbackURL(p.op)(r.Context(), id), http.StatusFound)
}

// providerStorage is the example storage with clients registered while the provider runs and
// access token lifetimes per client: a token's expiry is what the token response says and what
// the userinfo and introspection endpoints enforce.
type providerStorage struct {
	*storage.Storage

	mu       sync.Mutex
	clients  map[string]*storage.Client
	secrets  map[string]string        // by client ID, confidential clients only
	lifetime map[string]time.Duration // by client ID; none: the example storage's five minutes
	expiry   map[string]time.Time     // by access token ID, for clients with a lifetime
}

// GetClientByClientID looks the client up among those NewClient registered.
func (s *providerStorage) GetClientByClientID(_ context.Context, clientID string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok {
		return nil, errors.New("client not found")
	}
	return storage.RedirectGlobsClient(c), nil
}

// AuthorizeClientIDSecret checks a confidential client's secret.
func (s *providerStorage) AuthorizeClientIDSecret(_ context.Context, clientID, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	want, ok := s.secrets[clientID]
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(secret)) != 1 {
		return errors.New("invalid client or secret")
	}
	return nil
}

// CreateAccessToken creates the token and applies the client's lifetime.
func (s *providerStorage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	if err != nil {
		return "", time.Time{}, err
	}
	return id, s.limit(req, id, exp), nil
}

// CreateAccessAndRefreshTokens creates (or, on a refresh, rotates) the tokens and applies the
// client's lifetime to the access token.
func (s *providerStorage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	id, refresh, exp, err := s.Storage.CreateAccessAndRefreshTokens(ctx, req, current)
	if err != nil {
		return "", "", time.Time{}, err
	}
	return id, refresh, s.limit(req, id, exp), nil
}

// limit records the expiry of access token id under its client's lifetime and returns it (exp,
// the example storage's, when the client has none).
func (s *providerStorage) limit(req op.TokenRequest, id string, exp time.Time) time.Time {
	clientID := requestClient(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.lifetime[clientID]
	if !ok {
		return exp
	}
	exp = time.Now().Add(d)
	s.expiry[id] = exp
	return exp
}

// SetUserinfoFromToken refuses an access token past its lifetime.
func (s *providerStorage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, origin string) error {
	if s.expired(tokenID) {
		return errors.New("token is expired")
	}
	return s.Storage.SetUserinfoFromToken(ctx, info, tokenID, subject, origin)
}

// SetIntrospectionFromToken reports an access token past its lifetime inactive.
func (s *providerStorage) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	if s.expired(tokenID) {
		return errors.New("token is expired")
	}
	return s.Storage.SetIntrospectionFromToken(ctx, resp, tokenID, subject, clientID)
}

func (s *providerStorage) expired(tokenID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.expiry[tokenID]
	return ok && !time.Now().Before(exp)
}

// requestClient is the client ID of a token request of the example storage.
func requestClient(req op.TokenRequest) string {
	switch r := req.(type) {
	case *storage.AuthRequest:
		return r.ApplicationID
	case op.RefreshTokenRequest:
		return r.GetClientID()
	}
	return ""
}

// userStore is the provider's users by name.
type userStore map[string]*storage.User

func (u userStore) GetUserByID(id string) *storage.User { return u[id] }

func (u userStore) GetUserByUsername(name string) *storage.User { return u[name] }

func (u userStore) ExampleClientID() string { return "" }
