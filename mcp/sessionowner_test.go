package mcp

import (
	"bufio"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stateful session belongs to the full principal (issuer and subject) of the initialize that
// created it. With two issuers trusted (a JWT verifier without an issuer), a token of the other
// issuer with the same sub, which go-sdk alone would let in (it compares subjects), is refused
// 403 like another subject on every request naming the session: a POST, the standalone GET, a
// resumption with Last-Event-ID and a DELETE; the session is untouched and its owner is served.
// The entry goes with the session: DELETE, SessionTimeout, and a POST without session that is
// not an initialize (go-sdk closes the session it made) leave none.
func TestSessionBelongsToItsFullPrincipal(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	const audience = "https://mcp.example.test/mcp"
	verifier, err := JWTVerifier(JWTOptions{Audience: audience, Keys: []crypto.PublicKey{key.Public()}})
	require.NoError(t, err)
	token := func(iss, sub string) string {
		now := time.Now()
		signed, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": iss, "sub": sub, "aud": audience,
			"exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}).SignedString(key)
		require.NoError(t, err)
		return signed
	}
	alice, aliceElsewhere, bob := token("https://a.example.test", "alice"), token("https://b.example.test", "alice"), token("https://a.example.test", "bob")

	server := sdk.NewServer(&sdk.Implementation{Name: "owners", Version: "1"}, nil)
	// hold answers once released: its stream outlives primeHold, so it opens with a priming
	// event whose ID a resumption names (a quick answer is plain JSON, without one).
	release := make(chan struct{})
	sdk.AddTool(server, &sdk.Tool{Name: "hold"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "released"}}}, nil, nil
		})
	handler, owners := httpHandler(server, HTTPOptions{Verifier: verifier})
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	initialize := func(token string) (session string) {
		resp := rawRequest(t, ts.URL, http.MethodPost, token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		// Read the answer to its end: go-sdk closes a session whose initialize had no answer yet
		// when its request goes.
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		session = resp.Header.Get("Mcp-Session-Id")
		require.NotEmpty(t, session)
		resp = rawRequest(t, ts.URL, http.MethodPost, token, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusAccepted, resp.StatusCode)
		return session
	}
	// primedCall calls hold in session and returns the ID of its stream's priming event, once the
	// call was released and answered.
	primedCall := func(token, session string) string {
		resp := rawRequest(t, ts.URL, http.MethodPost, token, session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hold","arguments":{}}}`)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		body := bufio.NewReader(resp.Body)
		prime, err := ReadSSEEvent(body)
		require.NoError(t, err)
		require.NotEmpty(t, prime.ID, "a held call's stream opens with a priming event")
		release <- struct{}{}
		_, err = io.Copy(io.Discard, body)
		require.NoError(t, err)
		return prime.ID
	}
	status := func(method, token, session, body string, header ...string) int {
		resp := rawRequest(t, ts.URL, method, token, session, body, header...)
		if method != http.MethodGet {
			// Read the answer to its end: go-sdk holds a request's ID in flight until it has
			// written the answer, and refuses the next ping reusing it meanwhile (400).
			_, err := io.Copy(io.Discard, resp.Body)
			require.NoError(t, err)
		}
		require.NoError(t, resp.Body.Close()) // a GET undrained: a standalone stream served would not end
		return resp.StatusCode
	}
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

	session := initialize(alice)
	owner, ok := owners.ownerOf(session)
	require.True(t, ok, "the session has its owner from its first answer on")
	assert.Equal(t, "https://a.example.test\nalice", owner)
	primeID := primedCall(alice, session)
	for _, other := range []struct{ name, token string }{
		{"the same subject under another issuer", aliceElsewhere},
		{"another subject", bob},
	} {
		t.Run(other.name, func(t *testing.T) {
			assert.Equal(t, http.StatusForbidden, status(http.MethodPost, other.token, session, ping), "a request")
			assert.Equal(t, http.StatusForbidden, status(http.MethodGet, other.token, session, ""), "the standalone stream")
			assert.Equal(t, http.StatusForbidden, status(http.MethodGet, other.token, session, "", "Last-Event-ID", primeID), "a resumption")
			assert.Equal(t, http.StatusForbidden, status(http.MethodDelete, other.token, session, ""), "a DELETE")
			assert.Equal(t, http.StatusOK, status(http.MethodPost, alice, session, ping), "the session is untouched, its owner served")
		})
	}
	assert.Equal(t, http.StatusOK, status(http.MethodGet, alice, session, "", "Last-Event-ID", primeID), "the owner resumes")

	// The entry goes with the session, however it ends.
	other := initialize(aliceElsewhere)
	require.Equal(t, 2, owners.count())
	assert.Equal(t, http.StatusForbidden, status(http.MethodPost, alice, other, ping), "each issuer's alice owns her session")
	require.Equal(t, http.StatusNoContent, status(http.MethodDelete, alice, session, ""))
	assert.Equal(t, http.StatusNotFound, status(http.MethodPost, alice, session, ping), "the deleted session is gone")
	require.Eventually(t, func() bool { _, ok := owners.ownerOf(session); return !ok }, 10*time.Second, time.Millisecond, "DELETE removes the entry")
	require.Equal(t, http.StatusOK, status(http.MethodPost, aliceElsewhere, "", ping), "a ping without session is answered")
	require.Eventually(t, func() bool { return owners.count() == 1 }, 10*time.Second, time.Millisecond,
		"the session made for a request that is not an initialize closes, and its entry goes")
	_, ok = owners.ownerOf(other)
	assert.True(t, ok, "the live session keeps its owner")

	// SessionTimeout: a session idle past it closes, and its entry goes.
	handler, owners = httpHandler(server, HTTPOptions{Verifier: verifier, SessionTimeout: time.Millisecond})
	ts2 := httptest.NewServer(handler)
	t.Cleanup(ts2.Close)
	resp := rawRequest(t, ts2.URL, http.MethodPost, alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	expired := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, expired)
	require.Eventually(t, func() bool { _, ok := owners.ownerOf(expired); return !ok }, 10*time.Second, time.Millisecond,
		"the expired session's entry goes")
}
