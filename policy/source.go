package policy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// Source holds a worker's current policy set, swapped atomically on reload, and its mode. A nil
// *Source, or one holding no set, decides nothing: every call is allowed and nothing is recorded.
// It is safe for concurrent use.
type Source struct {
	set     atomic.Pointer[Set]
	logOnly bool
}

// NewSource returns a Source holding set (nil: none). With logOnly, decisions are recorded
// and logged but never enforced.
func NewSource(set *Set, logOnly bool) *Source {
	s := &Source{logOnly: logOnly}
	s.set.Store(set)
	return s
}

// Current returns the set in force, nil for none.
func (s *Source) Current() *Set {
	if s == nil {
		return nil
	}
	return s.set.Load()
}

// LogOnly reports whether decisions are recorded without being enforced.
func (s *Source) LogOnly() bool { return s != nil && s.logOnly }

// Store puts set in force (nil: none) for the calls decided from now on.
func (s *Source) Store(set *Set) { s.set.Store(set) }

// Decide evaluates r with the set in force and marks the decision LogOnly in log-only mode. ok
// is false when there is no set: the call is allowed and nothing should be recorded.
func (s *Source) Decide(r Request) (d Decision, ok bool) {
	set := s.Current()
	if set == nil {
		return Decision{}, false
	}
	d = set.Evaluate(r)
	d.LogOnly = s.LogOnly()
	return d, true
}

// DefaultWatchInterval is how often Watch looks at the policy file.
const DefaultWatchInterval = time.Second

// Watch polls the file at path every interval (DefaultWatchInterval when <= 0) until ctx ends:
// when its modification time, size or bytes change, it parses the file and, if it is valid and
// its hash differs from the set in force, stores it and logs the new hash; an invalid file is
// logged and the set in force kept. logger may be nil.
func (s *Source) Watch(ctx context.Context, path string, interval time.Duration, logger *slog.Logger) {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Nothing is known of the file at first: the first poll reads it, so a change between the
	// caller's Load and this call is not missed; bytes equal to the set in force change nothing.
	var lastMod time.Time
	var lastSize int64 = -1
	var lastBytes []byte
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		fi, err := os.Stat(path)
		if err != nil {
			if lastSize != -2 {
				logger.Warn("policy file unreadable; keeping the policy set in force", "path", path, "error", err)
				lastSize = -2
			}
			continue
		}
		if fi.ModTime().Equal(lastMod) && fi.Size() == lastSize {
			continue
		}
		lastMod, lastSize = fi.ModTime(), fi.Size()
		text, err := os.ReadFile(path)
		if err != nil || bytes.Equal(text, lastBytes) {
			continue
		}
		lastBytes = text
		if cur := s.Current(); cur != nil && cur.Hash() == hashBytes(text) {
			continue
		}
		set, err := Parse(path, text)
		if err != nil {
			logger.Error("policy file changed but is invalid; keeping the policy set in force", "path", path, "error", err,
				"hash", hashOf(s.Current()))
			continue
		}
		if cur := s.Current(); cur != nil && cur.Hash() == set.Hash() {
			continue
		}
		s.Store(set)
		logger.Info("policy set reloaded", "path", path, "hash", set.Hash(), "policies", len(set.policies))
	}
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func hashOf(s *Set) string {
	if s == nil {
		return "none"
	}
	return s.Hash()
}
