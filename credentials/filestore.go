package credentials

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/filelock"
)

// pendingRetention is how long past its expiry a pending consent is kept for TakeWaiting (its
// waiters may still be waiting) before a PutPending removes it.
const pendingRetention = 24 * time.Hour

// FileStore is a Store in a directory of one machine (toolgate dev, or workers sharing a disk):
//
//	DIR/tokens/<sha256>.json   one token per principal and provider (mode 0600)
//	DIR/tokens/<sha256>.lock   the flock(2) lock of Update, Put and Delete on that token
//	DIR/pending/<sha256>.json  one pending consent per state, with its expiry
//
// File names are hashes of the principal and provider (or state): no principal's text is in a
// name. Directories are mode 0700; a directory others may read is refused. Every write goes to a
// temporary file renamed over the old one, so a reader sees the old row or the new, never part
// of one. Update holds the token's lock file (flock, so also against other processes); a pending
// consent is taken by renaming its file away, which one taker alone can do.
//
// The zero value is not usable: Dir is required, and Keyring unless InsecurePlaintext. A
// FileStore must not be copied after first use.
type FileStore struct {
	// Dir is the store's directory, created (mode 0700) when missing.
	Dir string
	// Keyring seals every token and verifier (AES-256-GCM); a row sealed with any key it holds
	// opens, a write seals with its current key. Required unless InsecurePlaintext.
	Keyring codec.KeySource
	// InsecurePlaintext lets a store without Keyring write tokens in plaintext: for development
	// only (toolgate credentials list shows such rows). Optional: default false.
	InsecurePlaintext bool
	// Now is the clock of pending consents' expiry. Optional: default time.Now.
	Now func() time.Time

	initOnce sync.Once
	initErr  error
	locks    keyLocks
}

var _ Store = (*FileStore)(nil)

// tokenFile is a token's file: what List shows in clear, the token sealed.
type tokenFile struct {
	Principal   string    `json:"principal"`
	Provider    string    `json:"provider"`
	Scopes      []string  `json:"scopes,omitempty"`
	Expiry      time.Time `json:"expiry,omitzero"`
	Obtained    time.Time `json:"obtained"`
	Refreshable bool      `json:"refreshable"`
	// KeyID names the key of Sealed; "" when the token is in Plaintext instead.
	KeyID     string          `json:"keyId"`
	Sealed    []byte          `json:"sealed,omitempty"`
	Plaintext json.RawMessage `json:"plaintext,omitempty"`
}

// pendingFile is a pending consent's file: the verifier sealed, the rest in clear.
type pendingFile struct {
	State     string    `json:"state"`
	Principal string    `json:"principal"`
	Provider  string    `json:"provider"`
	Scopes    []string  `json:"scopes,omitempty"`
	Waiters   []string  `json:"waiters,omitempty"`
	Expires   time.Time `json:"expires"`
	// KeyID names the key of Sealed; "" when the verifier is in Plaintext instead.
	KeyID     string `json:"keyId"`
	Sealed    []byte `json:"sealed,omitempty"`
	Plaintext string `json:"plaintext,omitempty"`
}

// sealed is the token's sealed form, or its plaintext JSON when KeyID is "".
func (f *tokenFile) sealed() []byte {
	if f.KeyID == plaintextKeyID {
		return f.Plaintext
	}
	return f.Sealed
}

// setSealed sets the token's sealed form, or its plaintext JSON when KeyID is "".
func (f *tokenFile) setSealed(sealed []byte) {
	if f.KeyID == plaintextKeyID {
		f.Plaintext = sealed
	} else {
		f.Sealed = sealed
	}
}

// Init checks the configuration and creates the directories; every method calls it, so calling
// it first only reports a bad configuration (no keyring, a directory others can read) early.
func (s *FileStore) Init() error {
	s.initOnce.Do(func() { s.initErr = s.init() })
	return s.initErr
}

func (s *FileStore) init() error {
	if s.Dir == "" {
		return errors.New("credentials file store: no directory")
	}
	if err := s.sealer().check(); err != nil {
		return err
	}
	for _, dir := range []string{s.Dir, s.tokensDir(), s.pendingDir()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("credentials file store: %w", err)
		}
		info, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("credentials file store: %w", err)
		}
		if info.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("credentials file store: %s is mode %o, others may read tokens: chmod 700 it", dir, info.Mode().Perm())
		}
	}
	return nil
}

func (s *FileStore) sealer() sealer {
	return sealer{keys: s.Keyring, plaintext: s.InsecurePlaintext}
}

func (s *FileStore) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *FileStore) tokensDir() string  { return filepath.Join(s.Dir, "tokens") }
func (s *FileStore) pendingDir() string { return filepath.Join(s.Dir, "pending") }

// tokenName is the file name stem of principal's token at provider.
func tokenName(principal, provider string) string {
	return hashName("token", principal, provider)
}

// hashName is the hex SHA-256 of kind and fields, length-prefixed (rowAAD).
func hashName(kind string, fields ...string) string {
	sum := sha256.Sum256(rowAAD(kind, fields...))
	return hex.EncodeToString(sum[:])
}

// Get returns the principal's token at provider.
func (s *FileStore) Get(ctx context.Context, principal, provider string) (Token, bool, error) {
	if err := s.ready(principal, provider); err != nil {
		return Token{}, false, err
	}
	return s.read(principal, provider)
}

// read reads and opens the token file of principal at provider.
func (s *FileStore) read(principal, provider string) (Token, bool, error) {
	var f tokenFile
	found, err := readJSON(filepath.Join(s.tokensDir(), tokenName(principal, provider)+".json"), &f)
	if err != nil || !found {
		return Token{}, false, err
	}
	if f.Principal != principal || f.Provider != provider {
		return Token{}, false, fmt.Errorf("token file of %q at %q names another principal or provider: moved or altered", principal, provider)
	}
	t, err := s.sealer().openToken(principal, provider, f.KeyID, f.sealed())
	if err != nil {
		return Token{}, false, fmt.Errorf("token of %q at %q: %w", principal, provider, err)
	}
	return t, true, nil
}

// Put stores the principal's token at provider, under the token's lock.
func (s *FileStore) Put(ctx context.Context, principal, provider string, t Token) error {
	_, err := s.Update(ctx, principal, provider, func(Token, bool) (Token, bool, error) { return t, true, nil })
	return err
}

// Delete removes the principal's token at provider, under the token's lock.
func (s *FileStore) Delete(ctx context.Context, principal, provider string) (bool, error) {
	if err := s.ready(principal, provider); err != nil {
		return false, err
	}
	unlock, err := s.lock(ctx, principal, provider)
	if err != nil {
		return false, err
	}
	defer unlock()
	err = os.Remove(filepath.Join(s.tokensDir(), tokenName(principal, provider)+".json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("delete token: %w", err)
	}
	return true, nil
}

// List returns every token's Entry, sorted by principal and provider; it opens no token.
func (s *FileStore) List(ctx context.Context) ([]Entry, error) {
	if err := s.Init(); err != nil {
		return nil, err
	}
	names, err := filepath.Glob(filepath.Join(s.tokensDir(), "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	entries := make([]Entry, 0, len(names))
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var f tokenFile
		found, err := readJSON(name, &f)
		if err != nil {
			return nil, err
		}
		if !found { // deleted since the glob
			continue
		}
		entries = append(entries, Entry{
			Principal: f.Principal, Provider: f.Provider, Scopes: f.Scopes,
			Expiry: f.Expiry, Obtained: f.Obtained, Refreshable: f.Refreshable, KeyID: f.KeyID,
		})
	}
	sortEntries(entries)
	return entries, nil
}

// Update runs fn on the principal's token at provider while holding the token's lock file.
func (s *FileStore) Update(ctx context.Context, principal, provider string, fn func(t Token, found bool) (Token, bool, error)) (Token, error) {
	if err := s.ready(principal, provider); err != nil {
		return Token{}, err
	}
	unlock, err := s.lock(ctx, principal, provider)
	if err != nil {
		return Token{}, err
	}
	defer unlock()
	t, found, err := s.read(principal, provider)
	if err != nil {
		return Token{}, err
	}
	next, store, err := fn(t, found)
	if err != nil || !store {
		return next, err
	}
	keyID, sealed, err := s.sealer().sealToken(principal, provider, next)
	if err != nil {
		return Token{}, err
	}
	e := entryOf(principal, provider, keyID, next)
	f := tokenFile{
		Principal: principal, Provider: provider, Scopes: e.Scopes, Expiry: e.Expiry,
		Obtained: e.Obtained, Refreshable: e.Refreshable, KeyID: keyID,
	}
	f.setSealed(sealed)
	if err := writeJSON(filepath.Join(s.tokensDir(), tokenName(principal, provider)+".json"), f); err != nil {
		return Token{}, fmt.Errorf("store token: %w", err)
	}
	return next, nil
}

// PutPending records p in its own file, and removes pending consents expired longer than a day.
func (s *FileStore) PutPending(ctx context.Context, p Pending) error {
	if err := s.ready(p.Principal, p.Provider); err != nil {
		return err
	}
	if err := checkPending(p); err != nil {
		return err
	}
	keyID, sealed, err := s.sealer().sealVerifier(p)
	if err != nil {
		return err
	}
	f := pendingFile{
		State: p.State, Principal: p.Principal, Provider: p.Provider, Scopes: p.Scopes,
		Waiters: p.Waiters, Expires: p.Expires.UTC(), KeyID: keyID,
	}
	if keyID == plaintextKeyID {
		f.Plaintext = string(sealed)
	} else {
		f.Sealed = sealed
	}
	if err := writeJSON(s.pendingPath(p.State), f); err != nil {
		return fmt.Errorf("store pending consent: %w", err)
	}
	return s.sweepPending(ctx)
}

func (s *FileStore) pendingPath(state string) string {
	return filepath.Join(s.pendingDir(), hashName(kindPending, state)+".json")
}

// sweepPending removes the pending consents expired longer than pendingRetention, and files a
// taker that crashed left behind for as long.
func (s *FileStore) sweepPending(ctx context.Context) error {
	cutoff := s.now().Add(-pendingRetention)
	left, err := filepath.Glob(filepath.Join(s.pendingDir(), ".taken-*"))
	if err != nil {
		return fmt.Errorf("list taken pending consents: %w", err)
	}
	for _, name := range left {
		if info, err := os.Stat(name); err == nil && info.ModTime().Before(cutoff) {
			_ = os.Remove(name) // another sweep may have removed it
		}
	}
	return s.eachPending(ctx, func(path string, f pendingFile) error {
		if f.Expires.Before(cutoff) {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove expired pending consent: %w", err)
			}
		}
		return nil
	})
}

// eachPending calls fn with every pending consent file.
func (s *FileStore) eachPending(ctx context.Context, fn func(path string, f pendingFile) error) error {
	names, err := filepath.Glob(filepath.Join(s.pendingDir(), "*.json"))
	if err != nil {
		return fmt.Errorf("list pending consents: %w", err)
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		var f pendingFile
		found, err := readJSON(name, &f)
		if err != nil {
			return err
		}
		if found {
			if err := fn(name, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// TakePending removes and returns the pending consent of state: its file is renamed away first,
// which one taker alone succeeds in, whatever the process. An expired one is not found and stays
// for TakeWaiting.
func (s *FileStore) TakePending(ctx context.Context, state string) (Pending, bool, error) {
	if err := s.Init(); err != nil {
		return Pending{}, false, err
	}
	if err := checkState(state); err != nil {
		return Pending{}, false, err
	}
	// An expired consent stays for TakeWaiting: its calls still wait for a consent.
	f, taken, err := s.take(s.pendingPath(state), func(f pendingFile) bool { return s.now().Before(f.Expires) })
	if err != nil || !taken {
		return Pending{}, false, err
	}
	if f.State != state {
		return Pending{}, false, errors.New("pending consent file names another state: moved or altered")
	}
	p, err := s.openPending(f)
	return p, err == nil, err
}

// TakeWaiting removes and returns every pending consent of principal at provider, expired ones
// too (their calls may still wait), sorted by expiry.
func (s *FileStore) TakeWaiting(ctx context.Context, principal, provider string) ([]Pending, error) {
	if err := s.ready(principal, provider); err != nil {
		return nil, err
	}
	var out []Pending
	err := s.eachPending(ctx, func(path string, f pendingFile) error {
		if f.Principal != principal || f.Provider != provider {
			return nil
		}
		f, taken, err := s.take(path, nil)
		if err != nil || !taken {
			return err
		}
		p, err := s.openPending(f)
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	sortPending(out)
	return out, err
}

// take renames the file at path away and reads it; taken is false when it was gone (another
// taker had it) or keep (when not nil) refuses it, which puts it back.
func (s *FileStore) take(path string, keep func(pendingFile) bool) (f pendingFile, taken bool, err error) {
	claimed := filepath.Join(s.pendingDir(), ".taken-"+randomName())
	if err := os.Rename(path, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return pendingFile{}, false, nil
		}
		return pendingFile{}, false, fmt.Errorf("take pending consent: %w", err)
	}
	found, err := readJSON(claimed, &f)
	if err == nil && found && keep != nil && !keep(f) {
		if err := os.Rename(claimed, path); err != nil {
			return pendingFile{}, false, fmt.Errorf("put back pending consent: %w", err)
		}
		return pendingFile{}, false, nil
	}
	if rmErr := os.Remove(claimed); rmErr != nil && err == nil {
		err = fmt.Errorf("take pending consent: %w", rmErr)
	}
	if err != nil || !found {
		return pendingFile{}, false, err
	}
	return f, true, nil
}

// openPending is the Pending of f, its verifier opened.
func (s *FileStore) openPending(f pendingFile) (Pending, error) {
	p := Pending{State: f.State, Principal: f.Principal, Provider: f.Provider, Scopes: f.Scopes, Waiters: f.Waiters, Expires: f.Expires}
	sealed := f.Sealed
	if f.KeyID == plaintextKeyID {
		sealed = []byte(f.Plaintext)
	}
	v, err := s.sealer().openVerifier(p, f.KeyID, sealed)
	if err != nil {
		return Pending{}, fmt.Errorf("pending consent of %q at %q: %w", f.Principal, f.Provider, err)
	}
	p.Verifier = v
	return p, nil
}

// ready initializes the store and checks the key.
func (s *FileStore) ready(principal, provider string) error {
	if err := s.Init(); err != nil {
		return err
	}
	return checkKey(principal, provider)
}

// lock holds the token's lock: first this FileStore's in-process one (so one goroutine per token
// waits in flock), then the lock file's flock, which other processes and FileStores respect.
func (s *FileStore) lock(ctx context.Context, principal, provider string) (unlock func(), err error) {
	name := tokenName(principal, provider)
	release, err := s.locks.lock(ctx, name)
	if err != nil {
		return nil, err
	}
	unlockFile, err := filelock.Lock(ctx, filepath.Join(s.tokensDir(), name+".lock"))
	if err != nil {
		release()
		return nil, err
	}
	return func() { unlockFile(); release() }, nil
}

// keyLocks is a set of in-process locks by name that a waiter can leave when its context ends.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	ch    chan struct{} // holds one value while locked
	users int           // holders and waiters; the entry is removed at 0
}

func (l *keyLocks) lock(ctx context.Context, name string) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*keyLock{}
	}
	k := l.locks[name]
	if k == nil {
		k = &keyLock{ch: make(chan struct{}, 1)}
		l.locks[name] = k
	}
	k.users++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		if k.users--; k.users == 0 {
			delete(l.locks, name)
		}
		l.mu.Unlock()
	}
	select {
	case k.ch <- struct{}{}:
		return func() { <-k.ch; done() }, nil
	case <-ctx.Done():
		done()
		return nil, context.Cause(ctx)
	}
}

// randomName is 16 random hex digits.
func randomName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// readJSON decodes the file at path into v; found is false when there is no such file. A file
// larger than maxRowBytes is refused.
func readJSON(path string, v any) (found bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRowBytes+1))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	if len(data) > maxRowBytes {
		return false, fmt.Errorf("read %s: larger than %d bytes", filepath.Base(path), maxRowBytes)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return true, nil
}

// writeJSON writes v to path atomically: a temporary file (mode 0600) in the same directory,
// synced, renamed over path.
func writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(data) > maxRowBytes {
		return fmt.Errorf("row of %d bytes, more than %d", len(data), maxRowBytes)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".write-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
