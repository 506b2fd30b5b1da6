package toolbox

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// secretMap is a toolcore.SecretSource over a map.
type secretMap map[string]string

func (m secretMap) Secret(_ context.Context, name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%s: %w", name, toolcore.ErrSecretNotFound)
}

const apiToken = "tok-9c1e2b8d4f607f3a"

// An HTTPCredential's header reaches its origin only: a redirect to another origin drops it, and
// a server that echoes it shows the model the redaction marker, never the token.
func TestHTTPGetCredentialReachesItsOriginOnly(t *testing.T) {
	other := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "other saw %q", r.Header.Get("Authorization"))
	})
	api := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, other.URL+"/landing", http.StatusFound)
			return
		}
		fmt.Fprintf(w, "api saw %q", r.Header.Get("Authorization"))
	})
	reg := newTestRegistry(t, Config{
		AllowHosts:      []string{api.hostPort(), other.hostPort()},
		HTTPCredentials: []HTTPCredential{{Origin: api.URL, Header: "authorization", Secret: "api_token", Prefix: "Bearer "}},
	})
	tool, _ := reg.Get(NameHTTPGet)
	assert.Equal(t, []string{"api_token"}, tool.Options().Secrets)
	opts := toolcore.ExecuteOptions{Secrets: secretMap{"api_token": apiToken}}

	var got httpResult
	requireOK(t, runCtx(t, context.Background(), reg, NameHTTPGet, fmt.Sprintf(`{"url":%q}`, api.URL+"/data"), opts), &got)
	assert.Equal(t, `api saw "Bearer [REDACTED:api_token]"`, *got.Body, "the header was sent, and the echo redacted")

	requireOK(t, runCtx(t, context.Background(), reg, NameHTTPGet, fmt.Sprintf(`{"url":%q}`, api.URL+"/away"), opts), &got)
	assert.Equal(t, `other saw ""`, *got.Body, "a redirect to another origin drops the credential")

	requireOK(t, runCtx(t, context.Background(), reg, NameHTTPGet, fmt.Sprintf(`{"url":%q}`, other.URL+"/x"), opts), &got)
	assert.Equal(t, `other saw ""`, *got.Body)

	// Without the secret on the worker, http_get does not run.
	msg := requireError(t, runCtx(t, context.Background(), reg, NameHTTPGet, fmt.Sprintf(`{"url":%q}`, api.URL), toolcore.ExecuteOptions{}), toolcore.CodeToolExecutionFailed)
	assert.Contains(t, msg, `secret "api_token"`)
}

func TestHTTPCredentialsAreChecked(t *testing.T) {
	for name, c := range map[string]HTTPCredential{
		"plain http to a remote host": {Origin: "http://api.example.com", Header: "X-Api-Key", Secret: "k"},
		"a path":                      {Origin: "https://api.example.com/v1", Header: "X-Api-Key", Secret: "k"},
		"userinfo":                    {Origin: "https://u:p@api.example.com", Header: "X-Api-Key", Secret: "k"},
		"bad header":                  {Origin: "https://api.example.com", Header: "X Api", Secret: "k"},
		"host header":                 {Origin: "https://api.example.com", Header: "host", Secret: "k"},
		"bad secret name":             {Origin: "https://api.example.com", Header: "X-Api-Key", Secret: "a b"},
		"two-line prefix":             {Origin: "https://api.example.com", Header: "X-Api-Key", Secret: "k", Prefix: "a\r\nb"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(Config{HTTPCredentials: []HTTPCredential{c}})
			assert.Error(t, err)
		})
	}
	_, err := New(Config{HTTPCredentials: []HTTPCredential{{Origin: "http://127.0.0.1:8080", Header: "X-Api-Key", Secret: "k"}}})
	require.NoError(t, err, "plain http to loopback is allowed")
}
