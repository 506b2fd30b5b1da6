package oauthtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/testbin"
)

// HydraModule is the tools module Hydra is built from, relative to the repository root. Its
// go.mod pins github.com/ory/hydra/v2 v2.3.0 with the pop fork Hydra's own go.mod replaces
// gobuffalo/pop with; it is not in go.work (GOWORK=off builds it).
const HydraModule = "internal/tools/hydra"

// EnvHydra names a prebuilt Hydra binary (built with -tags sqlite) that BuildHydra returns
// instead of building one.
const EnvHydra = "TOOLGATE_HYDRA_BIN"

// hydraBuildTimeout bounds a cold build of Hydra on a loaded 2-core machine.
const hydraBuildTimeout = 20 * time.Minute

// BuildHydra builds Hydra from HydraModule into dir (with SQLite, for the in-memory database)
// and returns the binary's path, or $TOOLGATE_HYDRA_BIN when set.
func BuildHydra(ctx context.Context, dir string) (string, error) {
	if p := os.Getenv(EnvHydra); p != "" {
		return filepath.Abs(p)
	}
	root, err := testbin.Root()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, hydraBuildTimeout)
	defer cancel()
	out := filepath.Join(dir, "hydra")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "sqlite", "-ldflags=-w", "-o", out, "github.com/ory/hydra/v2")
	cmd.Dir = filepath.Join(root, HydraModule)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build hydra: %w\n%s", err, msg)
	}
	return out, nil
}

// HydraConfig configures StartHydra.
type HydraConfig struct {
	// Binary is Hydra's path (BuildHydra). Required.
	Binary string
	// AccessTokenLifetime is the default lifetime of access tokens. Optional: default one hour.
	AccessTokenLifetime time.Duration
}

// Hydra is a running `hydra serve all --dev` on two loopback ports, with an in-memory database.
type Hydra struct {
	public string // base URL of the public API (the issuer)
	admin  string // base URL of the admin API
	cmd    *exec.Cmd
	exited chan struct{}
	log    *testbin.SyncBuffer
	http   *http.Client
}

// hydraStartAttempts bounds the starts on newly picked ports (one may be taken meanwhile).
const hydraStartAttempts = 3

// StartHydra starts Hydra and returns once its admin API says it is ready. The caller stops it.
func StartHydra(ctx context.Context, cfg HydraConfig) (*Hydra, error) {
	var errs []error
	for range hydraStartAttempts {
		h, err := startHydra(ctx, cfg)
		if err == nil {
			return h, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func startHydra(ctx context.Context, cfg HydraConfig) (*Hydra, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	ttl := cfg.AccessTokenLifetime
	if ttl == 0 {
		ttl = time.Hour
	}
	h := &Hydra{
		public: "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		admin:  "http://127.0.0.1:" + strconv.Itoa(ports[1]),
		exited: make(chan struct{}),
		log:    &testbin.SyncBuffer{},
		http:   &http.Client{Timeout: 30 * time.Second},
	}
	h.cmd = exec.Command(cfg.Binary, "serve", "all", "--dev", "--sqa-opt-out")
	h.cmd.Env = append(testbin.ChildEnv(),
		"DSN=memory",
		"LOG_LEVEL=warn",
		"SERVE_PUBLIC_HOST=127.0.0.1",
		"SERVE_PUBLIC_PORT="+strconv.Itoa(ports[0]),
		"SERVE_ADMIN_HOST=127.0.0.1",
		"SERVE_ADMIN_PORT="+strconv.Itoa(ports[1]),
		"URLS_SELF_ISSUER="+h.public,
		"URLS_SELF_PUBLIC="+h.public,
		// The test is the login and consent app: Authorize intercepts the redirects to these
		// URLs (nothing listens there) and answers the challenges through the admin API.
		"URLS_LOGIN="+loginApp+"/login",
		"URLS_CONSENT="+loginApp+"/consent",
		"SECRETS_SYSTEM="+hex.EncodeToString(secret),
		"OAUTH2_PKCE_ENFORCED=true",
		"TTL_ACCESS_TOKEN="+ttl.String(),
	)
	h.cmd.Stdout = h.log
	h.cmd.Stderr = h.log
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start hydra: %w", err)
	}
	go func() { _ = h.cmd.Wait(); close(h.exited) }()
	if err := h.waitReady(ctx); err != nil {
		h.Stop()
		return nil, err
	}
	return h, nil
}

// loginApp is the base URL Hydra sends users to for login and consent: Authorize intercepts it.
const loginApp = "http://login.oauthtest.invalid"

// waitReady polls the admin API's readiness check until it answers 200 or Hydra exits.
func (h *Hydra) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.admin+"/health/ready", nil)
		if resp, err := h.http.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-h.exited:
			return fmt.Errorf("hydra exited while starting: %v\n%s", h.cmd.ProcessState, h.LogTail(4000))
		case <-ctx.Done():
			return fmt.Errorf("hydra was not ready: %w\n%s", ctx.Err(), h.LogTail(4000))
		case <-tick.C:
		}
	}
}

// Stop kills Hydra (its database is in memory: nothing to keep) and waits until it has exited.
func (h *Hydra) Stop() {
	_ = h.cmd.Process.Kill()
	<-h.exited
}

// LogTail is the last n bytes Hydra wrote.
func (h *Hydra) LogTail(n int) string { return testbin.Tail(h.log.String(), n) }

// Issuer is the public API's base URL.
func (h *Hydra) Issuer() string { return h.public }

// NewClient registers a client through the admin API (POST /admin/clients): authorization code
// and refresh token grants, the code response type, Scopes, spec's redirect URI; a public client
// authenticates with "none", a confidential one with client_secret_basic.
func (h *Hydra) NewClient(ctx context.Context, spec ClientSpec) (Client, error) {
	auth := "client_secret_basic"
	if spec.Public {
		auth = "none"
	}
	body := map[string]any{
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"scope":                      strings.Join(Scopes, " "),
		"redirect_uris":              []string{spec.RedirectURI},
		"token_endpoint_auth_method": auth,
	}
	var out struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := h.adminJSON(ctx, http.MethodPost, "/admin/clients", nil, body, &out); err != nil {
		return Client{}, fmt.Errorf("create client: %w", err)
	}
	if out.ID == "" || (!spec.Public && out.Secret == "") {
		return Client{}, errors.New("create client: hydra returned no client_id or client_secret")
	}
	return Client{ID: out.ID, Secret: out.Secret}, nil
}

// SetAccessTokenLifetime sets the client's lifespans of access tokens from the code exchange and
// from a refresh (PUT /admin/clients/{id}/lifespans).
func (h *Hydra) SetAccessTokenLifetime(ctx context.Context, clientID string, d time.Duration) error {
	body := map[string]string{
		"authorization_code_grant_access_token_lifespan": d.String(),
		"refresh_token_grant_access_token_lifespan":      d.String(),
	}
	if err := h.adminJSON(ctx, http.MethodPut, "/admin/clients/"+url.PathEscape(clientID)+"/lifespans", nil, body, nil); err != nil {
		return fmt.Errorf("set lifespans: %w", err)
	}
	return nil
}

// Authorize follows authURL as user: Hydra redirects to the login app with a login challenge,
// which Authorize accepts for subject user through the admin API, then to the consent app with a
// consent challenge, which it accepts with every scope requested (or rejects with access_denied
// when grant is false); Hydra finally redirects to the client's redirect URI.
func (h *Hydra) Authorize(ctx context.Context, b *Browser, authURL, user string, grant bool) (*url.URL, error) {
	return follow(authURL, func(next *url.URL) (*url.URL, error) {
		if next.Scheme+"://"+next.Host == loginApp {
			return h.answer(ctx, next, user, grant)
		}
		p, err := b.Get(ctx, next.String())
		if err != nil {
			return nil, err
		}
		return redirect(p, "hydra "+next.Path)
	})
}

// answer is the login and consent app: it accepts the challenge in u (a redirect to loginApp)
// and returns where Hydra says the browser goes next.
func (h *Hydra) answer(ctx context.Context, u *url.URL, user string, grant bool) (*url.URL, error) {
	q := u.Query()
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	switch u.Path {
	case "/login":
		challenge := url.Values{"login_challenge": {q.Get("login_challenge")}}
		body := map[string]any{"subject": user, "remember": false}
		if err := h.adminJSON(ctx, http.MethodPut, "/admin/oauth2/auth/requests/login/accept", challenge, body, &out); err != nil {
			return nil, fmt.Errorf("accept login: %w", err)
		}
	case "/consent":
		challenge := url.Values{"consent_challenge": {q.Get("consent_challenge")}}
		var request struct {
			Scopes   []string `json:"requested_scope"`
			Audience []string `json:"requested_access_token_audience"`
			Subject  string   `json:"subject"`
		}
		if err := h.adminJSON(ctx, http.MethodGet, "/admin/oauth2/auth/requests/consent", challenge, nil, &request); err != nil {
			return nil, fmt.Errorf("get consent request: %w", err)
		}
		if request.Subject != user {
			return nil, fmt.Errorf("consent request for subject %q, want %q", request.Subject, user)
		}
		if grant {
			body := map[string]any{"grant_scope": request.Scopes, "grant_access_token_audience": request.Audience, "remember": false}
			if err := h.adminJSON(ctx, http.MethodPut, "/admin/oauth2/auth/requests/consent/accept", challenge, body, &out); err != nil {
				return nil, fmt.Errorf("accept consent: %w", err)
			}
		} else {
			body := map[string]any{"error": "access_denied", "error_description": "the user refused"}
			if err := h.adminJSON(ctx, http.MethodPut, "/admin/oauth2/auth/requests/consent/reject", challenge, body, &out); err != nil {
				return nil, fmt.Errorf("reject consent: %w", err)
			}
		}
	default:
		return nil, fmt.Errorf("hydra sent the browser to %s: neither login nor consent", u.Redacted())
	}
	next, err := url.Parse(out.RedirectTo)
	if err != nil || out.RedirectTo == "" {
		return nil, fmt.Errorf("hydra's redirect_to %q: %v", out.RedirectTo, err)
	}
	return next, nil
}

// adminJSON sends body (JSON, when not nil) to the admin API and decodes a 2xx answer into out
// (when not nil).
func (h *Hydra) adminJSON(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(data)
	}
	u := h.admin + path
	if query != nil {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, tail(string(data), 400))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", method, path, err)
	}
	return nil
}

// redirectURIOf is the redirect_uri parameter of an authorization URL.
func redirectURIOf(authURL string) (string, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return "", fmt.Errorf("authorization URL: %w", err)
	}
	r := u.Query().Get("redirect_uri")
	if r == "" {
		return "", errors.New("authorization URL without redirect_uri")
	}
	return r, nil
}

// freePorts returns n distinct free loopback ports (free when picked: a port can be taken before
// the server binds it, so callers retry).
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
