// Package credstoretest is the one table of behaviours every credentials.Store passes: run by
// the FileStore's tests (package credentials) and the SQLStore's against a real PostgreSQL
// (cmd/toolgate/internal/credstorepg), so both stores keep one contract.
package credstoretest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/credentials"
)

// Config is how a Backend opens a store.
type Config struct {
	// Keys seal the rows; nil with InsecurePlaintext stores them in plaintext.
	Keys codec.KeySource
	// InsecurePlaintext is the store's option of that name.
	InsecurePlaintext bool
	// Now is the store's clock (nil: time.Now).
	Now func() time.Time
}

// Backend is one empty storage (a directory, a database) that stores are opened on.
type Backend interface {
	// Open returns a store on the storage; two opens are two store values (two processes'
	// worth) sharing it.
	Open(t *testing.T, c Config) credentials.Store
	// Dump returns every byte the storage holds as text (files' contents; rows with byte columns
	// in PostgreSQL's escape format), for looking for a secret in it.
	Dump(t *testing.T) string
	// MoveSealed copies the sealed token of principal from at provider over the sealed token of
	// principal to at provider, key ID included, leaving the rest of to's row as it is.
	MoveSealed(t *testing.T, provider, from, to string)
}

// Run runs every behaviour as a subtest, each on a Backend fresh returns.
func Run(t *testing.T, fresh func(t *testing.T) Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, b Backend)
	}{
		{"GetPutDeleteList", testGetPutDeleteList},
		{"UpdateRefreshesOnce", testUpdateRefreshesOnce},
		{"UpdateIsMutuallyExclusive", testUpdateIsMutuallyExclusive},
		{"UpdateWithoutStoreOrWithErrorWritesNothing", testUpdateWritesNothing},
		{"TakePendingIsSingleUse", testTakePendingIsSingleUse},
		{"TakePendingExpires", testTakePendingExpires},
		{"TakeWaiting", testTakeWaiting},
		{"MovedCiphertextIsRefused", testMovedCiphertextIsRefused},
		{"Rotation", testRotation},
		{"ResealRewritesOldKeys", testReseal},
		{"NoSecretInStorage", testNoSecretInStorage},
		{"NoKeyringIsRefused", testNoKeyringIsRefused},
		{"PlaintextRowIsRefusedByAnEncryptingStore", testPlaintextRowRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, fresh(t)) })
	}
}

// Keyring returns a keyring of fresh random keys named ids, the first encrypting.
func Keyring(t *testing.T, ids ...string) *codec.Keyring {
	keys := make([]codec.Key, len(ids))
	for i, id := range ids {
		keys[i] = Key(t, id)
	}
	ring, err := codec.NewKeyring(keys...)
	require.NoError(t, err)
	return ring
}

// keyMaterial remembers each test key's bytes by ID, so a key named again is the same key.
var keyMaterial sync.Map

// Key returns the test key named id: random, the same at every call in this process.
func Key(t *testing.T, id string) codec.Key {
	secret := make([]byte, codec.KeySize)
	_, err := rand.Read(secret)
	require.NoError(t, err)
	v, _ := keyMaterial.LoadOrStore(id, secret)
	return codec.Key{ID: id, Secret: v.([]byte)}
}

const (
	alice  = "https://idp.example alice"
	bob    = "https://idp.example bob"
	github = "github"
	google = "google"
)

// token is a token whose secrets name tag, times at whole seconds (PostgreSQL keeps
// microseconds).
func token(tag string, expiry time.Time) credentials.Token {
	return credentials.Token{
		AccessToken:  "access-" + tag,
		RefreshToken: "refresh-" + tag,
		TokenType:    "Bearer",
		Expiry:       expiry,
		Scopes:       []string{"repo", "read:user"},
		Obtained:     time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC),
	}
}

var hour = time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)

func testGetPutDeleteList(t *testing.T, b Backend) {
	ctx := context.Background()
	ring := Keyring(t, "k1")
	s := b.Open(t, Config{Keys: ring})
	_, found, err := s.Get(ctx, alice, github)
	require.NoError(t, err)
	assert.False(t, found, "an empty store has no token")

	require.NoError(t, s.Put(ctx, alice, github, token("a-gh", hour)))
	require.NoError(t, s.Put(ctx, alice, google, credentials.Token{AccessToken: "access-a-go", Obtained: hour}))
	require.NoError(t, s.Put(ctx, bob, github, token("b-gh", hour)))
	require.NoError(t, s.Put(ctx, alice, github, token("a-gh2", hour.Add(time.Hour))), "a put replaces")

	got, found, err := s.Get(ctx, alice, github)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, token("a-gh2", hour.Add(time.Hour)), got)
	got, found, err = b.Open(t, Config{Keys: ring}).Get(ctx, bob, github)
	require.NoError(t, err)
	require.True(t, found, "another store value on the same storage reads it")
	assert.Equal(t, token("b-gh", hour), got)

	list, err := s.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []credentials.Entry{
		{Principal: alice, Provider: github, Scopes: []string{"repo", "read:user"}, Expiry: hour.Add(time.Hour), Obtained: token("", hour).Obtained, Refreshable: true, KeyID: "k1"},
		{Principal: alice, Provider: google, Obtained: hour, KeyID: "k1"},
		{Principal: bob, Provider: github, Scopes: []string{"repo", "read:user"}, Expiry: hour, Obtained: token("", hour).Obtained, Refreshable: true, KeyID: "k1"},
	}, list)

	found, err = s.Delete(ctx, alice, github)
	require.NoError(t, err)
	assert.True(t, found)
	found, err = s.Delete(ctx, alice, github)
	require.NoError(t, err)
	assert.False(t, found, "a second delete finds nothing")
	_, found, err = s.Get(ctx, alice, github)
	require.NoError(t, err)
	assert.False(t, found, "a deleted token is gone")
	list, err = s.List(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 2)

	assert.Error(t, s.Put(ctx, "", github, token("x", hour)), "an empty principal is refused")
	assert.Error(t, s.Put(ctx, alice, strings.Repeat("p", 300), token("x", hour)), "an oversized provider is refused")
}

// concurrency is how many goroutines per store value race in the concurrency behaviours.
const concurrency = 8

// testUpdateRefreshesOnce: 2 store values x concurrency goroutines find the token expired at
// once; exactly one refreshes it (a rotating refresh token is used once), all get its result.
func testUpdateRefreshesOnce(t *testing.T, b Backend) {
	ctx := context.Background()
	ring := Keyring(t, "k1")
	stores := []credentials.Store{b.Open(t, Config{Keys: ring}), b.Open(t, Config{Keys: ring})}
	require.NoError(t, stores[0].Put(ctx, alice, github, token("old", hour.Add(-time.Hour))))

	var refreshes atomic.Int32
	got := make([]credentials.Token, 2*concurrency)
	errs := make([]error, len(got))
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i], errs[i] = stores[i%2].Update(ctx, alice, github, func(t credentials.Token, found bool) (credentials.Token, bool, error) {
				if !found || !t.Expiry.Before(hour) {
					return t, false, nil // fresh: nothing to do
				}
				if t.RefreshToken != "refresh-old" {
					return t, false, errors.New("refresh token used twice")
				}
				n := refreshes.Add(1)
				return token("new"+strconv.Itoa(int(n)), hour.Add(time.Hour)), true, nil
			})
		})
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		assert.Equal(t, "access-new1", got[i].AccessToken, "caller %d", i)
	}
	assert.Equal(t, int32(1), refreshes.Load(), "one refresh")
}

// testUpdateIsMutuallyExclusive: increments of a counter by Update from two store values lose
// none.
func testUpdateIsMutuallyExclusive(t *testing.T, b Backend) {
	ctx := context.Background()
	ring := Keyring(t, "k1")
	stores := []credentials.Store{b.Open(t, Config{Keys: ring}), b.Open(t, Config{Keys: ring})}
	const each = 5
	var wg sync.WaitGroup
	errs := make(chan error, 2*concurrency*each)
	for i := range 2 * concurrency {
		wg.Go(func() {
			for range each {
				_, err := stores[i%2].Update(ctx, alice, github, Increment)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, found, err := stores[0].Get(ctx, alice, github)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, strconv.Itoa(2*concurrency*each), got.AccessToken, "no increment lost")
}

// Increment is an Update function that counts in AccessToken (absent: 0).
func Increment(t credentials.Token, found bool) (credentials.Token, bool, error) {
	n := 0
	if found {
		var err error
		if n, err = strconv.Atoi(t.AccessToken); err != nil {
			return t, false, err
		}
	}
	return credentials.Token{AccessToken: strconv.Itoa(n + 1), Obtained: hour}, true, nil
}

func testUpdateWritesNothing(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Config{Keys: Keyring(t, "k1")})
	require.NoError(t, s.Put(ctx, alice, github, token("kept", hour)))
	next, err := s.Update(ctx, alice, github, func(credentials.Token, bool) (credentials.Token, bool, error) {
		return token("dropped", hour), false, nil
	})
	require.NoError(t, err)
	assert.Equal(t, "access-dropped", next.AccessToken, "Update returns what fn returned")
	refused := errors.New("provider refused the refresh")
	_, err = s.Update(ctx, alice, github, func(credentials.Token, bool) (credentials.Token, bool, error) {
		return token("failed", hour), true, refused
	})
	require.ErrorIs(t, err, refused)
	got, _, err := s.Get(ctx, alice, github)
	require.NoError(t, err)
	assert.Equal(t, "access-kept", got.AccessToken, "neither store=false nor an error wrote")
}

func pending(state, principal, provider string, expires time.Time) credentials.Pending {
	return credentials.Pending{
		State: state, Principal: principal, Provider: provider, Scopes: []string{"repo"},
		Verifier: "verifier-" + state, Waiters: []string{"toolcall-" + state}, Expires: expires,
	}
}

// testTakePendingIsSingleUse: 2 store values x concurrency goroutines take one state; one gets
// it.
func testTakePendingIsSingleUse(t *testing.T, b Backend) {
	ctx := context.Background()
	ring := Keyring(t, "k1")
	now := func() time.Time { return hour }
	stores := []credentials.Store{b.Open(t, Config{Keys: ring, Now: now}), b.Open(t, Config{Keys: ring, Now: now})}
	p := pending("state-1", alice, github, hour.Add(10*time.Minute))
	require.NoError(t, stores[0].PutPending(ctx, p))

	var taken atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 2*concurrency)
	for i := range 2 * concurrency {
		wg.Go(func() {
			got, found, err := stores[i%2].TakePending(ctx, "state-1")
			if err == nil && found {
				taken.Add(1)
				if !assert.Equal(t, p, got) {
					err = errors.New("taken pending differs")
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int32(1), taken.Load(), "one taker")
	_, found, err := stores[0].TakePending(ctx, "state-unknown")
	require.NoError(t, err)
	assert.False(t, found)
}

func testTakePendingExpires(t *testing.T, b Backend) {
	ctx := context.Background()
	ring := Keyring(t, "k1")
	var now atomic.Pointer[time.Time]
	now.Store(&hour)
	s := b.Open(t, Config{Keys: ring, Now: func() time.Time { return *now.Load() }})
	require.NoError(t, s.PutPending(ctx, pending("state-old", alice, github, hour.Add(time.Minute))))
	later := hour.Add(2 * time.Minute)
	now.Store(&later)
	_, found, err := s.TakePending(ctx, "state-old")
	require.NoError(t, err)
	assert.False(t, found, "an expired consent is not found")
	_, found, err = s.TakePending(ctx, "state-old")
	require.NoError(t, err)
	assert.False(t, found, "nor the second time")
	waiting, err := s.TakeWaiting(ctx, alice, github)
	require.NoError(t, err)
	assert.Equal(t, []credentials.Pending{pending("state-old", alice, github, hour.Add(time.Minute))}, waiting,
		"the expired consent stays for TakeWaiting: its call still waits")

	// A day after its expiry the next PutPending removes it.
	require.NoError(t, s.PutPending(ctx, pending("state-old", alice, github, hour.Add(time.Minute))))
	dayLater := hour.Add(25 * time.Hour)
	now.Store(&dayLater)
	require.NoError(t, s.PutPending(ctx, pending("state-new", bob, github, dayLater.Add(time.Minute))))
	waiting, err = s.TakeWaiting(ctx, alice, github)
	require.NoError(t, err)
	assert.Empty(t, waiting, "removed a day after its expiry")
}

func testTakeWaiting(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Config{Keys: Keyring(t, "k1"), Now: func() time.Time { return hour }})
	p1 := pending("s1", alice, github, hour.Add(time.Minute))
	p2 := pending("s2", alice, github, hour.Add(-time.Minute)) // expired: its call may still wait
	p3 := pending("s3", bob, github, hour.Add(time.Minute))
	p4 := pending("s4", alice, google, hour.Add(time.Minute))
	for _, p := range []credentials.Pending{p1, p2, p3, p4} {
		require.NoError(t, s.PutPending(ctx, p))
	}
	got, err := s.TakeWaiting(ctx, alice, github)
	require.NoError(t, err)
	assert.Equal(t, []credentials.Pending{p2, p1}, got, "alice's github consents, by expiry")
	got, err = s.TakeWaiting(ctx, alice, github)
	require.NoError(t, err)
	assert.Empty(t, got, "taken once")
	_, found, err := s.TakePending(ctx, "s1")
	require.NoError(t, err)
	assert.False(t, found, "a consent TakeWaiting took is gone")
	got3, found, err := s.TakePending(ctx, "s3")
	require.NoError(t, err)
	assert.True(t, found, "bob's consent stays")
	assert.Equal(t, p3, got3)
	got, err = s.TakeWaiting(ctx, alice, google)
	require.NoError(t, err)
	assert.Equal(t, []credentials.Pending{p4}, got)
}

func testMovedCiphertextIsRefused(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Config{Keys: Keyring(t, "k1")})
	require.NoError(t, s.Put(ctx, alice, github, token("alice", hour)))
	require.NoError(t, s.Put(ctx, bob, github, token("bob", hour)))
	b.MoveSealed(t, github, alice, bob)
	_, _, err := s.Get(ctx, bob, github)
	require.ErrorIs(t, err, codec.ErrNotAuthentic, "alice's token copied to bob's row does not open")
	assert.NotContains(t, err.Error(), "access-alice")
	_, err = s.Update(ctx, bob, github, Increment)
	require.ErrorIs(t, err, codec.ErrNotAuthentic)
	got, _, err := s.Get(ctx, alice, github)
	require.NoError(t, err)
	assert.Equal(t, "access-alice", got.AccessToken, "alice's own row still opens")
}

func testRotation(t *testing.T, b Backend) {
	ctx := context.Background()
	a := b.Open(t, Config{Keys: Keyring(t, "rot-a")})
	require.NoError(t, a.Put(ctx, alice, github, token("rotated", hour)))
	require.NoError(t, a.PutPending(ctx, pending("rot-state", alice, github, hour.Add(time.Hour))))

	// Phase 2 of a rotation: B encrypts, A still decrypts.
	ab := b.Open(t, Config{Keys: Keyring(t, "rot-b", "rot-a"), Now: func() time.Time { return hour }})
	got, found, err := ab.Get(ctx, alice, github)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, token("rotated", hour), got, "a token sealed with A opens with A and B")
	p, found, err := ab.TakePending(ctx, "rot-state")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "verifier-rot-state", p.Verifier, "a verifier sealed with A opens")
	assertKeyID(t, ab, "rot-a")

	_, err = ab.Update(ctx, alice, github, func(t credentials.Token, _ bool) (credentials.Token, bool, error) { return t, true, nil })
	require.NoError(t, err)
	assertKeyID(t, ab, "rot-b")

	onlyB := b.Open(t, Config{Keys: Keyring(t, "rot-b")})
	got, _, err = onlyB.Get(ctx, alice, github)
	require.NoError(t, err, "rewritten, it needs A no more")
	assert.Equal(t, token("rotated", hour), got)
	onlyA := b.Open(t, Config{Keys: Keyring(t, "rot-a")})
	_, _, err = onlyA.Get(ctx, alice, github)
	var notHeld *codec.KeyNotHeldError
	require.ErrorAs(t, err, &notHeld, "a store without B cannot open it")
	assert.Equal(t, "rot-b", notHeld.KeyID)
}

func assertKeyID(t *testing.T, s credentials.Store, want string) {
	t.Helper()
	list, err := s.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, want, list[0].KeyID)
}

// testNoSecretInStorage: with a keyring no token, refresh token or verifier is in the storage in
// any common encoding; in plaintext (the control) they are.
func testNoSecretInStorage(t *testing.T, b Backend) {
	ctx := context.Background()
	secrets := []string{"access-LEAKCHECK", "refresh-LEAKCHECK", "verifier-state-LEAKCHECK"}
	sealed := b.Open(t, Config{Keys: Keyring(t, "k1")})
	require.NoError(t, sealed.Put(ctx, alice, github, token("LEAKCHECK", hour)))
	require.NoError(t, sealed.PutPending(ctx, pending("state-LEAKCHECK", alice, github, hour.Add(time.Hour))))
	dump := b.Dump(t)
	require.Contains(t, dump, "state-LEAKCHECK", "the dump holds the rows")
	for _, s := range secrets {
		for _, form := range []string{s, base64.StdEncoding.EncodeToString([]byte(s)), fmt.Sprintf("%x", s)} {
			assert.NotContains(t, dump, form)
		}
	}

	plain := b.Open(t, Config{InsecurePlaintext: true})
	require.NoError(t, plain.Put(ctx, bob, github, token("PLAINCHECK", hour)))
	require.NoError(t, plain.PutPending(ctx, pending("state-PLAINCHECK", bob, github, hour.Add(time.Hour))))
	dump = b.Dump(t)
	for _, s := range []string{"access-PLAINCHECK", "refresh-PLAINCHECK", "verifier-state-PLAINCHECK"} {
		assert.Contains(t, dump, s, "the control: a plaintext store's secrets are found")
	}
}

func testNoKeyringIsRefused(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Config{})
	require.ErrorIs(t, s.Put(ctx, alice, github, token("x", hour)), credentials.ErrNoKeyring)
	_, _, err := s.Get(ctx, alice, github)
	require.ErrorIs(t, err, credentials.ErrNoKeyring)
	require.ErrorIs(t, s.PutPending(ctx, pending("s", alice, github, hour)), credentials.ErrNoKeyring)
	_, err = s.List(ctx)
	require.ErrorIs(t, err, credentials.ErrNoKeyring)
}

func testPlaintextRowRefused(t *testing.T, b Backend) {
	ctx := context.Background()
	plain := b.Open(t, Config{InsecurePlaintext: true})
	require.NoError(t, plain.Put(ctx, alice, github, token("plain", hour)))
	got, _, err := plain.Get(ctx, alice, github)
	require.NoError(t, err)
	assert.Equal(t, "access-plain", got.AccessToken)
	assertKeyID(t, plain, "")
	_, _, err = b.Open(t, Config{Keys: Keyring(t, "k1")}).Get(ctx, alice, github)
	require.ErrorIs(t, err, credentials.ErrPlaintextRow)
}

// testReseal: Reseal rewrites the tokens sealed with an old key, leaves the current key's alone,
// and reports one it cannot open while rewriting the rest.
func testReseal(t *testing.T, b Backend) {
	ctx := context.Background()
	a := b.Open(t, Config{Keys: Keyring(t, "rs-a")})
	require.NoError(t, a.Put(ctx, alice, github, token("a1", hour)))
	require.NoError(t, a.Put(ctx, alice, google, token("a2", hour)))
	c := b.Open(t, Config{Keys: Keyring(t, "rs-c")})
	require.NoError(t, c.Put(ctx, bob, google, token("c", hour))) // a key the next store lacks
	ba := b.Open(t, Config{Keys: Keyring(t, "rs-b", "rs-a")})
	require.NoError(t, ba.Put(ctx, bob, github, token("b", hour)))

	n, err := credentials.Reseal(ctx, ba, "rs-b")
	var notHeld *codec.KeyNotHeldError
	require.ErrorAs(t, err, &notHeld, "bob's google token names a key the store lacks")
	assert.Equal(t, "rs-c", notHeld.KeyID)
	assert.Equal(t, 2, n, "alice's two tokens rewritten")
	list, err := ba.List(ctx)
	require.NoError(t, err)
	keys := map[string]string{}
	for _, e := range list {
		keys[e.Principal+" "+e.Provider] = e.KeyID
	}
	assert.Equal(t, map[string]string{alice + " " + github: "rs-b", alice + " " + google: "rs-b", bob + " " + github: "rs-b", bob + " " + google: "rs-c"}, keys)
	got, _, err := b.Open(t, Config{Keys: Keyring(t, "rs-b")}).Get(ctx, alice, google)
	require.NoError(t, err, "readable without the old key")
	assert.Equal(t, token("a2", hour), got)
}
