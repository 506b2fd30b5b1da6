package mcp

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mount's secret headers and query parameters go to its origin only: a redirect to another
// host or port gets none of them.
func TestSecretTransportKeepsToOrigin(t *testing.T) {
	type seen struct{ auth, key string }
	got := make(chan seen, 2)
	record := func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Authorization"), r.URL.Query().Get("api_key")}
	}
	elsewhere := httptest.NewServer(http.HandlerFunc(record))
	defer elsewhere.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(w, r)
		http.Redirect(w, r, elsewhere.URL+"/landing?x=1", http.StatusTemporaryRedirect)
	}))
	defer origin.Close()
	u, err := url.Parse(origin.URL)
	require.NoError(t, err)
	ms := &mountSecrets{origin: &url.URL{Scheme: u.Scheme, Host: u.Host},
		headers: http.Header{"Authorization": {"Bearer tok-0123456789"}}, query: url.Values{"api_key": {"key-0123456789"}}}
	client := &http.Client{Transport: secretTransport{base: http.DefaultTransport, secrets: ms}}
	resp, err := client.Get(origin.URL + "/mcp?v=2")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, seen{"Bearer tok-0123456789", "key-0123456789"}, <-got, "the origin gets them")
	assert.Equal(t, seen{}, <-got, "the redirect's target gets none")
}
