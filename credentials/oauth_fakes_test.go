package credentials

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// memoryStore is a Store in memory for these tests: Update holds one lock per principal and
// provider, like the real stores. It keeps expired pending consents (the handler must refuse
// them itself).
type memoryStore struct {
	mu      sync.Mutex
	tokens  map[[2]string]Token
	pending map[string]Pending
	// verifiers are every PKCE verifier put (no text may contain one).
	verifiers []string
	locks     map[[2]string]*sync.Mutex
	// updating, when set, receives one value as each Update begins (before its lock).
	updating chan struct{}
}

func newMemoryStore() *memoryStore {
	return &memoryStore{tokens: map[[2]string]Token{}, pending: map[string]Pending{}, locks: map[[2]string]*sync.Mutex{}}
}

func (s *memoryStore) Get(_ context.Context, principal, provider string) (Token, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[[2]string{principal, provider}]
	return t, ok, nil
}

func (s *memoryStore) Put(_ context.Context, principal, provider string, t Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[[2]string{principal, provider}] = t
	return nil
}

func (s *memoryStore) Delete(_ context.Context, principal, provider string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tokens[[2]string{principal, provider}]
	delete(s.tokens, [2]string{principal, provider})
	return ok, nil
}

func (s *memoryStore) List(context.Context) ([]Entry, error) { return nil, nil }

func (s *memoryStore) Update(ctx context.Context, principal, provider string, fn func(Token, bool) (Token, bool, error)) (Token, error) {
	key := [2]string{principal, provider}
	s.mu.Lock()
	updating := s.updating
	l, ok := s.locks[key]
	if !ok {
		l = new(sync.Mutex)
		s.locks[key] = l
	}
	s.mu.Unlock()
	if updating != nil {
		updating <- struct{}{}
	}
	l.Lock()
	defer l.Unlock()
	t, found, _ := s.Get(ctx, principal, provider)
	next, store, err := fn(t, found)
	if err != nil {
		return next, err
	}
	if store {
		_ = s.Put(ctx, principal, provider, next)
	}
	return next, nil
}

func (s *memoryStore) PutPending(_ context.Context, p Pending) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[p.State] = p
	s.verifiers = append(s.verifiers, p.Verifier)
	return nil
}

func (s *memoryStore) TakePending(_ context.Context, state string) (Pending, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[state]
	delete(s.pending, state)
	return p, ok, nil
}

func (s *memoryStore) TakeWaiting(_ context.Context, principal, provider string) ([]Pending, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Pending
	for state, p := range s.pending {
		if p.Principal == principal && p.Provider == provider {
			out = append(out, p)
			delete(s.pending, state)
		}
	}
	return out, nil
}

func (s *memoryStore) pendingVerifiers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.verifiers)
}

func (s *memoryStore) pendingCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// mapSecrets is a toolcore.SecretSource over a map.
type mapSecrets map[string]string

func (m mapSecrets) Secret(_ context.Context, name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%q: %w", name, toolcore.ErrSecretNotFound)
}

// Values the fake provider holds: the client's secret, and the prefixes of what it issues.
const (
	testClientID     = "toolgate-test"
	testClientSecret = "client-secret-0123456789abcdef"
	testSecretName   = "EXAMPLE_CLIENT_SECRET"
)

// fakeProvider is an OAuth authorization server's token endpoint (and the consent a user gives
// at its authorization endpoint, by authorize): codes are bound to their PKCE challenge, refresh
// tokens rotate and a used one is refused with invalid_grant.
type fakeProvider struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	codes     map[string]fakeGrant // code -> grant
	refresh   map[string]fakeGrant // live refresh token -> grant
	issued    []string             // every access token, refresh token and code issued
	refreshes int                  // successful refreshes
	exchanges int                  // successful code exchanges
	seq       int
	// failWith, when set, is the status every token request gets, with a body holding the
	// last access token issued (which no error may repeat).
	failWith int
	// grantScopes, when set, replaces the scopes a code grants.
	grantScopes []string
	// scopeSeparator joins the scopes of a token response (default a space).
	scopeSeparator string
	// refreshGate, when set, is waited on by every refresh before it answers.
	refreshGate chan struct{}
}

type fakeGrant struct {
	challenge string
	scopes    []string
}

func newFakeProvider(t *testing.T) *fakeProvider {
	f := &fakeProvider{t: t, codes: map[string]fakeGrant{}, refresh: map[string]fakeGrant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": f.srv.URL, "authorization_endpoint": f.srv.URL + "/authorize", "token_endpoint": f.srv.URL + "/token"})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) provider() Provider {
	return Provider{Name: "example", AuthURL: f.srv.URL + "/authorize", TokenURL: f.srv.URL + "/token", ClientID: testClientID,
		ClientSecretName: testSecretName, Scopes: []string{"read"}}
}

// next issues a new value with prefix, remembered as issued.
func (f *fakeProvider) next(prefix string) string {
	f.seq++
	v := fmt.Sprintf("%s-%04d-%s", prefix, f.seq, strings.Repeat("x", 16))
	f.issued = append(f.issued, v)
	return v
}

// authorize is the user consenting at the authorization URL: it checks the URL and returns the
// code the provider would redirect with.
func (f *fakeProvider) authorize(authURL string) (state, code string) {
	f.t.Helper()
	q := mustQuery(f.t, authURL)
	if q.Get("client_id") != testClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		f.t.Fatalf("authorization URL misses the flow's parameters: %v", q)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	code = f.next("code")
	scopes := strings.Fields(q.Get("scope"))
	if f.grantScopes != nil {
		scopes = f.grantScopes
	}
	f.codes[code] = fakeGrant{challenge: q.Get("code_challenge"), scopes: scopes}
	return q.Get("state"), code
}

func (f *fakeProvider) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	fail, gate := f.failWith, f.refreshGate
	f.mu.Unlock()
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	if fail != 0 {
		f.mu.Lock()
		body := fmt.Sprintf(`{"error":"server_error","error_description":"leaked %v"}`, f.issued)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(fail)
		_, _ = w.Write([]byte(body))
		return
	}
	if id, secret, ok := r.BasicAuth(); !ok || id != testClientID || secret != testClientSecret {
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	if r.Form.Get("grant_type") == "refresh_token" && gate != nil {
		<-gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var g fakeGrant
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		var ok bool
		g, ok = f.codes[r.Form.Get("code")]
		delete(f.codes, r.Form.Get("code"))
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		f.exchanges++
	case "refresh_token":
		var ok bool
		g, ok = f.refresh[r.Form.Get("refresh_token")]
		delete(f.refresh, r.Form.Get("refresh_token"))
		if !ok {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		f.refreshes++
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	access, refresh := f.next("access"), f.next("refresh")
	f.refresh[refresh] = g
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
		"expires_in": 3600, "scope": strings.Join(g.scopes, cmp.Or(f.scopeSeparator, " "))})
}

// grantRefresh makes the provider accept refresh as a live refresh token for scopes.
func (f *fakeProvider) grantRefresh(refresh string, scopes []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh[refresh] = fakeGrant{scopes: scopes}
	f.issued = append(f.issued, refresh)
}

// remember records values no text may contain.
func (f *fakeProvider) remember(values ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.issued = append(f.issued, values...)
}

func (f *fakeProvider) setRefreshGate(gate chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshGate = gate
}

func (f *fakeProvider) setFailWith(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failWith = status
}

// secrets is everything no log line, error or page may contain.
func (f *fakeProvider) secrets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append(slices.Clone(f.issued), testClientSecret)
}

func (f *fakeProvider) counts() (exchanges, refreshes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exchanges, f.refreshes
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":%q}`, code)
}

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
