package codec

import (
	"crypto/rand"
	"errors"
	"fmt"
)

// ErrNotAuthentic is the error of Open when the ciphertext fails authentication: the wrong key,
// altered bytes, or additional data other than what it was sealed with (a value moved to another
// row).
var ErrNotAuthentic = errors.New("authentication failed (wrong key, altered data, or data bound to another place)")

// Seal encrypts plain (AES-256-GCM) with the current key of keys, binding aad and the key ID as
// additional authenticated data. It returns the key's ID, to store beside sealed, and
// sealed = 12-byte random nonce || ciphertext. Seal is for values other than payloads (stored
// tokens): the same keys, the same rotation.
func Seal(keys KeySource, plain, aad []byte) (keyID string, sealed []byte, err error) {
	ring := keys.Keyring()
	id := ring.current
	aead := ring.aeads[id]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, fmt.Errorf("seal: %w", err)
	}
	return id, aead.Seal(nonce, nonce, plain, sealAAD(id, aad)), nil
}

// Open decrypts what Seal returned with the key named keyID, which any key of keys may be (a
// KeyringWatcher reads its file once more when it lacks it). It returns a *KeyNotHeldError when
// the keyring lacks the key, and an error wrapping ErrNotAuthentic when aad, the key or the bytes
// differ from the seal's.
func Open(keys KeySource, keyID string, sealed, aad []byte) ([]byte, error) {
	ring := keys.Keyring()
	aead, ok := ring.aeads[keyID]
	if !ok {
		if r, can := keys.(refresher); can {
			r.refresh()
			aead, ok = keys.Keyring().aeads[keyID]
		}
	}
	if !ok {
		return nil, &KeyNotHeldError{KeyID: keyID}
	}
	if len(sealed) < aead.NonceSize() {
		return nil, fmt.Errorf("open: key %q: %w", keyID, ErrNotAuthentic)
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], sealAAD(keyID, aad))
	if err != nil {
		return nil, fmt.Errorf("open: key %q: %w", keyID, ErrNotAuthentic)
	}
	return plain, nil
}

// sealAAD is the additional data of a seal: the key ID, length-prefixed, then aad. A sealed value
// cannot pass for a payload (whose additional data is the bare key ID) nor one of another key.
func sealAAD(keyID string, aad []byte) []byte {
	out := make([]byte, 0, len("toolgate-seal\x00")+1+len(keyID)+len(aad))
	out = append(out, "toolgate-seal\x00"...)
	out = append(out, byte(len(keyID)))
	out = append(out, keyID...)
	return append(out, aad...)
}
