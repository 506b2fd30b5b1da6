package callbacks

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

const (
	keyA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	keyB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	base = "https://hooks.example.com/toolgate/callback"
)

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeCall is a call's update handler: it records each update and answers with answer(n), n
// counting from 1.
type fakeCall struct {
	mu      sync.Mutex
	updates []client.UpdateWorkflowOptions
	answer  func(n int, a wire.InputAnswer) error
}

func (f *fakeCall) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	f.updates = append(f.updates, o)
	n := len(f.updates)
	f.mu.Unlock()
	a := o.Args[0].(wire.InputAnswer)
	if f.answer == nil {
		return handle{}, nil
	}
	return handle{err: f.answer(n, a)}, nil
}

func (f *fakeCall) sent() []client.UpdateWorkflowOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]client.UpdateWorkflowOptions(nil), f.updates...)
}

type handle struct{ err error }

func (handle) WorkflowID() string               { return "" }
func (handle) RunID() string                    { return "" }
func (handle) UpdateID() string                 { return "" }
func (h handle) Get(context.Context, any) error { return h.err }

// harness is an endpoint on a fake call with a settable clock and key.
type harness struct {
	t     *testing.T
	clock *clock
	keys  secrets.Map
	call  *fakeCall
	ep    *Endpoint
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, clock: &clock{now: time.Unix(1_800_000_000, 0)}, keys: secrets.Map{DefaultKeyName: keyA}, call: &fakeCall{}}
	opts.URL = base
	opts.Keys = h.keys
	opts.Client = h.call
	opts.Now = h.clock.Now
	ep, err := New(t.Context(), opts)
	require.NoError(t, err)
	h.ep = ep
	return h
}

func (h *harness) mint(workflowID, key string, ttl time.Duration) (string, string, time.Time) {
	h.t.Helper()
	u, hash, exp, err := h.ep.Mint(h.t.Context(), workflowID, key, ttl)
	require.NoError(h.t, err)
	return u, hash, exp
}

// post sends body to u as from remote, with Host hooks.example.com.
func (h *harness) post(u, contentType, body, remote string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, u, strings.NewReader(body))
	r.RemoteAddr = remote
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ep.ServeHTTP(w, r)
	return w
}

// A minted URL answers its call's question once: the update carries the workflow ID, the key,
// the body and content type, and the token whose SHA-256 the question records; the URL is
// under the endpoint's and shows neither the workflow ID nor the key.
func TestMintedURLAnswersItsQuestion(t *testing.T) {
	h := newHarness(t, Options{})
	u, hash, exp := h.mint("toolcall-pay-1", "payment", time.Hour)
	assert.True(t, strings.HasPrefix(u, base+"/"), u)
	assert.NotContains(t, u, "toolcall-pay-1")
	assert.NotContains(t, u, "payment")
	assert.Equal(t, h.clock.Now().Add(time.Hour).UTC(), exp)

	w := h.post(u, "application/json", `{"status":"paid"}`, "192.0.2.1:1000")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, textAccepted, w.Body.String())
	sent := h.call.sent()
	require.Len(t, sent, 1)
	assert.Equal(t, "toolcall-pay-1", sent[0].WorkflowID)
	assert.Equal(t, wire.UpdateInput, sent[0].UpdateName)
	a := sent[0].Args[0].(wire.InputAnswer)
	assert.Equal(t, 0, a.Round, "the current round")
	assert.Equal(t, "callback", a.By)
	sum := sha256.Sum256([]byte(a.CallbackToken))
	assert.Equal(t, hash, hex.EncodeToString(sum[:]), "the token is the one whose hash the question records")
	var got toolcore.CallbackResult
	require.NoError(t, json.Unmarshal(a.Responses["payment"], &got))
	assert.Equal(t, toolcore.CallbackResult{ContentType: "application/json", Body: []byte(`{"status":"paid"}`)}, got)

	u2, hash2, _ := h.mint("toolcall-pay-1", "payment", time.Hour)
	assert.NotEqual(t, u, u2, "every URL is new")
	assert.NotEqual(t, hash, hash2)
}

// A forged, tampered, foreign or expired URL is refused 410 with one fixed text, and the call is
// never asked.
func TestForgedTamperedOrExpiredURLRefusedWithoutTemporal(t *testing.T) {
	h := newHarness(t, Options{})
	u, _, _ := h.mint("toolcall-pay-1", "payment", time.Hour)
	segment := u[len(base)+1:]
	raw, err := base64.RawURLEncoding.DecodeString(segment)
	require.NoError(t, err)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base + "/" + base64.RawURLEncoding.EncodeToString(b)
	}
	other := newHarness(t, Options{})
	other.keys[DefaultKeyName] = keyB
	foreign, _, _ := other.mint("toolcall-pay-1", "payment", time.Hour)

	tests := []struct {
		name string
		give string
	}{
		{"random", base + "/" + base64.RawURLEncoding.EncodeToString(make([]byte, 80))},
		{"nonce flipped", flip(0)},
		{"ciphertext flipped", flip(20)},
		{"tag flipped", flip(len(raw) - 1)},
		{"truncated", base + "/" + segment[:len(segment)-4]},
		{"another key's", base + "/" + foreign[len(base)+1:]},
		{"not base64", base + "/" + strings.Repeat("*", 40)},
		{"too long", base + "/" + strings.Repeat("A", maxSegmentBytes+1)},
		{"empty", base + "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := h.post(tt.give, "", "{}", "192.0.2.9:1")
			assert.Equal(t, http.StatusGone, w.Code)
			assert.Equal(t, textGone, w.Body.String())
		})
	}
	h.clock.Advance(time.Hour)
	w := h.post(u, "", "{}", "192.0.2.9:1")
	assert.Equal(t, http.StatusGone, w.Code, "expired at its expiry")
	assert.Equal(t, textGone, w.Body.String())
	assert.Empty(t, h.call.sent(), "no refused URL reaches Temporal")
}

// Keys rotate: a URL sealed with the old key opens while the secret lists it after the new one,
// and is refused once it is gone; new URLs are sealed with the first key.
func TestRotatedKeys(t *testing.T) {
	h := newHarness(t, Options{})
	old, _, _ := h.mint("wf", "k", time.Hour)
	h.keys[DefaultKeyName] = keyB + "\n" + keyA + "\n"
	fresh, _, _ := h.mint("wf", "k2", time.Hour)
	assert.Equal(t, http.StatusOK, h.post(old, "", "{}", "192.0.2.1:1").Code, "the old key still opens")
	h.keys[DefaultKeyName] = keyB
	assert.Equal(t, http.StatusGone, h.post(old, "", "{}", "192.0.2.1:1").Code, "the old key is gone")
	assert.Equal(t, http.StatusOK, h.post(fresh, "", "{}", "192.0.2.1:1").Code, "sealed with the new key")
}

func TestNewRefusesBadOptions(t *testing.T) {
	keys := secrets.Map{DefaultKeyName: keyA}
	tests := []struct {
		name string
		give Options
		want string
	}{
		{"short key", Options{URL: base, Keys: secrets.Map{DefaultKeyName: "short"}, Client: &fakeCall{}}, "at least 32"},
		{"no key", Options{URL: base, Keys: secrets.Map{}, Client: &fakeCall{}}, "callback_key"},
		{"too many keys", Options{URL: base, Keys: secrets.Map{DefaultKeyName: strings.Repeat(keyA+"\n", MaxKeys+1)}, Client: &fakeCall{}}, "more than"},
		{"http beyond loopback", Options{URL: "http://hooks.example.com/cb", Keys: keys, Client: &fakeCall{}}, "https"},
		{"query", Options{URL: base + "?a=b", Keys: keys, Client: &fakeCall{}}, "query"},
		{"relative", Options{URL: "/cb", Keys: keys, Client: &fakeCall{}}, "absolute"},
		{"no client", Options{URL: base, Keys: keys}, "client"},
		{"no keys", Options{URL: base, Client: &fakeCall{}}, "Keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(t.Context(), tt.give)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "aaaa", "an error never shows a key")
		})
	}
	ep, err := New(t.Context(), Options{URL: "http://127.0.0.1:8251/cb/", Keys: keys, Client: &fakeCall{}})
	require.NoError(t, err, "http on loopback")
	assert.Equal(t, "/cb", ep.Path())
}

func TestMintRefusesBadArguments(t *testing.T) {
	h := newHarness(t, Options{})
	for _, tt := range []struct {
		name, workflowID, key string
		ttl                   time.Duration
	}{
		{"no workflow", "", "k", time.Hour},
		{"workflow too long", strings.Repeat("w", MaxWorkflowIDBytes+1), "k", time.Hour},
		{"no key", "wf", "", time.Hour},
		{"no ttl", "wf", "k", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := h.ep.Mint(t.Context(), tt.workflowID, tt.key, tt.ttl)
			assert.Error(t, err)
		})
	}
}

// The handler's face: Host checked, POST only, bounded body, content type understood, a rate
// limit per address; never the body in an answer.
func TestHandlerRefusals(t *testing.T) {
	h := newHarness(t, Options{RequestsPerMinute: 3})
	u, _, _ := h.mint("wf", "k", time.Hour)
	do := func(method, host, contentType, body, remote string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, u, strings.NewReader(body))
		r.Host, r.RemoteAddr = host, remote
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		h.ep.ServeHTTP(w, r)
		return w
	}
	tests := []struct {
		name                            string
		method, host, contentType, body string
		want                            int
	}{
		{"foreign host", http.MethodPost, "evil.example.com", "", "{}", http.StatusForbidden},
		{"GET", http.MethodGet, "hooks.example.com", "", "", http.StatusMethodNotAllowed},
		{"HEAD", http.MethodHead, "hooks.example.com", "", "", http.StatusMethodNotAllowed},
		{"PUT", http.MethodPut, "hooks.example.com", "", "{}", http.StatusMethodNotAllowed},
		{"body too large", http.MethodPost, "hooks.example.com", "", strings.Repeat("x", toolcore.MaxCallbackBodyBytes+1), http.StatusRequestEntityTooLarge},
		{"bad content type", http.MethodPost, "127.0.0.1:8251", "text/<script>", "<script>", http.StatusUnsupportedMediaType},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(tt.method, tt.host, tt.contentType, tt.body, "192.0.2."+string(rune('1'+i))+":1")
			assert.Equal(t, tt.want, w.Code)
			assert.NotContains(t, w.Body.String(), "script")
			assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
		})
	}
	assert.Equal(t, http.MethodPost, do(http.MethodGet, "hooks.example.com", "", "", "192.0.2.50:1").Header().Get("Allow"))
	assert.Empty(t, h.call.sent(), "nothing refused reached the call")

	for range 3 {
		require.NotEqual(t, http.StatusTooManyRequests, do(http.MethodPost, "hooks.example.com", "", "{}", "192.0.2.99:1").Code)
	}
	w := do(http.MethodPost, "hooks.example.com", "", "{}", "192.0.2.99:2")
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "the fourth request of one address in a minute")
	assert.NotEmpty(t, w.Header().Get("Retry-After"))
}

// What the call says maps to the answer: accepted 200, refused (a second callback) 409, ended
// 410, unreachable 503; a call that does not wait yet is tried again until it does, or refused
// after EarlyWait.
func TestDeliveryOutcomes(t *testing.T) {
	refused := temporal.NewApplicationError(`round 1 asks no question "k" (or it was answered)`, "")
	notWaiting := temporal.NewApplicationError("the call is not waiting for input", "")
	unknown := temporal.NewApplicationError("unknown update toolgate.input. KnownUpdates=[]", "")
	tests := []struct {
		name    string
		answer  func(n int, a wire.InputAnswer) error
		want    int
		updates int
	}{
		{"accepted", func(int, wire.InputAnswer) error { return nil }, http.StatusOK, 1},
		{"second", func(int, wire.InputAnswer) error { return refused }, http.StatusConflict, 1},
		{"ended", func(int, wire.InputAnswer) error {
			return serviceerror.NewNotFound("workflow execution already completed")
		}, http.StatusGone, 1},
		{"unreachable", func(int, wire.InputAnswer) error { return serviceerror.NewUnavailable("down") }, http.StatusServiceUnavailable, 1},
		{"early then waiting", func(n int, _ wire.InputAnswer) error {
			switch n {
			case 1:
				return unknown
			case 2:
				return notWaiting
			}
			return nil
		}, http.StatusOK, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.call.answer = tt.answer
			u, _, _ := h.mint("wf", "k", time.Hour)
			w := h.post(u, "", "{}", "192.0.2.1:1")
			assert.Equal(t, tt.want, w.Code, w.Body.String())
			assert.Len(t, h.call.sent(), tt.updates)
		})
	}

	h := newHarness(t, Options{EarlyWait: time.Millisecond})
	h.call.answer = func(int, wire.InputAnswer) error { return notWaiting }
	u, _, _ := h.mint("wf", "k", time.Hour)
	assert.Equal(t, http.StatusConflict, h.post(u, "", "{}", "192.0.2.1:1").Code, "still not waiting after EarlyWait")
}

// A key the secret source cannot read fails the request 500, without a word of why to the
// sender.
func TestUnreadableKeyIsAServerError(t *testing.T) {
	h := newHarness(t, Options{})
	u, _, _ := h.mint("wf", "k", time.Hour)
	delete(h.keys, DefaultKeyName)
	w := h.post(u, "", "{}", "192.0.2.1:1")
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.NotContains(t, w.Body.String(), DefaultKeyName)
	_, _, _, err := h.ep.Mint(t.Context(), "wf", "k", time.Hour)
	assert.True(t, errors.Is(err, toolcore.ErrSecretNotFound), "%v", err)
}
