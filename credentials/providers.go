package credentials

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/internal/loopback"
	"github.com/toolgate/toolgate/toolcore"
)

// Provider is one OAuth 2.1 authorization server whose tokens tools may ask for
// (toolcore.Credential.Provider names it). It holds no secret: ClientSecretName names the client
// secret in the worker's toolcore.SecretSource.
type Provider struct {
	// Name is what tools call the provider (^[A-Za-z0-9_.-]{1,128}$). Required, unique.
	Name string `json:"name"`
	// Issuer is an OpenID Connect issuer URL: AuthURL and TokenURL, when empty, are discovered
	// from its /.well-known/openid-configuration on first use. Optional when both are set.
	Issuer string `json:"issuer,omitempty"`
	// AuthURL is the authorization endpoint the principal consents at. Required without Issuer.
	AuthURL string `json:"authURL,omitempty"`
	// TokenURL is the token endpoint (code exchange, refresh). Required without Issuer.
	TokenURL string `json:"tokenURL,omitempty"`
	// ClientID is the worker's client at the provider. Required.
	ClientID string `json:"clientID"`
	// ClientSecretName names the client secret in the worker's SecretSource (never the value).
	// Optional: default none, a public client (PKCE only; client_id in the request body).
	ClientSecretName string `json:"clientSecretName,omitempty"`
	// ClientAuth is how a confidential client authenticates at TokenURL: "basic" (HTTP Basic,
	// client_secret_basic) or "post" (in the body, client_secret_post). Optional: default basic.
	ClientAuth string `json:"clientAuth,omitempty"`
	// Scopes are asked for when a tool's Credential names none. Optional.
	Scopes []string `json:"scopes,omitempty"`
	// AuthParams are added to the authorization URL (such as access_type=offline or
	// prompt=consent for a provider that only then issues a refresh token). The parameters of
	// the flow itself (state, PKCE, redirect_uri, client_id, response_type, scope) may not be
	// set. Optional.
	AuthParams map[string]string `json:"authParams,omitempty"`
}

// Bounds of a providers file.
const (
	// MaxProvidersFileBytes bounds the file LoadProviders reads.
	MaxProvidersFileBytes = 1 << 20
	// MaxProviders bounds the providers of one file.
	MaxProviders = 256
	// maxDiscoveryBytes bounds an OpenID Connect discovery document.
	maxDiscoveryBytes = 256 << 10
)

// providersFile is the JSON of a providers file; clientSecret is there only to refuse it.
type providersFile struct {
	Providers []struct {
		Provider
		ClientSecret json.RawMessage `json:"clientSecret,omitempty"`
	} `json:"providers"`
}

// LoadProviders reads a providers file: {"providers": [Provider, ...]} (JSON, unknown fields
// refused). A "clientSecret" member is refused: the file names the secret (clientSecretName),
// the worker's secret source holds it.
func LoadProviders(path string) ([]Provider, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("providers file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxProvidersFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("providers file %s: %w", path, err)
	}
	if len(data) > MaxProvidersFileBytes {
		return nil, fmt.Errorf("providers file %s: larger than %d bytes", path, MaxProvidersFileBytes)
	}
	ps, err := ParseProviders(data)
	if err != nil {
		return nil, fmt.Errorf("providers file %s: %w", path, err)
	}
	return ps, nil
}

// ParseProviders parses and checks the JSON of a providers file (see LoadProviders).
func ParseProviders(data []byte) ([]Provider, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var file providersFile
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if dec.More() {
		return nil, errors.New("parse: trailing data after the JSON object")
	}
	if len(file.Providers) > MaxProviders {
		return nil, fmt.Errorf("%d providers, at most %d", len(file.Providers), MaxProviders)
	}
	out := make([]Provider, 0, len(file.Providers))
	for i, p := range file.Providers {
		if p.ClientSecret != nil {
			return nil, fmt.Errorf("provider %d (%q): clientSecret: a providers file holds no secret; name it with clientSecretName and give the value to the worker's secret source", i, p.Name)
		}
		if err := p.Provider.check(); err != nil {
			return nil, fmt.Errorf("provider %d: %w", i, err)
		}
		if slices.ContainsFunc(out, func(q Provider) bool { return q.Name == p.Name }) {
			return nil, fmt.Errorf("provider %q named twice", p.Name)
		}
		out = append(out, p.Provider)
	}
	return out, nil
}

// reservedAuthParams are the authorization URL's parameters of the flow itself.
var reservedAuthParams = []string{"state", "code_challenge", "code_challenge_method", "redirect_uri", "client_id", "response_type", "scope"}

// check validates p: a name, a client ID, endpoints (or an issuer) on https (http only on
// loopback), scopes without spaces, no reserved AuthParams.
func (p Provider) check() error {
	if err := toolcore.CheckSecretName(p.Name); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	if p.ClientID == "" {
		return fmt.Errorf("provider %q: clientID is required", p.Name)
	}
	if p.ClientSecretName != "" {
		if err := toolcore.CheckSecretName(p.ClientSecretName); err != nil {
			return fmt.Errorf("provider %q: clientSecretName: %w", p.Name, err)
		}
	}
	switch p.ClientAuth {
	case "", "basic", "post":
	default:
		return fmt.Errorf("provider %q: clientAuth %q: want basic or post", p.Name, p.ClientAuth)
	}
	if p.Issuer == "" && (p.AuthURL == "" || p.TokenURL == "") {
		return fmt.Errorf("provider %q: set authURL and tokenURL, or an OpenID Connect issuer to discover them", p.Name)
	}
	for _, u := range []struct{ field, v string }{{"issuer", p.Issuer}, {"authURL", p.AuthURL}, {"tokenURL", p.TokenURL}} {
		if u.v == "" {
			continue
		}
		if err := checkEndpoint(u.v); err != nil {
			return fmt.Errorf("provider %q: %s: %w", p.Name, u.field, err)
		}
	}
	for _, s := range p.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n") {
			return fmt.Errorf("provider %q: scope %q: want a non-empty scope without spaces", p.Name, s)
		}
	}
	for k := range p.AuthParams {
		if slices.Contains(reservedAuthParams, k) {
			return fmt.Errorf("provider %q: authParams %q is set by the flow itself", p.Name, k)
		}
	}
	return nil
}

// checkEndpoint accepts an absolute https URL, or http on a loopback host (a provider on this
// machine), without userinfo or fragment.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Host == "":
		return errors.New("want an absolute URL")
	case u.User != nil:
		return errors.New("a URL with userinfo: name the client secret with clientSecretName instead")
	case u.Fragment != "":
		return errors.New("a URL with a fragment")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback.Host(u.Hostname()):
		return nil
	}
	return errors.New("want https (http only on a loopback host)")
}

// endpoints are a provider's authorization and token URLs, discovered once from its issuer when
// the file does not name them.
type endpoints struct {
	mu                sync.Mutex
	authURL, tokenURL string
}

// resolve returns p's endpoints, discovering them from p.Issuer the first time it is needed
// (a failed discovery is tried again on the next call).
func (e *endpoints) resolve(ctx context.Context, client *http.Client, p Provider) (authURL, tokenURL string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.authURL != "" && e.tokenURL != "" {
		return e.authURL, e.tokenURL, nil
	}
	authURL, tokenURL = p.AuthURL, p.TokenURL
	if authURL == "" || tokenURL == "" {
		doc, err := discover(ctx, client, p.Issuer)
		if err != nil {
			return "", "", err
		}
		if authURL == "" {
			authURL = doc.AuthorizationEndpoint
		}
		if tokenURL == "" {
			tokenURL = doc.TokenEndpoint
		}
	}
	e.authURL, e.tokenURL = authURL, tokenURL
	return authURL, tokenURL, nil
}

// discovery is the part of an OpenID Connect discovery document the client uses.
type discovery struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
}

// discover fetches issuer's OpenID Connect configuration; its issuer must be issuer itself and
// its endpoints pass checkEndpoint. Its errors hold no response text.
func discover(ctx context.Context, client *http.Client, issuer string) (discovery, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration", nil)
	if err != nil {
		return discovery{}, fmt.Errorf("discovery: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return discovery{}, errors.New("discovery: the issuer could not be reached")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return discovery{}, fmt.Errorf("discovery: HTTP %d", resp.StatusCode)
	}
	var doc discovery
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDiscoveryBytes)).Decode(&doc); err != nil {
		return discovery{}, errors.New("discovery: not an OpenID Connect configuration")
	}
	if strings.TrimSuffix(doc.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
		return discovery{}, errors.New("discovery: the document names another issuer")
	}
	for _, e := range []string{doc.AuthorizationEndpoint, doc.TokenEndpoint} {
		if err := checkEndpoint(e); err != nil {
			return discovery{}, fmt.Errorf("discovery: endpoint: %w", err)
		}
	}
	return doc, nil
}
