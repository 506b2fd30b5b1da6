package credentials

import (
	"context"
	"time"
)

// Token is a principal's OAuth token at a provider as the store keeps it: encrypted at rest
// (AES-256-GCM with the codec keyring, bound to its principal and provider), never in history.
type Token struct {
	AccessToken  string    `json:"accessToken"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	TokenType    string    `json:"tokenType,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`
	Obtained     time.Time `json:"obtained"`
}

// Entry is what List shows of a stored token: whose, which provider, scopes and times; never the
// token.
type Entry struct {
	// Principal is toolcore.Principal.Key() of the owner ("<issuer> <subject>").
	Principal   string    `json:"principal"`
	Provider    string    `json:"provider"`
	Scopes      []string  `json:"scopes,omitempty"`
	Expiry      time.Time `json:"expiry,omitzero"`
	Obtained    time.Time `json:"obtained"`
	Refreshable bool      `json:"refreshable"`
	// KeyID is the codec key the token is sealed with; "" when it is stored in plaintext (a
	// development store with InsecurePlaintext).
	KeyID string `json:"keyId"`
}

// Pending is a consent the worker asked for and has not received yet, found by the State value
// of its authorization URL. It is single use and expires.
type Pending struct {
	State string `json:"state"`
	// Principal is toolcore.Principal.Key() of whom the consent is for.
	Principal string   `json:"principal"`
	Provider  string   `json:"provider"`
	Scopes    []string `json:"scopes,omitempty"`
	// Verifier is the PKCE code verifier: secret, encrypted at rest like a token.
	Verifier string `json:"verifier"`
	// Waiters are what to wake once the consent arrives (the waiting calls' workflow IDs).
	Waiters []string  `json:"waiters,omitempty"`
	Expires time.Time `json:"expires"`
}

// Store keeps tokens per principal and provider, and the pending consents, for every worker
// that shares it (FileStore for one machine, SQLStore on PostgreSQL for a fleet). Every method
// is safe for concurrent use, also across processes sharing the store.
type Store interface {
	// Get returns the principal's token at provider; found is false when there is none.
	Get(ctx context.Context, principal, provider string) (t Token, found bool, err error)
	// Put stores (or replaces) the principal's token at provider.
	Put(ctx context.Context, principal, provider string, t Token) error
	// Delete removes the principal's token at provider; found is false when there was none.
	Delete(ctx context.Context, principal, provider string) (found bool, err error)
	// List returns every stored token's Entry, sorted by principal and provider.
	List(ctx context.Context) ([]Entry, error)
	// Update runs fn on the principal's token at provider while holding a lock that every
	// process sharing the store respects (so a refresh with a rotating refresh token happens
	// once); fn's token is stored when store is true. It returns what fn returned.
	Update(ctx context.Context, principal, provider string, fn func(t Token, found bool) (next Token, store bool, err error)) (Token, error)
	// PutPending records p (replacing one with the same State).
	PutPending(ctx context.Context, p Pending) error
	// TakePending removes and returns the pending consent of state; found is false when there is
	// none or it expired (single use: a second take finds nothing). An expired one stays for
	// TakeWaiting (its calls still wait) until a day past its expiry.
	TakePending(ctx context.Context, state string) (p Pending, found bool, err error)
	// TakeWaiting removes and returns every pending consent of the principal at provider, expired
	// ones too, sorted by expiry (the calls to wake once one of them has been given).
	TakeWaiting(ctx context.Context, principal, provider string) ([]Pending, error)
}
