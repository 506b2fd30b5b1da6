package mcp_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
)

const testResource = "https://mcp.example.test/mcp"

// signer signs test tokens with a fresh key.
type signer struct {
	method jwt.SigningMethod
	key    crypto.Signer
	kid    string
}

func newRSASigner(t *testing.T, kid string) signer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return signer{jwt.SigningMethodRS256, key, kid}
}

func newECSigner(t *testing.T, kid string) signer {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return signer{jwt.SigningMethodES256, key, kid}
}

func (s signer) token(t *testing.T, claims jwt.MapClaims) string {
	tok := jwt.NewWithClaims(s.method, claims)
	if s.kid != "" {
		tok.Header["kid"] = s.kid
	}
	signed, err := tok.SignedString(s.key)
	require.NoError(t, err)
	return signed
}

// jwk is the signer's public key as a JSON Web Key.
func (s signer) jwk() map[string]any {
	b64 := base64.RawURLEncoding.EncodeToString
	switch pub := s.key.Public().(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": s.kid, "use": "sig", "n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes())}
	case *ecdsa.PublicKey:
		raw, _ := pub.Bytes() // 0x04 || X || Y
		return map[string]any{"kty": "EC", "kid": s.kid, "crv": "P-256", "x": b64(raw[1:33]), "y": b64(raw[33:])}
	}
	panic("unknown key")
}

func validClaims() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"sub": "alice", "aud": testResource, "iss": "https://id.example.test",
		"exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix(), "iat": now.Unix(), "scope": "tools"}
}

// JWT access tokens are verified against a JWKS (RS256 and ES256 keys) or static keys: the valid
// one passes with its subject as UserID; expired, not yet valid, wrong audience or issuer, a bad
// signature, an unknown key, an HMAC token and a token without subject are ErrInvalidToken.
func TestJWTVerifier(t *testing.T) {
	rsaSigner, ecSigner := newRSASigner(t, "rsa-1"), newECSigner(t, "ec-1")
	other := newRSASigner(t, "rsa-1") // same kid, another key: a forged signature
	jwks, err := json.Marshal(map[string]any{"keys": []any{rsaSigner.jwk(), ecSigner.jwk()}})
	require.NoError(t, err)
	fetches := 0
	jwksServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches++
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(jwksServer.Close)

	byJWKS, err := mcp.JWTVerifier(mcp.JWTOptions{Audience: testResource, Issuer: "https://id.example.test", JWKSURL: jwksServer.URL})
	require.NoError(t, err)
	byKey, err := mcp.JWTVerifier(mcp.JWTOptions{Audience: testResource, Keys: []crypto.PublicKey{ecSigner.key.Public()}})
	require.NoError(t, err)

	with := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := validClaims()
		edit(c)
		return c
	}
	hmac := jwt.NewWithClaims(jwt.SigningMethodHS256, validClaims())
	hmacToken, err := hmac.SignedString([]byte("a shared secret nobody configured"))
	require.NoError(t, err)
	for _, tt := range []struct {
		name     string
		verifier auth.TokenVerifier
		token    string
		wantErr  string
	}{
		{"valid RS256 by JWKS", byJWKS, rsaSigner.token(t, validClaims()), ""},
		{"valid ES256 by JWKS", byJWKS, ecSigner.token(t, validClaims()), ""},
		{"valid ES256 by static key", byKey, ecSigner.token(t, validClaims()), ""},
		{"audience in a list", byJWKS, rsaSigner.token(t, with(func(c jwt.MapClaims) { c["aud"] = []string{"other", testResource} })), ""},
		{"expired", byJWKS, rsaSigner.token(t, with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })), "expired"},
		{"no exp", byJWKS, rsaSigner.token(t, with(func(c jwt.MapClaims) { delete(c, "exp") })), "exp"},
		{"not yet valid", byJWKS, rsaSigner.token(t, with(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })), "not valid yet"},
		{"wrong audience", byJWKS, rsaSigner.token(t, with(func(c jwt.MapClaims) { c["aud"] = "https://other.example.test/mcp" })), "aud"},
		{"wrong issuer", byJWKS, rsaSigner.token(t, with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.test" })), "iss"},
		{"no subject", byJWKS, rsaSigner.token(t, with(func(c jwt.MapClaims) { delete(c, "sub") })), "subject"},
		{"bad signature", byJWKS, other.token(t, validClaims()), "signature"},
		{"unknown key", byJWKS, newRSASigner(t, "rsa-2").token(t, validClaims()), "kid"},
		{"key not configured", byKey, rsaSigner.token(t, validClaims()), "invalid"},
		{"HMAC refused", byJWKS, hmacToken, "signing method"},
		{"garbage", byJWKS, "not.a.jwt", "malformed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info, err := tt.verifier(t.Context(), tt.token, nil)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, auth.ErrInvalidToken)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "alice", info.UserID)
			assert.False(t, info.Expiration.IsZero())
		})
	}
	assert.LessOrEqual(t, fetches, 2, "the JWKS is fetched on first use and refetched at most once a minute")
}

// An authenticated HTTP handler answers 401 with WWW-Authenticate naming the protected-resource
// metadata to a request without a token, with a wrong one, an expired one or one for another
// audience, also with "Host: localhost" (a LAN peer); it serves a valid token; the metadata
// names the resource and authorization server. The static token verifier compares exactly.
func TestHTTPHandlerRequiresBearerToken(t *testing.T) {
	s := newRSASigner(t, "k")
	verifier, err := mcp.JWTVerifier(mcp.JWTOptions{Audience: testResource, Keys: []crypto.PublicKey{s.key.Public()}})
	require.NoError(t, err)
	opts := mcp.HTTPOptions{Verifier: verifier, Resource: testResource}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.HTTPHandler(mcp.NewServer(nil, nil, mcp.Options{}), opts))
	metadata, err := mcp.ProtectedResourceHandler(opts, []string{"https://id.example.test"})
	require.NoError(t, err)
	mux.Handle(mcp.ProtectedResourcePath+"/mcp", metadata)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	expired := validClaims()
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	wrongAud := validClaims()
	wrongAud["aud"] = "https://other.example.test/mcp"
	challenge := `Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"`
	invalid := challenge + `, error="invalid_token", error_description="The access token is invalid or expired"`
	for _, tt := range []struct {
		name, authorization string
		want                int
		wantChallenge       string
	}{
		{"missing", "", http.StatusUnauthorized, challenge},
		{"not bearer", "Basic YWxpY2U6cHc=", http.StatusUnauthorized, challenge},
		{"bad signature", "Bearer " + newRSASigner(t, "k").token(t, validClaims()), http.StatusUnauthorized, invalid},
		{"expired", "Bearer " + s.token(t, expired), http.StatusUnauthorized, invalid},
		{"wrong audience", "Bearer " + s.token(t, wrongAud), http.StatusUnauthorized, invalid},
		{"valid", "Bearer " + s.token(t, validClaims()), http.StatusOK, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := postInitialize(t, srv.URL+"/mcp", "localhost", tt.authorization)
			assert.Equal(t, tt.want, resp.StatusCode)
			assert.Equal(t, tt.wantChallenge, resp.Header.Get("WWW-Authenticate"))
		})
	}

	resp, err := http.Get(srv.URL + mcp.ProtectedResourcePath + "/mcp")
	require.NoError(t, err)
	defer resp.Body.Close()
	var meta map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&meta))
	assert.Equal(t, testResource, meta["resource"])
	assert.Equal(t, []any{"https://id.example.test"}, meta["authorization_servers"])

	// A static token (no resource metadata, so no OAuth to start): every 401 says why, so a client
	// such as the Inspector shows the reason (RFC 6750 error and error_description; issue 34).
	staticVerifier, err := mcp.StaticTokenVerifier("0123456789abcdef-static")
	require.NoError(t, err)
	staticSrv := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(nil, nil, mcp.Options{}), mcp.HTTPOptions{Verifier: staticVerifier}))
	t.Cleanup(staticSrv.Close)
	for _, tt := range []struct {
		name, authorization, wantChallenge string
	}{
		{"static missing", "", `Bearer realm="toolgate", error="invalid_token", error_description="A bearer token is required: this server accepts a configured token, not OAuth"`},
		{"static wrong", "Bearer 0123456789abcdef-wrong", `Bearer realm="toolgate", error="invalid_token", error_description="The access token is invalid or expired"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := postInitialize(t, staticSrv.URL, "localhost", tt.authorization)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Equal(t, tt.wantChallenge, resp.Header.Get("WWW-Authenticate"))
		})
	}
	resp = postInitialize(t, staticSrv.URL, "localhost", "Bearer 0123456789abcdef-static")
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	_, err = mcp.StaticTokenVerifier("short")
	require.Error(t, err, "a guessable static token is refused")
	static, err := mcp.StaticTokenVerifier("0123456789abcdef-token\n")
	require.NoError(t, err)
	info, err := static(t.Context(), "0123456789abcdef-token", nil)
	require.NoError(t, err, "the file's trailing newline is not part of the token")
	assert.Equal(t, mcp.StaticTokenPrincipal, info.UserID)
	_, err = static(t.Context(), "0123456789abcdef-tokeN", nil)
	require.ErrorIs(t, err, auth.ErrInvalidToken)
}

// postInitialize POSTs an initialize request with the Host and Authorization headers given.
func postInitialize(t *testing.T, url, host, authorization string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}
