package credentials

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// TestOAuthOverFileStore runs the consent flow and a concurrent refresh on the FileStore the
// CLI uses: its pending consents are single use and its Update lock makes the refresh happen
// once.
func TestOAuthOverFileStore(t *testing.T) {
	provider := newFakeProvider(t)
	clock := &testClock{now: time.Now()}
	store := &FileStore{Dir: filepath.Join(t.TempDir(), "credentials"), InsecurePlaintext: true, Now: clock.Now}
	require.NoError(t, store.Init())
	oauth, err := NewOAuth(OAuthOptions{Providers: []Provider{provider.provider()}, Store: store,
		Secrets: mapSecrets{testSecretName: testClientSecret}, RedirectURL: redirectURL, Now: clock.Now})
	require.NoError(t, err)
	var mu sync.Mutex
	var woken []string
	handler, err := ConsentHandler(oauth, ConsentOptions{Notify: func(_ context.Context, waiter string, sig wire.ConsentSignal) error {
		mu.Lock()
		defer mu.Unlock()
		woken = append(woken, waiter+" "+sig.Provider+" "+sig.Refused)
		return nil
	}})
	require.NoError(t, err)
	ask := func(waiter string) (string, error) {
		return oauth.AccessToken(context.Background(), toolcore.CredentialRequest{Principal: alice,
			Credential: toolcore.Credential{Provider: "example"}, Waiter: waiter})
	}
	redirect := func(q url.Values) int {
		r := httptest.NewRequest(http.MethodGet, "/oauth/callback?"+q.Encode(), nil)
		r.Host = "localhost:8250"
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		return w.Code
	}

	_, err = ask("toolcall-1")
	var first *toolcore.ConsentRequiredError
	require.ErrorAs(t, err, &first)
	_, err = ask("toolcall-2")
	var second *toolcore.ConsentRequiredError
	require.ErrorAs(t, err, &second)

	state, code := provider.authorize(first.URL)
	require.Equal(t, http.StatusOK, redirect(url.Values{"state": {state}, "code": {code}}))
	assert.Equal(t, http.StatusGone, redirect(url.Values{"state": {state}, "code": {code}}), "single use")
	state2, code2 := provider.authorize(second.URL)
	assert.Equal(t, http.StatusGone, redirect(url.Values{"state": {state2}, "code": {code2}}), "taken with the waiting calls")
	mu.Lock()
	assert.ElementsMatch(t, []string{"toolcall-1 example ", "toolcall-2 example "}, woken)
	mu.Unlock()

	consented, err := ask("toolcall-1")
	require.NoError(t, err)

	// Once the token has expired, concurrent attempts refresh it once.
	_, err = store.Update(context.Background(), alice.Key(), "example", func(t Token, _ bool) (Token, bool, error) {
		t.Expiry = clock.Now().Add(-time.Minute)
		return t, true, nil
	})
	require.NoError(t, err)
	const attempts = 6
	tokens := make([]string, attempts)
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() {
			tok, err := ask("toolcall-3")
			assert.NoError(t, err)
			tokens[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range tokens {
		assert.Equal(t, tokens[0], tok)
	}
	assert.NotEqual(t, consented, tokens[0])
	exchanges, refreshes := provider.counts()
	assert.Equal(t, 1, exchanges)
	assert.Equal(t, 1, refreshes)
}

// BenchmarkAccessTokenFileStore is what a tool with a credential adds to each attempt once its
// principal has a valid token: a FileStore read and an AES-256-GCM open, no request to the
// provider.
func BenchmarkAccessTokenFileStore(b *testing.B) {
	ring, err := codec.NewKeyring(codec.Key{ID: "k1", Secret: make([]byte, codec.KeySize)})
	require.NoError(b, err)
	store := &FileStore{Dir: filepath.Join(b.TempDir(), "credentials"), Keyring: ring}
	require.NoError(b, store.Put(context.Background(), alice.Key(), "example", Token{AccessToken: "access-0000000000000000",
		Scopes: []string{"read"}, Expiry: time.Now().Add(time.Hour)}))
	oauth, err := NewOAuth(OAuthOptions{Providers: []Provider{{Name: "example", Issuer: "https://idp.example", ClientID: "c", Scopes: []string{"read"}}},
		Store: store, RedirectURL: redirectURL})
	require.NoError(b, err)
	req := toolcore.CredentialRequest{Principal: alice, Credential: toolcore.Credential{Provider: "example"}}
	for b.Loop() {
		if _, err := oauth.AccessToken(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
