package callbacks

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds and names of the URLs.
const (
	// DefaultKeyName is the secret Options.Keys is asked for when Options.KeyName is empty.
	DefaultKeyName = "callback_key"
	// MinKeyBytes is the least a signing key may have.
	MinKeyBytes = 32
	// MaxKeys bounds the signing keys of the secret (one a line: the first seals, all open).
	MaxKeys = 8
	// MaxWorkflowIDBytes bounds the workflow ID a URL carries (Temporal's own limit).
	MaxWorkflowIDBytes = 1000
	// maxKeyBytes bounds the question's key (toolcore's keys have at most 64).
	maxKeyBytes = 255
	// tokenBytes is the random token's length: the capability the workflow checks.
	tokenBytes = 32
	// sealVersion is the first byte of a sealed segment's plaintext.
	sealVersion = 1
	// maxSegmentBytes bounds the opaque segment of a request's path (a URL minted for the
	// longest workflow ID is under it).
	maxSegmentBytes = 2048
)

// sealAAD binds a sealed segment to its use: a ciphertext made for something else under the same
// key does not open here.
var sealAAD = []byte("toolgate callback url v1")

// keyLabel derives a key's AEAD key from the key itself (HMAC-SHA256(key, keyLabel)), so a
// secret shared with another use is never used raw.
const keyLabel = "toolgate callback url key v1"

// Refusals of open. Both are answered 410 with the same text: a request learns nothing of why.
var (
	errForged  = errors.New("the callback URL does not open under any signing key")
	errExpired = errors.New("the callback URL has expired")
)

// ticket is what a URL's segment holds.
type ticket struct {
	workflowID string
	key        string
	expires    time.Time
	token      string // base64url of tokenBytes random bytes
}

// keyring is the signing keys of one secret value: the first seals, every one opens.
type keyring struct {
	value string
	aeads []cipher.AEAD
}

// keys reads the secret and returns its keyring (cached while the value stays the same).
func (e *Endpoint) keys(ctx context.Context) (*keyring, error) {
	value, err := e.opts.Keys.Secret(ctx, e.opts.KeyName)
	if err != nil {
		return nil, fmt.Errorf("read the callback signing key %q: %w", e.opts.KeyName, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ring != nil && e.ring.value == value {
		return e.ring, nil
	}
	ring, err := parseKeys(value)
	if err != nil {
		return nil, fmt.Errorf("callback signing key %q: %w", e.opts.KeyName, err)
	}
	e.ring = ring
	return ring, nil
}

// parseKeys splits value into its keys, one a line (blank lines skipped), each at least
// MinKeyBytes, at most MaxKeys of them. Errors name a line, never a key.
func parseKeys(value string) (*keyring, error) {
	ring := &keyring{value: value}
	for i, line := range strings.Split(value, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) < MinKeyBytes {
			return nil, fmt.Errorf("line %d has %d bytes, want at least %d (openssl rand -base64 32)", i+1, len(line), MinKeyBytes)
		}
		if len(ring.aeads) == MaxKeys {
			return nil, fmt.Errorf("more than %d keys", MaxKeys)
		}
		mac := hmac.New(sha256.New, []byte(line))
		mac.Write([]byte(keyLabel))
		block, err := aes.NewCipher(mac.Sum(nil))
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		ring.aeads = append(ring.aeads, aead)
	}
	if len(ring.aeads) == 0 {
		return nil, errors.New("no key (want a line of at least 32 bytes: openssl rand -base64 32)")
	}
	return ring, nil
}

// Mint returns the URL of the question key of the call of workflowID, valid for ttl: the
// endpoint's URL and an opaque segment, the SHA-256 (hex) of its token (what the question
// records), and when it expires. It implements activities.CallbackURLs.
func (e *Endpoint) Mint(ctx context.Context, workflowID, key string, ttl time.Duration) (url, tokenSHA256 string, expires time.Time, err error) {
	switch {
	case workflowID == "" || len(workflowID) > MaxWorkflowIDBytes || !utf8.ValidString(workflowID):
		return "", "", time.Time{}, fmt.Errorf("mint a callback URL: a workflow ID of 1 to %d bytes of UTF-8 is required", MaxWorkflowIDBytes)
	case key == "" || len(key) > maxKeyBytes:
		return "", "", time.Time{}, fmt.Errorf("mint a callback URL: a key of 1 to %d bytes is required", maxKeyBytes)
	case ttl <= 0:
		return "", "", time.Time{}, fmt.Errorf("mint a callback URL: ttl %s must be positive", ttl)
	}
	ring, err := e.keys(ctx)
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("mint a callback URL: %w", err)
	}
	raw := make([]byte, tokenBytes)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	t := ticket{
		workflowID: workflowID,
		key:        key,
		expires:    time.Unix(e.opts.now().Add(ttl).Unix(), 0).UTC(),
		token:      base64.RawURLEncoding.EncodeToString(raw),
	}
	sum := sha256.Sum256([]byte(t.token))
	return e.base + "/" + seal(ring.aeads[0], t, raw), hex.EncodeToString(sum[:]), t.expires, nil
}

// seal is t's opaque segment: base64url(nonce || AES-GCM(plaintext)), the plaintext being the
// version, the expiry (Unix seconds), the raw token, the key's length, the key and the
// workflow ID.
func seal(aead cipher.AEAD, t ticket, token []byte) string {
	plain := make([]byte, 0, 1+8+tokenBytes+1+len(t.key)+len(t.workflowID))
	plain = append(plain, sealVersion)
	plain = binary.BigEndian.AppendUint64(plain, uint64(t.expires.Unix()))
	plain = append(plain, token...)
	plain = append(plain, byte(len(t.key)))
	plain = append(plain, t.key...)
	plain = append(plain, t.workflowID...)
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, sealAAD))
}

// open returns the ticket of a segment: errForged unless it opens under one of the keys and is
// well formed, errExpired once its expiry has passed.
func (e *Endpoint) open(ctx context.Context, segment string) (ticket, error) {
	if len(segment) > maxSegmentBytes {
		return ticket{}, errForged
	}
	sealed, err := base64.RawURLEncoding.DecodeString(segment)
	if err != nil {
		return ticket{}, errForged
	}
	ring, err := e.keys(ctx)
	if err != nil {
		return ticket{}, err
	}
	for _, aead := range ring.aeads {
		n := aead.NonceSize()
		if len(sealed) < n+aead.Overhead() {
			return ticket{}, errForged
		}
		plain, err := aead.Open(nil, sealed[:n], sealed[n:], sealAAD)
		if err != nil {
			continue
		}
		t, ok := parseTicket(plain)
		if !ok {
			return ticket{}, errForged
		}
		if !e.opts.now().Before(t.expires) {
			return ticket{}, errExpired
		}
		return t, nil
	}
	return ticket{}, errForged
}

// parseTicket reads seal's plaintext.
func parseTicket(plain []byte) (ticket, bool) {
	const head = 1 + 8 + tokenBytes + 1
	if len(plain) < head || plain[0] != sealVersion {
		return ticket{}, false
	}
	expires := int64(binary.BigEndian.Uint64(plain[1:9]))
	token := plain[9 : 9+tokenBytes]
	n := int(plain[head-1])
	rest := plain[head:]
	if n == 0 || len(rest) <= n || bytes.IndexByte(rest, 0) >= 0 {
		return ticket{}, false
	}
	return ticket{
		workflowID: string(rest[n:]),
		key:        string(rest[:n]),
		expires:    time.Unix(expires, 0).UTC(),
		token:      base64.RawURLEncoding.EncodeToString(token),
	}, true
}
