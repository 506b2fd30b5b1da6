package codec

import (
	"crypto/rand"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Metadata of an encrypted payload.
const (
	// MetadataEncoding is the standard payload metadata key naming the encoding.
	MetadataEncoding = converter.MetadataEncoding
	// EncodingEncrypted is the encoding of a payload this codec encrypted.
	EncodingEncrypted = "binary/encrypted"
	// MetadataKeyID names the key that encrypted the payload.
	MetadataKeyID = "encryption-key-id"
)

// KeySource gives the keyring in force now. A *Keyring is one (it never changes); a
// *KeyringWatcher is one whose keyring follows its file.
type KeySource interface {
	// Keyring returns the keyring in force; never nil.
	Keyring() *Keyring
}

// refresher is a KeySource that can look at its source again at once, when a payload names a key
// it lacks (at most once a second, whatever asks).
type refresher interface {
	refresh()
}

// KeyNotHeldError is the error of decoding a payload encrypted with a key the keyring lacks: a
// key that has not reached this process yet (a rotation's phase 1 skipped or still under way), or
// one removed too early.
type KeyNotHeldError struct {
	// KeyID is the key the payload names.
	KeyID string
}

func (e *KeyNotHeldError) Error() string {
	return fmt.Sprintf("decrypt payload: unknown key ID %q (this process's keyring lacks it: add it to the key file)", e.KeyID)
}

// Codec is a converter.PayloadCodec that encrypts with the keyring's current key and decrypts
// with the key each payload names. It reads its KeySource at every call, so a keyring swapped by
// a KeyringWatcher takes effect at the next payload.
type Codec struct {
	keys KeySource
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns the codec for keys: a *Keyring, or a *KeyringWatcher to follow a key file.
func New(keys KeySource) *Codec { return &Codec{keys: keys} }

// Encode encrypts every payload with the current key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	ring := c.keys.Keyring()
	id := ring.current
	aead := ring.aeads[id]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encrypt payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encrypt payload: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{MetadataEncoding: []byte(EncodingEncrypted), MetadataKeyID: []byte(id)},
			Data:     aead.Seal(nonce, nonce, plain, []byte(id)),
		}
	}
	return out, nil
}

// Decode decrypts every encrypted payload; others pass through unchanged.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	ring := c.keys.Keyring()
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		aead, ok := ring.aeads[id]
		if !ok {
			// The key file may have gained it since the last poll: look once more.
			if r, can := c.keys.(refresher); can {
				r.refresh()
				ring = c.keys.Keyring()
				aead, ok = ring.aeads[id]
			}
		}
		if !ok {
			return nil, &KeyNotHeldError{KeyID: id}
		}
		data := p.GetData()
		if len(data) < aead.NonceSize() {
			return nil, fmt.Errorf("decrypt payload: key %q: ciphertext too short", id)
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("decrypt payload: key %q: authentication failed (wrong key or altered payload)", id)
		}
		var decoded commonpb.Payload
		if err := proto.Unmarshal(plain, &decoded); err != nil {
			return nil, fmt.Errorf("decrypt payload: key %q: %w", id, err)
		}
		out[i] = &decoded
	}
	return out, nil
}
