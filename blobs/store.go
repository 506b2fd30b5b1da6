package blobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Store keeps blobs by key. Implementations are safe for concurrent use.
type Store interface {
	// Put stores data under key, replacing what the key held; the blob's age starts now.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the blob under key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes the blob under key; a missing key is no error.
	Delete(ctx context.Context, key string) error
	// Sweep removes every blob stored before cutoff and returns how many it removed.
	Sweep(ctx context.Context, cutoff time.Time) (int, error)
}

// Lister is a Store that lists its blobs: FileStore, and Sealed over a Lister (the sandbox's
// object stores too). A store of objects that a manifest refers to uses it to find the ones no
// manifest refers to any more.
type Lister interface {
	// List calls fn with the key and the time stored of each blob whose key starts with prefix,
	// in no particular order; an error of fn ends the listing and is returned.
	List(ctx context.Context, prefix string, fn func(key string, stored time.Time) error) error
}

// ErrCannotList: List of a Sealed whose Store is not a Lister.
var ErrCannotList = errors.New("the blob store cannot list its blobs")

// Errors of the stores.
var (
	// ErrNotFound: no blob under the key (never stored, swept or deleted).
	ErrNotFound = errors.New("blob not found")
	// ErrInvalidKey: a key that is not 1 to MaxKeyBytes bytes of A-Z a-z 0-9 _ -.
	ErrInvalidKey = errors.New("invalid blob key")
)

// MaxKeyBytes bounds a key (toolcore.MaxPartKeyBytes allows as much).
const MaxKeyBytes = 128

// NewKey returns a fresh random key: 32 hex digits (128 bits), unguessable, revealing nothing of
// the call or the bytes.
func NewKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new blob key: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// CheckKey returns an error wrapping ErrInvalidKey unless key is 1 to MaxKeyBytes bytes of
// A-Z a-z 0-9 _ - (safe as a file name and a row key).
func CheckKey(key string) error {
	if key == "" || len(key) > MaxKeyBytes {
		return fmt.Errorf("%w: want 1 to %d bytes", ErrInvalidKey, MaxKeyBytes)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w: byte %d is not one of A-Z a-z 0-9 _ -", ErrInvalidKey, i)
		}
	}
	return nil
}
