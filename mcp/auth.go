package mcp

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Authorization of the streamable HTTP transport, as the MCP specification's authorization
// section has it for an HTTP server: the server is an OAuth 2.1 resource server. Every request
// carries "Authorization: Bearer <token>"; a TokenVerifier (JWTVerifier, StaticTokenVerifier)
// checks it, and a request without a valid token gets 401 with a WWW-Authenticate header naming
// the protected-resource metadata (RFC 9728), which ProtectedResourceHandler serves.
//
// The verified token's principal (PrincipalOf) owns the calls and tasks it creates: see
// HTTPOptions.Verifier and the package documentation.

// DefaultJWTLeeway is the clock skew JWTVerifier allows on exp, nbf and iat.
const DefaultJWTLeeway = 30 * time.Second

// jwtAlgorithms are the signing algorithms JWTVerifier accepts: RSA (PKCS#1 v1.5 and PSS) and
// ECDSA. Never "none" or an HMAC one (a public key must not double as a shared secret).
var jwtAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

// JWTOptions configure JWTVerifier.
type JWTOptions struct {
	// Audience is this server's resource identifier (its canonical URL, e.g.
	// "https://mcp.example.com/mcp"): a token's aud must contain it. Required.
	Audience string
	// Issuer, when set, must equal the token's iss. Optional: default any issuer.
	Issuer string
	// Keys verify signatures. Exactly one of Keys and JWKSURL is required.
	Keys []crypto.PublicKey
	// JWKSURL is the authorization server's JSON Web Key Set; it is fetched on first use and
	// again (at most every JWKSRefresh) when a token names a key ID it lacks.
	JWKSURL string
	// HTTPClient fetches JWKSURL. Optional: default a client with a 10 s timeout.
	HTTPClient *http.Client
	// Leeway is the clock skew allowed on exp, nbf and iat. Optional: default DefaultJWTLeeway.
	Leeway time.Duration
}

// jwksRefresh is the least time between two fetches of a JWKS; jwksRetry after a failed one;
// jwksFetchTimeout bounds one.
const (
	jwksRefresh      = time.Minute
	jwksRetry        = 5 * time.Second
	jwksFetchTimeout = 10 * time.Second
)

// maxJWKSBytes bounds a JWKS response.
const maxJWKSBytes = 1 << 20

// JWTVerifier returns a verifier of JWT access tokens (RFC 9068 style): the signature (RS*, PS*,
// ES*) by one of opts.Keys or of the JWKS at opts.JWKSURL, exp (required) and nbf with
// opts.Leeway, aud containing opts.Audience, iss when opts.Issuer is set, and a non-empty sub.
// The TokenInfo's UserID is the subject, Extra["iss"] the issuer, Extra[TokenClaimsExtra] all the
// claims (the principal's groups, tenant and name: PrincipalClaims), Scopes the "scope" claim.
func JWTVerifier(opts JWTOptions) (auth.TokenVerifier, error) {
	if opts.Audience == "" {
		return nil, errors.New("JWT verifier: an audience (this server's resource URL) is required")
	}
	if (len(opts.Keys) == 0) == (opts.JWKSURL == "") {
		return nil, errors.New("JWT verifier: exactly one of public keys and a JWKS URL is required")
	}
	if opts.Leeway <= 0 {
		opts.Leeway = DefaultJWTLeeway
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	keys := &keySet{static: opts.Keys, url: opts.JWKSURL, http: opts.HTTPClient}
	parserOpts := []jwt.ParserOption{
		jwt.WithValidMethods(jwtAlgorithms),
		jwt.WithAudience(opts.Audience),
		jwt.WithLeeway(opts.Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	}
	if opts.Issuer != "" {
		parserOpts = append(parserOpts, jwt.WithIssuer(opts.Issuer))
	}
	parser := jwt.NewParser(parserOpts...)
	return func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		var claims struct {
			jwt.RegisteredClaims
			Scope string `json:"scope"`
		}
		_, err := parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
			kid, _ := t.Header["kid"].(string)
			return keys.find(ctx, kid)
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		if claims.Subject == "" {
			return nil, fmt.Errorf("%w: token has no subject", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{
			UserID:     claims.Subject,
			Scopes:     strings.Fields(claims.Scope),
			Expiration: claims.ExpiresAt.Time,
			Extra:      map[string]any{"iss": claims.Issuer, TokenClaimsExtra: TokenClaims(token)},
		}, nil
	}, nil
}

// keySet finds a token's verification keys: the static ones, or a JWKS fetched and refreshed.
type keySet struct {
	static []crypto.PublicKey
	url    string
	http   *http.Client

	mu      sync.Mutex
	fetched time.Time
	byKID   map[string]crypto.PublicKey
	all     []crypto.PublicKey
}

// find returns the key for kid: with static keys (or a kid-less token) every candidate as a
// jwt.VerificationKeySet; with a JWKS the key with that kid, refetching once if it is unknown.
func (k *keySet) find(ctx context.Context, kid string) (any, error) {
	if k.url == "" {
		return verificationSet(k.static), nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if key, ok := k.byKID[kid]; ok && kid != "" {
		return key, nil
	}
	// Refetch for an unknown kid at most every jwksRefresh; after a failed fetch, at most every
	// jwksRetry (a JWKS that is down is not hammered by every request).
	if since := time.Since(k.fetched); since >= jwksRefresh || (k.byKID == nil && since >= jwksRetry) {
		// Detached from the request: a client that goes away must not spoil the fetch for all.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksFetchTimeout)
		err := k.fetch(fctx)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	if k.byKID == nil {
		return nil, errors.New("no JWKS fetched yet")
	}
	if kid == "" {
		return verificationSet(k.all), nil
	}
	if key, ok := k.byKID[kid]; ok {
		return key, nil
	}
	return nil, fmt.Errorf("no key with kid %q in the JWKS", kid)
}

func verificationSet(keys []crypto.PublicKey) jwt.VerificationKeySet {
	set := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, len(keys))}
	for i, key := range keys {
		set.Keys[i] = key
	}
	return set
}

// fetch reads the JWKS; k.mu is held. A failed fetch keeps the keys it had.
func (k *keySet) fetch(ctx context.Context) error {
	k.fetched = time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return err
	}
	resp, err := k.http.Do(req)
	if err != nil {
		return fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch JWKS: %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return fmt.Errorf("fetch JWKS: %w", err)
	}
	byKID, all, err := ParseJWKS(data)
	if err != nil {
		return err
	}
	k.byKID, k.all = byKID, all
	return nil
}

// jwk is the members of a JSON Web Key (RFC 7517) ParseJWKS reads.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// ParseJWKS returns the RSA and EC public keys of a JSON Web Key Set, by key ID and all of them.
// Keys of other types, or for use other than "sig", are skipped.
func ParseJWKS(data []byte) (map[string]crypto.PublicKey, []crypto.PublicKey, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, nil, fmt.Errorf("parse JWKS: %w", err)
	}
	byKID := map[string]crypto.PublicKey{}
	var all []crypto.PublicKey
	for _, key := range set.Keys {
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		pub, err := key.publicKey()
		if err != nil {
			return nil, nil, fmt.Errorf("parse JWKS key %q: %w", key.Kid, err)
		}
		if pub == nil {
			continue
		}
		all = append(all, pub)
		if key.Kid != "" {
			byKID[key.Kid] = pub
		}
	}
	return byKID, all, nil
}

func (key jwk) publicKey() (crypto.PublicKey, error) {
	b64 := base64.RawURLEncoding
	switch key.Kty {
	case "RSA":
		n, err := b64.DecodeString(key.N)
		if err != nil {
			return nil, fmt.Errorf("n: %w", err)
		}
		e, err := b64.DecodeString(key.E)
		if err != nil {
			return nil, fmt.Errorf("e: %w", err)
		}
		exp := new(big.Int).SetBytes(e)
		if !exp.IsInt64() || exp.Int64() < 3 || exp.Int64() > 1<<31 {
			return nil, errors.New("bad RSA exponent")
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch key.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, fmt.Errorf("unsupported curve %q", key.Crv)
		}
		x, err := b64.DecodeString(key.X)
		if err != nil {
			return nil, fmt.Errorf("x: %w", err)
		}
		y, err := b64.DecodeString(key.Y)
		if err != nil {
			return nil, fmt.Errorf("y: %w", err)
		}
		size := (curve.Params().BitSize + 7) / 8
		if len(x) != size || len(y) != size {
			return nil, errors.New("bad EC coordinate length")
		}
		// Through the uncompressed encoding, which checks the point is on the curve.
		point := append([]byte{4}, append(x, y...)...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return nil, err
		}
		return pub, nil
	}
	return nil, nil
}

// ParsePublicKeysPEM returns the public keys (PKIX "PUBLIC KEY" blocks, or certificates) of PEM
// data, for JWTOptions.Keys.
func ParsePublicKeysPEM(data []byte) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		switch block.Type {
		case "PUBLIC KEY":
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, err
			}
			keys = append(keys, pub)
		case "CERTIFICATE":
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, err
			}
			keys = append(keys, cert.PublicKey)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no PUBLIC KEY or CERTIFICATE block in the PEM data")
	}
	return keys, nil
}

// StaticTokenPrincipal is the principal of every holder of a StaticTokenVerifier's token.
const StaticTokenPrincipal = "static-token"

// staticTokenLifetime is the Expiration a static token's TokenInfo carries (the SDK's middleware
// requires one): a static token never expires, so it is always a moment ahead.
const staticTokenLifetime = time.Hour

// StaticTokenVerifier returns a verifier accepting exactly token (compared in constant time), for
// small setups; read it from a file, never from argv. Its holders are one principal,
// StaticTokenPrincipal. A token shorter than 16 bytes is refused.
func StaticTokenVerifier(token string) (auth.TokenVerifier, error) {
	token = strings.TrimSpace(token)
	if len(token) < 16 {
		return nil, errors.New("static bearer token: at least 16 characters required")
	}
	want := sha256.Sum256([]byte(token))
	return func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: StaticTokenPrincipal, Expiration: time.Now().Add(staticTokenLifetime)}, nil
	}, nil
}
