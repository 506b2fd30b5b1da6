package credentials

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/codec"
)

// Errors of the stores, in every message naming what to do.
var (
	// ErrNoKeyring is the error of a store given neither a keyring nor InsecurePlaintext: tokens
	// are never written in plaintext by default.
	ErrNoKeyring = errors.New("credentials store: no keyring: give it the codec keys (--codec-key), or, for development only, allow plaintext")
	// ErrPlaintextRow is the error of reading a row stored in plaintext (by a development store)
	// with a store that encrypts: it is refused rather than trusted. Revoke it and consent again.
	ErrPlaintextRow = errors.New("stored in plaintext but this store encrypts: revoke it (toolgate credentials revoke) and consent again")
)

// Row kinds, the first field of a sealed value's additional data.
const (
	kindToken   = "token"
	kindPending = "pending"
)

// plaintextKeyID is the key ID column of a row stored in plaintext (InsecurePlaintext): no key ID
// is empty.
const plaintextKeyID = ""

// sealer seals the secret field of every row: with keys when set, else (plaintext true) not at
// all. Each seal is bound to its row: kind and the row's fields are the additional data, so a
// ciphertext copied to another principal, provider or state fails to open.
type sealer struct {
	keys      codec.KeySource // nil: plaintext
	plaintext bool
}

// check refuses a sealer with neither keys nor plaintext allowed.
func (s sealer) check() error {
	if s.keys == nil && !s.plaintext {
		return ErrNoKeyring
	}
	return nil
}

// seal returns the key ID and the sealed form of plain for the row (kind, fields...).
func (s sealer) seal(plain []byte, kind string, fields ...string) (keyID string, sealed []byte, err error) {
	if err := s.check(); err != nil {
		return "", nil, err
	}
	if s.keys == nil {
		return plaintextKeyID, plain, nil
	}
	return codec.Seal(s.keys, plain, rowAAD(kind, fields...))
}

// open returns the plain form of sealed, which keyID sealed for the row (kind, fields...).
func (s sealer) open(keyID string, sealed []byte, kind string, fields ...string) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if keyID == plaintextKeyID {
		if s.keys != nil {
			return nil, ErrPlaintextRow
		}
		return sealed, nil
	}
	if s.keys == nil {
		return nil, fmt.Errorf("sealed with key %q but this store has no keyring: give it the codec keys (--codec-key)", keyID)
	}
	plain, err := codec.Open(s.keys, keyID, sealed, rowAAD(kind, fields...))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", kind, err)
	}
	return plain, nil
}

// rowAAD is "toolgate-credentials/1", kind and fields, each length-prefixed so no two rows'
// fields can spell the same bytes.
func rowAAD(kind string, fields ...string) []byte {
	out := []byte("toolgate-credentials/1")
	for _, f := range append([]string{kind}, fields...) {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return out
}

// Bounds of what a store takes in: a key longer than these is refused, a stored row larger than
// maxRowBytes is not read.
const (
	maxPrincipalBytes = 1024
	maxProviderBytes  = 256
	maxStateBytes     = 512
	maxRowBytes       = 256 << 10
)

// checkKey refuses an empty or oversized principal or provider.
func checkKey(principal, provider string) error {
	switch {
	case principal == "" || len(principal) > maxPrincipalBytes:
		return fmt.Errorf("principal: want 1 to %d bytes, got %d", maxPrincipalBytes, len(principal))
	case provider == "" || len(provider) > maxProviderBytes:
		return fmt.Errorf("provider: want 1 to %d bytes, got %d", maxProviderBytes, len(provider))
	case strings.ContainsRune(principal+provider, 0):
		return errors.New("principal or provider holds a NUL byte")
	}
	return nil
}

// checkPending refuses a pending consent without an expiry or with a bad state.
func checkPending(p Pending) error {
	if p.Expires.IsZero() {
		return errors.New("pending consent: no expiry")
	}
	return checkState(p.State)
}

// checkState refuses an empty or oversized consent state.
func checkState(state string) error {
	if state == "" || len(state) > maxStateBytes {
		return fmt.Errorf("consent state: want 1 to %d bytes, got %d", maxStateBytes, len(state))
	}
	if strings.ContainsRune(state, 0) {
		return errors.New("consent state holds a NUL byte")
	}
	return nil
}

// sealToken returns the key ID and sealed JSON of t, bound to principal and provider.
func (s sealer) sealToken(principal, provider string, t Token) (string, []byte, error) {
	plain, err := json.Marshal(t)
	if err != nil {
		return "", nil, fmt.Errorf("encode token: %w", err)
	}
	return s.seal(plain, kindToken, principal, provider)
}

// openToken returns the token keyID sealed for principal and provider.
func (s sealer) openToken(principal, provider, keyID string, sealed []byte) (Token, error) {
	plain, err := s.open(keyID, sealed, kindToken, principal, provider)
	if err != nil {
		return Token{}, err
	}
	var t Token
	if err := json.Unmarshal(plain, &t); err != nil {
		return Token{}, fmt.Errorf("decode token: %w", err)
	}
	return t, nil
}

// sealVerifier returns the key ID and sealed verifier of p, bound to its state, principal and
// provider.
func (s sealer) sealVerifier(p Pending) (string, []byte, error) {
	return s.seal([]byte(p.Verifier), kindPending, p.State, p.Principal, p.Provider)
}

// openVerifier returns the verifier keyID sealed for p's state, principal and provider.
func (s sealer) openVerifier(p Pending, keyID string, sealed []byte) (string, error) {
	plain, err := s.open(keyID, sealed, kindPending, p.State, p.Principal, p.Provider)
	if err != nil {
		return "", err
	}
	return string(plain), nil
}

// entryOf is what List shows of t, stored for principal at provider sealed with keyID.
func entryOf(principal, provider, keyID string, t Token) Entry {
	return Entry{
		Principal:   principal,
		Provider:    provider,
		Scopes:      t.Scopes,
		Expiry:      t.Expiry.UTC(),
		Obtained:    t.Obtained.UTC(),
		Refreshable: t.RefreshToken != "",
		KeyID:       keyID,
	}
}

// sortEntries orders entries by principal, then provider.
func sortEntries(entries []Entry) {
	slices.SortFunc(entries, func(a, b Entry) int {
		return cmp.Or(strings.Compare(a.Principal, b.Principal), strings.Compare(a.Provider, b.Provider))
	})
}

// sortPending orders pending consents by expiry, then state.
func sortPending(out []Pending) {
	slices.SortFunc(out, func(a, b Pending) int {
		return cmp.Or(a.Expires.Compare(b.Expires), strings.Compare(a.State, b.State))
	})
}

// nilIfEmpty is list, nil when empty: a row read back equals the one written.
func nilIfEmpty(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return list
}
