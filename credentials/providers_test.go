package credentials

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadProviders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "providers.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"providers": [
  {"name": "github", "authURL": "https://github.com/login/oauth/authorize", "tokenURL": "https://github.com/login/oauth/access_token",
   "clientID": "Iv1.abc", "clientSecretName": "GITHUB_CLIENT_SECRET", "scopes": ["repo"]},
  {"name": "google", "issuer": "https://accounts.google.com", "clientID": "123.apps.googleusercontent.com",
   "clientSecretName": "GOOGLE_CLIENT_SECRET", "clientAuth": "post", "authParams": {"access_type": "offline", "prompt": "consent"}},
  {"name": "local", "authURL": "http://127.0.0.1:4444/oauth2/auth", "tokenURL": "http://127.0.0.1:4444/oauth2/token", "clientID": "public"}
]}`), 0o600))
	ps, err := LoadProviders(path)
	require.NoError(t, err)
	require.Len(t, ps, 3)
	assert.Equal(t, "GITHUB_CLIENT_SECRET", ps[0].ClientSecretName)
	assert.Equal(t, "offline", ps[1].AuthParams["access_type"])
	assert.Empty(t, ps[2].ClientSecretName, "a public client")
}

func TestParseProvidersRefuses(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{"a client secret in the file", `{"providers":[{"name":"a","issuer":"https://idp.example","clientID":"c","clientSecret":"s3cr3t"}]}`, "holds no secret"},
		{"an unknown field", `{"providers":[{"name":"a","issuer":"https://idp.example","clientID":"c","scope":"x"}]}`, "unknown field"},
		{"no endpoints", `{"providers":[{"name":"a","clientID":"c"}]}`, "authURL and tokenURL"},
		{"http beyond loopback", `{"providers":[{"name":"a","authURL":"http://idp.example/a","tokenURL":"https://idp.example/t","clientID":"c"}]}`, "want https"},
		{"userinfo in a URL", `{"providers":[{"name":"a","issuer":"https://u:p@idp.example","clientID":"c"}]}`, "userinfo"},
		{"a bad name", `{"providers":[{"name":"a b","issuer":"https://idp.example","clientID":"c"}]}`, "name"},
		{"no client ID", `{"providers":[{"name":"a","issuer":"https://idp.example"}]}`, "clientID"},
		{"a flow parameter", `{"providers":[{"name":"a","issuer":"https://idp.example","clientID":"c","authParams":{"state":"x"}}]}`, "set by the flow"},
		{"a scope with a space", `{"providers":[{"name":"a","issuer":"https://idp.example","clientID":"c","scopes":["a b"]}]}`, "scope"},
		{"a bad client auth", `{"providers":[{"name":"a","issuer":"https://idp.example","clientID":"c","clientAuth":"jwt"}]}`, "clientAuth"},
		{"a name twice", `{"providers":[{"name":"a","issuer":"https://idp.example","clientID":"c"},{"name":"a","issuer":"https://idp.example","clientID":"c"}]}`, "twice"},
		{"trailing data", `{"providers":[]} {}`, "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProviders([]byte(tt.give))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "s3cr3t")
		})
	}
}

func TestNewOAuthRefusesABadRedirectURL(t *testing.T) {
	p := Provider{Name: "a", Issuer: "https://idp.example", ClientID: "c"}
	for _, u := range []string{"", "/oauth/callback", "http://consent.example.com/oauth/callback", "https://consent.example.com/cb?x=1"} {
		_, err := NewOAuth(OAuthOptions{Providers: []Provider{p}, Store: newMemoryStore(), RedirectURL: u})
		assert.Error(t, err, u)
	}
	_, err := NewOAuth(OAuthOptions{Providers: []Provider{p}, Store: newMemoryStore(), RedirectURL: "https://consent.example.com/oauth/callback"})
	assert.NoError(t, err)
}
