package codec

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// DefaultWatchInterval is WatchOptions.Interval's default.
const DefaultWatchInterval = 2 * time.Second

// maxKeyFileBytes bounds what a key file read takes in: a key line is under 120 bytes.
const maxKeyFileBytes = 1 << 20

// refreshGap is the least time between two reads a missing key asks for.
const refreshGap = time.Second

// WatchOptions configure WatchKeyring. They work at their zero value.
type WatchOptions struct {
	// Interval is how often the key file is read and compared with the last read. Optional:
	// default DefaultWatchInterval.
	Interval time.Duration
	// Logger receives a line for each reload (key IDs and roles, never key material) and each
	// refused one. Optional: default zap.NewNop().
	Logger *zap.Logger
	// OnLoad is called with the first keyring and with each one a reload swaps in, on the
	// goroutine that read the file (WatchKeyring's caller for the first, then the poller, Reload's
	// caller or a decode that met an unknown key), one call at a time. Optional: default nil.
	OnLoad func(*Keyring)
	// LookupEnv reads an "env:NAME" source. Optional: default os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// KeyringWatcher is a KeySource that follows a key file: it reads the file every Interval and,
// when its content changed and is a valid keyring that keeps the key encrypting now, swaps the new
// keyring in atomically. A file that cannot be read or parsed, or that drops the key encrypting
// now, leaves the keys as they were and is logged as an error once per content.
//
// It compares the file's content, not its modification time or inode, so it follows every way a
// file is replaced: an editor's rename, `cp`, and the symlink swap by which Kubernetes updates a
// mounted Secret (a watch on the file's inode would lose it then). An "env:NAME" source cannot
// change and is not polled.
//
// It is safe for concurrent use; Close stops it.
type KeyringWatcher struct {
	source string
	opts   WatchOptions
	ring   atomic.Pointer[Keyring]

	mu          sync.Mutex // serializes reads; guards the fields below
	lastSum     [sha256.Size]byte
	lastErr     string
	lastRefresh time.Time
	heldBefore  map[string]bool // every key ID this watcher has held

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

var _ KeySource = (*KeyringWatcher)(nil)

// WatchKeyring loads the keys of source ("env:NAME" or a file path, as LoadKeyring) and, for a
// file, follows it until ctx ends or Close is called. The first load's error is returned.
func WatchKeyring(ctx context.Context, source string, opts WatchOptions) (*KeyringWatcher, error) {
	if opts.Interval <= 0 {
		opts.Interval = DefaultWatchInterval
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	w := &KeyringWatcher{source: source, opts: opts, heldBefore: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	if strings.HasPrefix(source, "env:") {
		ring, err := LoadKeyring(source, opts.LookupEnv)
		if err != nil {
			return nil, err
		}
		w.swap(ring)
		close(w.done)
		return w, nil
	}
	ring, sum, err := loadKeyFile(source)
	if err != nil {
		return nil, err
	}
	w.lastSum = sum
	w.swap(ring)
	go w.poll(ctx)
	return w, nil
}

// Keyring returns the keyring in force.
func (w *KeyringWatcher) Keyring() *Keyring { return w.ring.Load() }

// fromEnv reports whether the keys come from an "env:NAME" source, which is never polled.
func (w *KeyringWatcher) fromEnv() bool { return strings.HasPrefix(w.source, "env:") }

// Source is the file path or "env:NAME" the keys come from.
func (w *KeyringWatcher) Source() string { return w.source }

// Reload reads the source now (as the next poll would) and reports whether a new keyring was
// swapped in; the error says why a changed file was refused.
func (w *KeyringWatcher) Reload() (bool, error) {
	if w.fromEnv() {
		return false, nil
	}
	return w.reload()
}

// Close stops following the file; the last keyring stays in force.
func (w *KeyringWatcher) Close() {
	w.once.Do(func() {
		if !w.fromEnv() {
			close(w.stop)
		}
	})
	<-w.done
}

func (w *KeyringWatcher) poll(ctx context.Context) {
	defer close(w.done)
	tick := time.NewTicker(w.opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		case <-tick.C:
			_, _ = w.reload() // reload logs what it refuses
		}
	}
}

// refresh reads the file again at once, unless a refresh did less than refreshGap ago.
func (w *KeyringWatcher) refresh() {
	if w.fromEnv() {
		return
	}
	w.mu.Lock()
	recent := time.Since(w.lastRefresh) < refreshGap
	if !recent {
		w.lastRefresh = time.Now()
	}
	w.mu.Unlock()
	if !recent {
		_, _ = w.reload()
	}
}

// reload reads the file and swaps in its keyring when it changed and is acceptable.
func (w *KeyringWatcher) reload() (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, err := readKeyFile(w.source)
	if err != nil {
		// Kept: a Secret volume's swap or an editor's rename can hide the file for a moment.
		return false, w.refuse(fmt.Errorf("reload keys: %w (the keys loaded before stay in force)", err))
	}
	sum := sha256.Sum256(data)
	if sum == w.lastSum {
		w.lastErr = ""
		return false, nil
	}
	next, err := ParseKeyring(string(data))
	if err == nil {
		err = w.check(next)
	}
	if err != nil {
		return false, w.refuse(fmt.Errorf("reload keys from %s: %w (the keys loaded before stay in force)", w.source, err))
	}
	w.lastSum, w.lastErr = sum, ""
	prev := w.Keyring()
	if prev.current != next.current && !w.heldBefore[next.current] {
		w.opts.Logger.Warn("codec key encrypts without having been held decrypt-only first: processes that have not loaded it yet cannot decrypt what this one encrypts now; rotate in two phases",
			zap.String("source", w.source), zap.String("encryptKeyId", next.current))
	}
	w.swap(next)
	w.opts.Logger.Info("codec keys reloaded", zap.String("source", w.source),
		zap.String("encryptKeyId", next.current), zap.Strings("keyIds", next.ids), zap.Strings("previousKeyIds", prev.ids))
	return true, nil
}

// check refuses a keyring that drops the key encrypting now: payloads this process encrypted a
// moment ago would become unreadable to it.
func (w *KeyringWatcher) check(next *Keyring) error {
	if cur := w.Keyring().current; !next.Has(cur) {
		return fmt.Errorf("the new keys drop key %q, which encrypts now: make another key encrypt first (phase 2), remove it later", cur)
	}
	return nil
}

// refuse logs err once for as long as it stays the same, and returns it.
func (w *KeyringWatcher) refuse(err error) error {
	if msg := err.Error(); msg != w.lastErr {
		w.lastErr = msg
		w.opts.Logger.Error("codec keys not reloaded", zap.Error(err))
	}
	return err
}

func (w *KeyringWatcher) swap(ring *Keyring) {
	for _, id := range ring.ids {
		w.heldBefore[id] = true
	}
	w.ring.Store(ring)
	if w.opts.OnLoad != nil {
		w.opts.OnLoad(ring)
	}
}

// loadKeyFile reads and parses the key file path, for LoadKeyring and a watcher's first load;
// sum is the SHA-256 of its content.
func loadKeyFile(path string) (ring *Keyring, sum [sha256.Size]byte, err error) {
	data, err := readKeyFile(path)
	if err != nil {
		return nil, sum, fmt.Errorf("load keys: %w", err)
	}
	ring, err = ParseKeyring(string(data))
	if err != nil {
		return nil, sum, fmt.Errorf("load keys from %s: %w", path, err)
	}
	return ring, sha256.Sum256(data), nil
}

// readKeyFile reads at most maxKeyFileBytes of path (following symlinks).
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxKeyFileBytes {
		return nil, fmt.Errorf("read %s: %w", path, errKeyFileTooLarge)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("read %s: %w", path, errKeyFileEmpty)
	}
	return data, nil
}

var (
	errKeyFileTooLarge = errors.New("larger than 1 MiB: not a key file")
	errKeyFileEmpty    = errors.New("empty: no key")
)
