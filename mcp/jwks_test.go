package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
)

// requestFrom is a request from remote, as a verifier sees it.
func requestFrom(remote string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.RemoteAddr = remote
	return r
}

// While a JWKS refetch for unknown-kid tokens hangs on a slow authorization server, a token whose
// kid is cached is verified at once; one caller's 20 unknown-kid tokens cause one fetch (those
// that arrive while it runs wait for it, later ones are paced); once it ends, an unknown kid from
// another caller refetches, and that caller's next one does not.
func TestJWKSRefetchNeverBlocksCachedKeys(t *testing.T) {
	known := newRSASigner(t, "known")
	bogus := newRSASigner(t, "bogus") // a valid signature, a kid the JWKS lacks
	jwks, err := json.Marshal(map[string]any{"keys": []any{known.jwk()}})
	require.NoError(t, err)
	var fetches atomic.Int32
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	jwksServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if fetches.Add(1) > 1 {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release // the slow authorization server
		}
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(jwksServer.Close)
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

	// No pause between fetches for all callers, an hour for each: only per-caller pacing limits.
	verify, err := mcp.JWTVerifierPaced(mcp.JWTOptions{Audience: testResource, JWKSURL: jwksServer.URL}, 0, time.Hour)
	require.NoError(t, err)
	cached := known.token(t, validClaims())
	_, err = verify(t.Context(), cached, requestFrom("10.0.0.1:1000"))
	require.NoError(t, err, "the first fetch caches the known kid")

	unknown := bogus.token(t, validClaims())
	results := make(chan error, 20)
	for i := range 20 {
		go func() {
			_, err := verify(t.Context(), unknown, requestFrom(fmt.Sprintf("10.0.1.1:%d", 1000+i)))
			results <- err
		}()
	}
	<-entered // the refetch is in flight, and hangs

	done := make(chan error, 1)
	go func() {
		_, err := verify(t.Context(), cached, requestFrom("10.0.0.2:1000"))
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute): // a guard against a hang, not a timing assertion
		t.Fatal("a cached-kid token waited for the JWKS refetch")
	}
	assert.EqualValues(t, 2, fetches.Load(), "the unknown-kid tokens in flight share one fetch")

	releaseOnce.Do(func() { close(release) })
	for range 20 {
		err := <-results
		require.ErrorIs(t, err, auth.ErrInvalidToken)
		assert.Contains(t, err.Error(), "kid")
	}
	assert.EqualValues(t, 2, fetches.Load())

	_, err = verify(t.Context(), unknown, requestFrom("10.0.2.1:1000"))
	require.ErrorIs(t, err, auth.ErrInvalidToken)
	assert.EqualValues(t, 3, fetches.Load(), "a new caller's unknown kid refetches")
	_, err = verify(t.Context(), unknown, requestFrom("10.0.2.1:2000"))
	require.ErrorIs(t, err, auth.ErrInvalidToken)
	assert.EqualValues(t, 3, fetches.Load(), "the same caller (another port) does not refetch again")
}

// A token naming an unknown kid while the JWKS cannot be fetched gets a 401 whose body and
// headers hold no URL (the JWKS URL's ?apikey= least of all) and only what the MCP spec asks:
// WWW-Authenticate with resource_metadata, error="invalid_token" and a fixed description. The
// reason goes to the server's log, the JWKS URL's query redacted.
func TestUnauthorizedBodyHoldsNoURL(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	jwksURL := gone.URL + "/jwks.json?apikey=secret-api-key-42"
	gone.Close() // every fetch fails with a transport error naming the URL

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	verifier, err := mcp.JWTVerifier(mcp.JWTOptions{Audience: testResource, JWKSURL: jwksURL, Logger: logger})
	require.NoError(t, err)
	srv := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(nil, nil, mcp.Options{}),
		mcp.HTTPOptions{Verifier: verifier, Resource: testResource, Logger: logger}))
	t.Cleanup(srv.Close)

	metadata := `resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"`
	for _, tt := range []struct {
		name, authorization, wantChallenge string
	}{
		{"a well-formed JWT", "Bearer " + newRSASigner(t, "k").token(t, validClaims()),
			`Bearer ` + metadata + `, error="invalid_token", error_description="The access token is invalid or expired"`},
		{"garbage", "Bearer not.a.jwt",
			`Bearer ` + metadata + `, error="invalid_token", error_description="The access token is invalid or expired"`},
		{"no token", "", `Bearer ` + metadata},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if tt.authorization != "" {
				req.Header.Set("Authorization", tt.authorization)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Equal(t, "Unauthorized: a valid bearer token is required\n", string(body))
			assert.Equal(t, tt.wantChallenge, resp.Header.Get("WWW-Authenticate"))
			for name, values := range resp.Header {
				for _, v := range values {
					assert.NotContains(t, v, "apikey", name)
					assert.NotContains(t, v, "jwks", name)
					assert.NotContains(t, v, "127.0.0.1", name)
				}
			}
		})
	}
	assert.Contains(t, logs.String(), "fetch JWKS http://127.0.0.1", "the reason is logged")
	assert.Contains(t, logs.String(), "jwks.json?apikey=REDACTED")
	assert.NotContains(t, logs.String(), "secret-api-key-42", "the JWKS URL's query is redacted in the log")
}
