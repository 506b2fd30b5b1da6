package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

// An --mcp URL that carries a credential is found, and where it is said without its value.
func TestCredentialInURL(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "plain", give: "https://mcp.example.com/mcp", want: ""},
		{name: "harmless query", give: "https://mcp.example.com/mcp?region=eu&v=2", want: ""},
		{name: "command", give: "server --token=abc", want: ""},
		{name: "userinfo", give: "https://me:pw-123456@mcp.example.com/mcp", want: "userinfo (user:password@)"},
		{name: "user only", give: "https://me@mcp.example.com/mcp", want: "userinfo (user:password@)"},
		{name: "key", give: "https://x.example/mcp?key=sk-123", want: `query parameter "key"`},
		{name: "api_key upper case", give: "https://x.example/mcp?v=1&API_KEY=sk-123", want: `query parameter "api_key"`},
		{name: "apikey", give: "http://127.0.0.1:3000/mcp?apiKey=sk-123", want: `query parameter "apikey"`},
		{name: "access_token", give: "https://x.example/mcp?access_token=t", want: `query parameter "access_token"`},
		{name: "token", give: "https://x.example/mcp?token", want: `query parameter "token"`},
		{name: "auth", give: "https://x.example/mcp?auth=t", want: `query parameter "auth"`},
		{name: "secret", give: "https://x.example/mcp?Secret=t", want: `query parameter "secret"`},
		{name: "password", give: "https://x.example/mcp?password=t", want: `query parameter "password"`},
		{name: "sig", give: "https://x.example/mcp?sig=t", want: `query parameter "sig"`},
		{name: "signature", give: "https://x.example/mcp?X-Amz-Signature=t", want: `query parameter "x-amz-signature"`},
		{name: "code", give: "https://x.example/mcp?code=t", want: `query parameter "code"`},
		{name: "suffix token", give: "https://x.example/mcp?github_token=t", want: `query parameter "github_token"`},
		{name: "suffix key", give: "https://x.example/mcp?openai-key=t", want: `query parameter "openai-key"`},
		{name: "escaped name", give: "https://x.example/mcp?api%5Fkey=t", want: `query parameter "api_key"`},
		{name: "not a key", give: "https://x.example/mcp?monkey=1&keyword=2", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mcp.CredentialInURL(tt.give)
			assert.Equal(t, tt.want, got)
			for _, value := range []string{"sk-123", "pw-123456"} {
				assert.NotContains(t, got, value)
			}
		})
	}
}

// rotating is a secret source whose values a test changes.
type rotating struct {
	mu     sync.Mutex
	values map[string]string
}

func (r *rotating) set(name, v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values[name] = v
}

func (r *rotating) Secret(_ context.Context, name string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.values[name]
	if !ok {
		return "", toolcore.ErrSecretNotFound
	}
	return v, nil
}

// authServer serves one readOnly tool, whoami, over streamable HTTP to requests whose
// Authorization header is "Bearer " + the token of the moment (set changes it) and whose
// X-Tenant header is tenant; others get a 401 whose JSON-RPC error quotes what they sent. whoami
// answers with the generation of the token (1, then one more at each set) and the Authorization
// header it got: a server that echoes a credential.
func authServer(t *testing.T, token, tenant string) (url string, set func(string)) {
	var mu sync.Mutex
	generation := 1
	s := sdk.NewServer(&sdk.Implementation{Name: "auth", Version: "1"}, nil)
	var schema map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{"type":"object","properties":{},"additionalProperties":false}`), &schema))
	s.AddTool(&sdk.Tool{Name: "whoami", Description: "Say which credential came.", InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
				Text: fmt.Sprintf("generation %d; you sent %s", generation, req.Extra.Header.Get("Authorization"))}}}, nil
		})
	inner := mcp.HTTPHandler(s, mcp.HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		want := "Bearer " + token
		mu.Unlock()
		if r.Header.Get("Authorization") != want || r.Header.Get("X-Tenant") != tenant {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			msg, _ := json.Marshal("unknown credential " + r.Header.Get("Authorization"))
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":` + string(msg) + `}}`))
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func(v string) {
		mu.Lock()
		defer mu.Unlock()
		token = v
		generation++
	}
}

// A mount's headers come from secrets, resolved at each (re)connect: a rotated token is used by
// the connection after the one it refused, and every mounted tool declares the secrets.
func TestMountHeadersFromSecrets(t *testing.T) {
	url, setServerToken := authServer(t, "token-one-0123", "tenant-0123456")
	src := &rotating{values: map[string]string{"web_token": "token-one-0123", "web_tenant": "tenant-0123456"}}
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	opts := mcp.MountOptions{Secrets: src, Headers: []mcp.SecretHeader{
		{Name: "Authorization", Secret: "web_token", Scheme: "Bearer"},
		{Name: "x-tenant", Secret: "web_tenant"},
	}}
	remote, err := mcp.Mount(t.Context(), "web", transport, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = remote.Close() })
	require.Len(t, remote.Tools(), 1)
	whoami := remote.Tools()[0]
	assert.Equal(t, []string{"web_token", "web_tenant"}, whoami.Options().Secrets, "declared: each attempt resolves them to redact them")

	out, err := whoami.Invoke(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, toolcore.Text("generation 1; you sent Bearer [REDACTED:web_token]"), out, "the mount redacts what it sent")

	// Rotated: the session refuses the old token, the next call reconnects with the new one.
	setServerToken("token-two-0123")
	src.set("web_token", "token-two-0123")
	_, err = whoami.Invoke(t.Context(), json.RawMessage(`{}`))
	require.ErrorContains(t, err, "refused the mount's credentials", "the old session's token is refused")
	assert.True(t, toolcore.IsTransient(err), "retried by a safe tool: %v", err)
	assert.NotContains(t, err.Error(), "token-one-0123")
	out, err = whoami.Invoke(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, toolcore.Text("generation 2; you sent Bearer [REDACTED:web_token]"), out)
}

// A mount whose secrets are wrong, missing or would travel in clear fails, naming what, never
// showing a value.
func TestMountHeadersRefused(t *testing.T) {
	url, _ := authServer(t, "token-one-0123", "tenant-0123456")
	src := &rotating{values: map[string]string{"web_token": "token-wrong-0123", "short": "abc", "web_tenant": "tenant-0123456"}}
	bearer := func(secret string) []mcp.SecretHeader {
		return []mcp.SecretHeader{{Name: "Authorization", Secret: secret, Scheme: "Bearer"}, {Name: "X-Tenant", Secret: "web_tenant"}}
	}
	tests := []struct {
		name    string
		target  string
		opts    mcp.MountOptions
		wantErr string
	}{
		{name: "refused token", target: url, opts: mcp.MountOptions{Secrets: src, Headers: bearer("web_token")},
			wantErr: "unknown credential Bearer [REDACTED:web_token]"},
		{name: "missing secret", target: url, opts: mcp.MountOptions{Secrets: src, Headers: bearer("absent")},
			wantErr: `secret "absent" is not set on the worker`},
		{name: "too short to redact", target: url, opts: mcp.MountOptions{Secrets: src, Headers: bearer("short")},
			wantErr: `secret "short" is shorter than 8 bytes`},
		{name: "no source", target: url, opts: mcp.MountOptions{Headers: bearer("web_token")},
			wantErr: "need MountOptions.Secrets"},
		{name: "clear text", target: "http://mcp.example.com/mcp", opts: mcp.MountOptions{Secrets: src, Headers: bearer("web_token")},
			wantErr: "in clear"},
		{name: "command", target: "true", opts: mcp.MountOptions{Secrets: src, Headers: bearer("web_token")},
			wantErr: "not a command"},
		{name: "transport header", target: url, opts: mcp.MountOptions{Secrets: src, Headers: []mcp.SecretHeader{{Name: "mcp-session-id", Secret: "web_token"}}},
			wantErr: "set by the transport"},
		{name: "host header", target: url, opts: mcp.MountOptions{Secrets: src, Headers: []mcp.SecretHeader{{Name: "Host", Secret: "web_token"}}},
			wantErr: "set by the transport"},
		{name: "header twice", target: url, opts: mcp.MountOptions{Secrets: src, Headers: append(bearer("web_token"), mcp.SecretHeader{Name: "authorization", Secret: "web_tenant"})},
			wantErr: "given twice"},
		{name: "bad header name", target: url, opts: mcp.MountOptions{Secrets: src, Headers: []mcp.SecretHeader{{Name: "X Key", Secret: "web_token"}}},
			wantErr: "not an HTTP token"},
		{name: "bad param", target: url, opts: mcp.MountOptions{Secrets: src, Query: []mcp.SecretQuery{{Param: "a&b", Secret: "web_token"}}},
			wantErr: "need no escaping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			transport, err := mcp.Target(tt.target)
			require.NoError(t, err)
			remote, err := mcp.Mount(t.Context(), "web", transport, tt.opts)
			if remote != nil {
				_ = remote.Close()
			}
			require.ErrorContains(t, err, tt.wantErr)
			assert.NotContains(t, err.Error(), "token-wrong-0123")
			assert.False(t, strings.Contains(err.Error(), "tenant-0123456"), "%s", err)
		})
	}
}

// A mount's query parameter comes from a secret: the server gets it on every request, and what it
// echoes of it, URL-escaped, is redacted.
func TestMountQueryFromSecrets(t *testing.T) {
	const key = "key/0123+456=789"
	var mu sync.Mutex
	lastQuery := ""
	s := sdk.NewServer(&sdk.Implementation{Name: "query", Version: "1"}, nil)
	var schema map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{"type":"object","properties":{},"additionalProperties":false}`), &schema))
	s.AddTool(&sdk.Tool{Name: "echo_url", Description: "Say the query it was called with.", InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "called with " + lastQuery}}}, nil
		})
	inner := mcp.HTTPHandler(s, mcp.HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api_key") != key || r.URL.Query().Get("v") != "2" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		lastQuery = r.URL.RawQuery
		mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	transport, err := mcp.Target(srv.URL + "/mcp?v=2")
	require.NoError(t, err)
	remote, err := mcp.Mount(t.Context(), "q", transport, mcp.MountOptions{
		Secrets: &rotating{values: map[string]string{"q_key": key}},
		Query:   []mcp.SecretQuery{{Param: "api_key", Secret: "q_key"}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = remote.Close() })
	require.Len(t, remote.Tools(), 1)
	assert.Equal(t, []string{"q_key"}, remote.Tools()[0].Options().Secrets)
	out, err := remote.Tools()[0].Invoke(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, toolcore.Text("called with api_key=[REDACTED:q_key]&v=2"), out)
}
