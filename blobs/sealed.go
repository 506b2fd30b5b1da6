package blobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/codec"
)

// Sealed is a Store that encrypts every blob with the codec keyring before the inner store sees
// it (codec.Seal: AES-256-GCM with the current key) and opens it on Get with whichever key of the
// ring sealed it, so keys rotate as payload keys do. The blob's key is bound as additional data:
// bytes copied under another key fail to open. A stored blob is "tgb1", the key ID's length and
// the key ID, then the sealed bytes.
type Sealed struct {
	// Store holds the sealed blobs. Required.
	Store Store
	// Keys is the keyring (codec.Keyring, codec.KeyringWatcher). Required.
	Keys codec.KeySource
}

var _ Store = (*Sealed)(nil)

// sealedMagic starts every sealed blob.
const sealedMagic = "tgb1"

// ErrNotSealed is the error of Sealed.Get for a blob that was stored without encryption.
var ErrNotSealed = errors.New("blob is not sealed (stored without a codec key)")

func aad(key string) []byte { return []byte("toolgate-blob\x00" + key) }

// Put seals data and stores it under key.
func (s *Sealed) Put(ctx context.Context, key string, data []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	id, sealed, err := codec.Seal(s.Keys, data, aad(key))
	if err != nil {
		return fmt.Errorf("seal blob: %w", err)
	}
	out := make([]byte, 0, len(sealedMagic)+1+len(id)+len(sealed))
	out = append(out, sealedMagic...)
	out = append(out, byte(len(id)))
	out = append(out, id...)
	return s.Store.Put(ctx, key, append(out, sealed...))
}

// Get reads and opens the blob under key: an error wrapping ErrNotSealed for a plaintext blob,
// codec.ErrNotAuthentic for altered or moved bytes, a *codec.KeyNotHeldError for a key the ring
// lacks.
func (s *Sealed) Get(ctx context.Context, key string) ([]byte, error) {
	stored, err := s.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(stored, []byte(sealedMagic)) || len(stored) < len(sealedMagic)+1 {
		return nil, fmt.Errorf("blob %s: %w", key, ErrNotSealed)
	}
	rest := stored[len(sealedMagic):]
	n := int(rest[0])
	if len(rest) < 1+n {
		return nil, fmt.Errorf("blob %s: %w", key, ErrNotSealed)
	}
	plain, err := codec.Open(s.Keys, string(rest[1:1+n]), rest[1+n:], aad(key))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", key, err)
	}
	return plain, nil
}

// Delete removes the blob under key.
func (s *Sealed) Delete(ctx context.Context, key string) error { return s.Store.Delete(ctx, key) }

// List lists the blobs of s.Store when it is a Lister, else fails with ErrCannotList.
func (s *Sealed) List(ctx context.Context, prefix string, fn func(key string, stored time.Time) error) error {
	l, ok := s.Store.(Lister)
	if !ok {
		return ErrCannotList
	}
	return l.List(ctx, prefix, fn)
}

// Sweep removes the blobs stored before cutoff.
func (s *Sealed) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	return s.Store.Sweep(ctx, cutoff)
}
