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
	"log/slog"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
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
	// again when a token names a key ID it lacks: at most every 10 s, and at most once a minute
	// for each caller (remote address). A token whose key is cached never waits for a fetch.
	JWKSURL string
	// HTTPClient fetches JWKSURL. Optional: default a client with a 10 s timeout.
	HTTPClient *http.Client
	// Leeway is the clock skew allowed on exp, nbf and iat. Optional: default DefaultJWTLeeway.
	Leeway time.Duration
	// Logger logs failed JWKS fetches at Warn, the JWKS URL without its query (which may hold
	// an API key). Optional: default none.
	Logger *slog.Logger
}

// Pacing of JWKS fetches. A token naming a key ID the cached set lacks refetches the set, at most
// every jwksMinInterval (jwksRetry while no fetch has succeeded yet) and at most every
// jwksCallerInterval for each caller (remote address): a flood of bogus kids from one address
// costs the authorization server one fetch a minute, from many addresses one every 10 s.
// jwksFetchTimeout bounds one fetch.
const (
	jwksMinInterval    = 10 * time.Second
	jwksCallerInterval = time.Minute
	jwksRetry          = 5 * time.Second
	jwksFetchTimeout   = 10 * time.Second
)

// maxJWKSBytes bounds a JWKS response.
const maxJWKSBytes = 1 << 20

// JWTVerifier returns a verifier of JWT access tokens (RFC 9068 style): the signature (RS*, PS*,
// ES*) by one of opts.Keys or of the JWKS at opts.JWKSURL, exp (required) and nbf with
// opts.Leeway, aud containing opts.Audience, iss when opts.Issuer is set, and a non-empty sub.
// The TokenInfo's UserID is the subject, Extra["iss"] the issuer, Extra[TokenClaimsExtra] all the
// claims (the principal's groups, tenant and name: PrincipalClaims), Scopes the "scope" claim.
func JWTVerifier(opts JWTOptions) (auth.TokenVerifier, error) {
	return jwtVerifier(opts, nil)
}

// jwtVerifier is JWTVerifier; pace, when set, edits its key set (tests pace its fetches).
func jwtVerifier(opts JWTOptions, pace func(*keySet)) (auth.TokenVerifier, error) {
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
	keys := newKeySet(opts)
	if pace != nil {
		pace(keys)
	}
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
	return func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		var claims struct {
			jwt.RegisteredClaims
			Scope string `json:"scope"`
		}
		caller := ""
		if r != nil {
			caller = addressKey(r.RemoteAddr)
		}
		_, err := parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
			kid, _ := t.Header["kid"].(string)
			return keys.find(ctx, kid, caller)
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
//
// The fetched keys are an immutable snapshot behind an atomic pointer, replaced whole by a
// fetch: a token whose kid is cached is verified without a lock and never waits for a fetch. At
// most one fetch runs at a time, in its own goroutine and outside mu; requests that need it (an
// unknown kid, or no keys yet) wait for it or for their own context.
type keySet struct {
	static []crypto.PublicKey
	url    string
	http   *http.Client
	logger *slog.Logger
	now    func() time.Time
	// minInterval, callerInterval and retry pace fetches (jwksMinInterval, jwksCallerInterval,
	// jwksRetry).
	minInterval, callerInterval, retry time.Duration

	keys atomic.Pointer[jwksSnapshot]

	mu        sync.Mutex // guards the fields below; never held over I/O
	inflight  *jwksFetch
	lastFetch time.Time
	// callers holds when each caller last caused a refetch, pruned past callerInterval: at most
	// callerInterval/minInterval+1 entries.
	callers map[string]time.Time
}

// jwksSnapshot is one fetched JWKS, never modified.
type jwksSnapshot struct {
	byKID map[string]crypto.PublicKey
	all   []crypto.PublicKey
}

// jwksFetch is one fetch in flight: done closes when err is set.
type jwksFetch struct {
	done chan struct{}
	err  error
}

func newKeySet(opts JWTOptions) *keySet {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &keySet{static: opts.Keys, url: opts.JWKSURL, http: opts.HTTPClient, logger: logger, now: time.Now,
		minInterval: jwksMinInterval, callerInterval: jwksCallerInterval, retry: jwksRetry, callers: map[string]time.Time{}}
}

// errNoJWKS is the answer while no JWKS fetch has succeeded.
var errNoJWKS = errors.New("no JWKS fetched yet")

// find returns the key for kid: with static keys (or a kid-less token) every candidate as a
// jwt.VerificationKeySet; with a JWKS the key with that kid, refetching the set if it is unknown
// and the pacing lets caller (a remote address) cause a fetch.
func (k *keySet) find(ctx context.Context, kid, caller string) (any, error) {
	if k.url == "" {
		return verificationSet(k.static), nil
	}
	snap := k.keys.Load()
	if key, ok := snap.lookup(kid); ok {
		return key, nil
	}
	fetch := k.startFetch(caller, snap == nil)
	if fetch == nil {
		if snap == nil {
			return nil, errNoJWKS
		}
		return nil, fmt.Errorf("no key with kid %q in the JWKS", kid)
	}
	select {
	case <-fetch.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the JWKS: %w", context.Cause(ctx))
	}
	if fetch.err != nil {
		return nil, fetch.err
	}
	if key, ok := k.keys.Load().lookup(kid); ok {
		return key, nil
	}
	return nil, fmt.Errorf("no key with kid %q in the JWKS", kid)
}

// lookup returns the key for kid, or all keys for a kid-less token.
func (s *jwksSnapshot) lookup(kid string) (any, bool) {
	if s == nil {
		return nil, false
	}
	if kid == "" {
		return verificationSet(s.all), true
	}
	key, ok := s.byKID[kid]
	return key, ok
}

// startFetch returns the fetch in flight, or starts one if the pacing allows (first says no
// JWKS is held yet: then only the retry interval applies); nil if it does not.
func (k *keySet) startFetch(caller string, first bool) *jwksFetch {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.inflight != nil {
		return k.inflight
	}
	now := k.now()
	if first {
		if !k.lastFetch.IsZero() && now.Sub(k.lastFetch) < k.retry {
			return nil
		}
	} else {
		if now.Sub(k.lastFetch) < k.minInterval {
			return nil
		}
		if last, ok := k.callers[caller]; ok && now.Sub(last) < k.callerInterval {
			return nil
		}
		for c, last := range k.callers {
			if now.Sub(last) >= k.callerInterval {
				delete(k.callers, c)
			}
		}
		k.callers[caller] = now
	}
	k.lastFetch = now
	f := &jwksFetch{done: make(chan struct{})}
	k.inflight = f
	// Detached from the request: a client that goes away must not spoil the fetch for all.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), jwksFetchTimeout)
		defer cancel()
		snap, err := k.fetch(ctx)
		if err != nil {
			k.logger.Warn("JWKS fetch failed; the keys held so far stay in use", "error", err)
		}
		k.mu.Lock()
		if err == nil {
			k.keys.Store(snap)
		}
		k.inflight = nil
		k.mu.Unlock()
		f.err = err
		close(f.done)
	}()
	return f
}

func verificationSet(keys []crypto.PublicKey) jwt.VerificationKeySet {
	set := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, len(keys))}
	for i, key := range keys {
		set.Keys[i] = key
	}
	return set
}

// fetch reads the JWKS. Its errors name the URL without its query.
func (k *keySet) fetch(ctx context.Context) (*jwksSnapshot, error) {
	where := redactURL(k.url)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: bad URL", where)
	}
	resp, err := k.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL carries the query
		}
		return nil, fmt.Errorf("fetch JWKS %s: %w", where, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS %s: %s", where, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", where, err)
	}
	byKID, all, err := ParseJWKS(data)
	if err != nil {
		return nil, fmt.Errorf("JWKS %s: %w", where, err)
	}
	return &jwksSnapshot{byKID: byKID, all: all}, nil
}

// redactURL is raw for logs: without its user info and fragment, its query's values REDACTED
// (an API key may ride in one).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	redacted := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.RawQuery != "" {
		query := url.Values{}
		for key := range u.Query() {
			query.Set(key, "REDACTED")
		}
		redacted.RawQuery = query.Encode()
		if redacted.RawQuery == "" {
			redacted.RawQuery = "REDACTED"
		}
	}
	return redacted.String()
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
