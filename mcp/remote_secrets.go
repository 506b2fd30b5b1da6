package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/loopback"
	"github.com/toolgate/toolgate/toolcore"
)

// SecretHeader is an HTTP header of a streamable-HTTP mount whose value is a secret's (an API
// key, a bearer token): the value comes from the worker's secret source, never from argv.
type SecretHeader struct {
	// Name is the header, such as "Authorization" or "X-Api-Key": an HTTP token, not one the
	// transport sets itself (Host, Content-Type, Accept, Mcp-*, ...). Required.
	Name string
	// Secret names the secret whose value the header carries (^[A-Za-z0-9_.-]{1,128}$).
	// Required.
	Secret string
	// Scheme, when set, comes before the value with one space: "Bearer" sends
	// "Authorization: Bearer <value>". Optional: default none, the value alone.
	Scheme string
}

// SecretQuery is a query parameter of a streamable-HTTP mount whose value is a secret's, for a
// server that takes its key only in the URL (?api_key=...).
type SecretQuery struct {
	// Param is the parameter's name, such as "api_key". Required.
	Param string
	// Secret names the secret whose value the parameter carries. Required.
	Secret string
}

// reservedHeaders are set by the HTTP and MCP transports themselves (canonical form; every
// Mcp-* header too).
var reservedHeaders = []string{"Host", "Content-Length", "Content-Type", "Accept", "Connection",
	"Transfer-Encoding", "Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Connection", "Last-Event-Id"}

// checkMountSecrets checks the headers and query parameters of MountOptions: valid, each once,
// with a source to resolve them.
func checkMountSecrets(opts MountOptions) error {
	if len(opts.Headers) == 0 && len(opts.Query) == 0 {
		return nil
	}
	if opts.Secrets == nil {
		return errors.New("headers or query parameters from secrets need MountOptions.Secrets (the worker's secret source)")
	}
	var seen []string
	for _, h := range opts.Headers {
		name := http.CanonicalHeaderKey(h.Name)
		switch {
		case !isToken(h.Name):
			return fmt.Errorf("header name %q is not an HTTP token", h.Name)
		case slices.Contains(reservedHeaders, name) || strings.HasPrefix(name, "Mcp-"):
			return fmt.Errorf("header %s is set by the transport, not from a secret", name)
		case slices.Contains(seen, name):
			return fmt.Errorf("header %s is given twice", name)
		case h.Scheme != "" && !isToken(h.Scheme):
			return fmt.Errorf("header %s: scheme %q is not an HTTP token", name, h.Scheme)
		}
		if err := toolcore.CheckSecretName(h.Secret); err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
		seen = append(seen, name)
	}
	var params []string
	for _, q := range opts.Query {
		switch {
		case q.Param == "" || len(q.Param) > 128 || url.QueryEscape(q.Param) != q.Param:
			return fmt.Errorf("query parameter %q: want 1 to 128 characters that need no escaping", q.Param)
		case slices.Contains(params, q.Param):
			return fmt.Errorf("query parameter %s is given twice", q.Param)
		}
		if err := toolcore.CheckSecretName(q.Secret); err != nil {
			return fmt.Errorf("query parameter %s: %w", q.Param, err)
		}
		params = append(params, q.Param)
	}
	if n := len(mountSecretNames(opts)); n > toolcore.MaxToolSecrets {
		return fmt.Errorf("headers and query parameters name %d secrets, at most %d", n, toolcore.MaxToolSecrets)
	}
	return nil
}

// isToken reports whether s is an HTTP token (RFC 9110 tchar).
func isToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// mountSecretNames are the secrets of opts' headers and query parameters, each once: every
// mounted tool declares them (toolcore.Options.Secrets), so its attempts redact their values
// from whatever the remote server sends back.
func mountSecretNames(opts MountOptions) []string {
	var names []string
	for _, h := range opts.Headers {
		if !slices.Contains(names, h.Secret) {
			names = append(names, h.Secret)
		}
	}
	for _, q := range opts.Query {
		if !slices.Contains(names, q.Secret) {
			names = append(names, q.Secret)
		}
	}
	return names
}

// mountSecrets are the values of one connection's headers and query parameters, resolved when it
// is made.
type mountSecrets struct {
	origin  *url.URL    // scheme and host they are sent to, and nowhere else
	headers http.Header // nil without headers
	query   url.Values  // nil without parameters
	red     *toolcore.Secrets
	// refused is set when the origin answered 401 or 403: the session is dropped, and the next
	// request reconnects with the secrets resolved again.
	refused atomic.Bool
}

// resolveMountSecrets resolves the headers and query parameters of a connection to endpoint from
// src, with toolcore's bounds on values (an empty, short, long or non-UTF-8 one is a
// *toolcore.SecretError naming it). They go over https, or over http only to loopback.
func resolveMountSecrets(ctx context.Context, prefix, endpoint string, opts MountOptions) (*mountSecrets, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: endpoint is not a URL", prefix)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback.Host(u.Hostname())) {
		return nil, fmt.Errorf("MCP server %s: secrets go to https:// servers (or http:// on loopback) only: over %s:// to %s they would cross the network in clear", prefix, u.Scheme, u.Hostname())
	}
	names := mountSecretNames(opts)
	red, err := toolcore.ResolveSecrets(ctx, opts.Secrets, "MCP server "+prefix, names)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %w", prefix, err)
	}
	// The values, through the accessor tools use (Secrets keeps them unexported).
	values := toolcore.WithExecution(ctx, toolcore.Execution{ToolName: "MCP server " + prefix, Secrets: red})
	value := func(name string) string {
		v, _ := toolcore.Secret(values, name) // resolved just above
		return v
	}
	ms := &mountSecrets{origin: &url.URL{Scheme: u.Scheme, Host: u.Host}, red: red}
	for _, h := range opts.Headers {
		v := value(h.Secret)
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return nil, fmt.Errorf("MCP server %s: secret %q holds a control character: not an HTTP header value", prefix, h.Secret)
		}
		if h.Scheme != "" {
			v = h.Scheme + " " + v
		}
		if ms.headers == nil {
			ms.headers = http.Header{}
		}
		ms.headers.Set(h.Name, v)
	}
	for _, q := range opts.Query {
		if ms.query == nil {
			ms.query = url.Values{}
		}
		ms.query.Set(q.Param, value(q.Secret))
	}
	return ms, nil
}

// refusedByServer reports whether the origin refused ms (nil ms: false).
func (ms *mountSecrets) refusedByServer() bool { return ms != nil && ms.refused.Load() }

// secretsOf returns the secrets cs was connected with, while it is the current session.
func (r *Remote) secretsOf(cs *sdk.ClientSession) *mountSecrets {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != cs {
		return nil
	}
	return r.currentSecrets
}

// liveSecrets returns the secrets of the current session (nil without).
func (r *Remote) liveSecrets() *mountSecrets {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.currentSecrets
}

// redactJSON is raw with the values of ms redacted: JSON still, or else the redacted text (a
// value written as a bare number).
func (ms *mountSecrets) redactJSON(raw []byte) any {
	red := ms.redact(string(raw))
	if red == string(raw) {
		return json.RawMessage(raw)
	}
	if json.Valid([]byte(red)) {
		return json.RawMessage(red)
	}
	return toolcore.Text(red)
}

// redact replaces the values of ms in text (nil ms: text as it is).
func (ms *mountSecrets) redact(text string) string {
	if ms == nil {
		return text
	}
	return ms.red.Redact(text)
}

// secretTransport adds a connection's secret headers and query parameters to each request sent
// to its origin: a redirect to another scheme, host or port gets none of them.
type secretTransport struct {
	base    http.RoundTripper
	secrets *mountSecrets
}

func (t secretTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != t.secrets.origin.Scheme || !strings.EqualFold(req.URL.Host, t.secrets.origin.Host) {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for name, vs := range t.secrets.headers {
		req.Header[name] = vs
	}
	if len(t.secrets.query) > 0 {
		q := req.URL.Query()
		for name, vs := range t.secrets.query {
			q[name] = vs
		}
		req.URL.RawQuery = q.Encode()
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		t.secrets.refused.Store(true)
	}
	return resp, err
}

// CredentialInURL says where an http(s) mount target carries a credential, so that a worker can
// refuse it (a process's arguments are readable by every local user in /proc/PID/cmdline):
// "userinfo" for user:password@, `query parameter "token"` for a parameter whose name is a
// credential's (CredentialParam); "" when it has none or is not an http(s) URL. It never
// returns a value.
func CredentialInURL(target string) string {
	target = strings.TrimSpace(target)
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		return ""
	}
	u, err := url.Parse(target)
	if err != nil {
		// Unparsable: a worker refuses it anyway, and its text must not be echoed.
		return "URL (it does not parse)"
	}
	if u.User != nil {
		return "userinfo (user:password@)"
	}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if n, err := url.QueryUnescape(name); err == nil && CredentialParam(n) {
			return fmt.Sprintf("query parameter %q", strings.ToLower(n))
		}
	}
	return ""
}

// credentialParams are query parameter names of credentials, lower case without '-' and '_'.
var credentialParams = []string{"key", "apikey", "token", "accesstoken", "refreshtoken", "idtoken",
	"auth", "authorization", "authtoken", "secret", "clientsecret", "password", "passwd", "pwd", "pass",
	"sig", "signature", "code", "jwt", "bearer", "credential", "credentials", "session", "sessionid",
	"sessiontoken", "privatetoken", "accesskey", "secretkey", "privatekey", "subscriptionkey",
	"xapikey", "xamzsignature", "xamzcredential", "xamzsecuritytoken", "hmac"}

// CredentialParam reports whether a query parameter's name is a credential's: key, api_key,
// apikey, token, access_token, auth, secret, password, sig, signature, code and their kin, or a
// name ending in token, secret, password, apikey, signature or credential, or in "_key" or
// "-key" (case-insensitive).
func CredentialParam(name string) bool {
	lower := strings.ToLower(name)
	squeezed := strings.NewReplacer("-", "", "_", "", ".", "").Replace(lower)
	if slices.Contains(credentialParams, squeezed) {
		return true
	}
	for _, suffix := range []string{"token", "secret", "password", "apikey", "signature", "credential"} {
		if strings.HasSuffix(squeezed, suffix) {
			return true
		}
	}
	return strings.HasSuffix(lower, "_key") || strings.HasSuffix(lower, "-key")
}
