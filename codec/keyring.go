package codec

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// KeySize is the size of an AES-256 key in bytes.
const KeySize = 32

// keyIDPattern is what a key ID may look like: it is stored in every payload's metadata.
var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// DecryptOnly is the key file's marker, after a key, of a key that never encrypts: phase 1 of a
// rotation, when every process learns the new key before any encrypts with it.
const DecryptOnly = "decrypt-only"

// Roles of a key in a keyring, as KeyInfo.Role and the toolgate_codec_keys gauge name them.
const (
	// RoleEncrypt is the role of the one key that encrypts (it decrypts too).
	RoleEncrypt = "encrypt"
	// RoleDecrypt is the role of every other key: it only decrypts.
	RoleDecrypt = "decrypt"
)

// Keyring is an ordered set of named AES-256 keys: the first key not marked DecryptOnly encrypts,
// all decrypt. It is immutable and safe for concurrent use.
type Keyring struct {
	current string
	ids     []string // in file order
	aeads   map[string]cipher.AEAD
}

// Key is one named key.
type Key struct {
	// ID names the key in payload metadata (1-64 of A-Z a-z 0-9 . _ : -).
	ID string
	// Secret is the 32-byte AES-256 key.
	Secret []byte
	// DecryptOnly keeps the key from encrypting even when it comes first. Optional: default
	// false.
	DecryptOnly bool
}

// KeyInfo names a key of a keyring and its role, never its material.
type KeyInfo struct {
	// ID is the key's ID.
	ID string `json:"id"`
	// Role is RoleEncrypt or RoleDecrypt.
	Role string `json:"role"`
}

// NewKeyring builds a keyring; the first key not DecryptOnly encrypts. IDs must be distinct and
// well-formed, and at least one key must be able to encrypt.
func NewKeyring(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("new keyring: no key")
	}
	r := &Keyring{aeads: make(map[string]cipher.AEAD, len(keys))}
	for _, k := range keys {
		if !k.DecryptOnly {
			r.current = k.ID
			break
		}
	}
	if r.current == "" {
		return nil, errors.New("new keyring: every key is " + DecryptOnly + ": one must encrypt")
	}
	for i, k := range keys {
		if !keyIDPattern.MatchString(k.ID) {
			return nil, fmt.Errorf("new keyring: key %d: ID %q is not 1-64 of A-Z a-z 0-9 . _ : -", i+1, k.ID)
		}
		if _, dup := r.aeads[k.ID]; dup {
			return nil, fmt.Errorf("new keyring: duplicate key ID %q", k.ID)
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("new keyring: key %q has %d bytes, want %d", k.ID, len(k.Secret), KeySize)
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("new keyring: key %q: %w", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("new keyring: key %q: %w", k.ID, err)
		}
		r.aeads[k.ID] = aead
		r.ids = append(r.ids, k.ID)
	}
	return r, nil
}

// ParseKeyring reads the key file format (see the package documentation).
func ParseKeyring(text string) (*Keyring, error) {
	var keys []Key
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		fields := strings.Fields(s)
		decryptOnly := len(fields) == 3 && fields[2] == DecryptOnly
		if len(fields) != 2 && !decryptOnly {
			// Never echo the line: it holds key material.
			return nil, fmt.Errorf("parse keys: line %d: want \"<id> <base64 key>\" or \"<id> <base64 key> %s\"", line, DecryptOnly)
		}
		secret, err := base64.StdEncoding.DecodeString(fields[1])
		if err != nil {
			// Never echo the line: it holds key material.
			return nil, fmt.Errorf("parse keys: line %d (key %q): the key is not standard base64", line, fields[0])
		}
		keys = append(keys, Key{ID: fields[0], Secret: secret, DecryptOnly: decryptOnly})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parse keys: %w", err)
	}
	return NewKeyring(keys...)
}

// LoadKeyring reads keys from source: "env:NAME" reads environment variable NAME, anything else
// is a file path. lookupEnv is os.LookupEnv when nil.
func LoadKeyring(source string, lookupEnv func(string) (string, bool)) (*Keyring, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if name, ok := strings.CutPrefix(source, "env:"); ok {
		text, ok := lookupEnv(name)
		if !ok || strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("load keys: environment variable %s is not set", name)
		}
		r, err := ParseKeyring(text)
		if err != nil {
			return nil, fmt.Errorf("load keys from $%s: %w", name, err)
		}
		return r, nil
	}
	r, _, err := loadKeyFile(source)
	return r, err
}

// CurrentKeyID is the ID of the key that encrypts.
func (r *Keyring) CurrentKeyID() string { return r.current }

// Has reports whether the keyring holds the key named id.
func (r *Keyring) Has(id string) bool {
	_, ok := r.aeads[id]
	return ok
}

// Keys lists the keys' IDs and roles in the order they were given.
func (r *Keyring) Keys() []KeyInfo {
	out := make([]KeyInfo, len(r.ids))
	for i, id := range r.ids {
		role := RoleDecrypt
		if id == r.current {
			role = RoleEncrypt
		}
		out[i] = KeyInfo{ID: id, Role: role}
	}
	return out
}

// Keyring returns r itself: a fixed Keyring is a KeySource.
func (r *Keyring) Keyring() *Keyring { return r }

// String names the keys by ID only: a Keyring printed by mistake shows no key material.
func (r *Keyring) String() string {
	return fmt.Sprintf("codec.Keyring{current: %q, keys: %d}", r.current, len(r.aeads))
}
