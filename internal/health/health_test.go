package health

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ now atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.now.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.now.Add(int64(d)) }

// TestProbeCachesAnswers: within CacheTTL a probe reuses the check's answer (probes cannot
// hammer the frontend), after it the check runs again; Down is not ready at once and for good.
func TestProbeCachesAnswers(t *testing.T) {
	clock := &fakeClock{}
	clock.now.Store(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC).UnixNano())
	p := NewProbe(Options{CacheTTL: 2 * time.Second, now: clock.Now})
	require.ErrorIs(t, p.Ready(), ErrStarting)

	var calls atomic.Int32
	errFrontend := errors.New("frontend unreachable")
	var failing atomic.Bool
	p.SetCheck(func(context.Context) error {
		calls.Add(1)
		if failing.Load() {
			return errFrontend
		}
		return nil
	})
	for range 5 {
		require.NoError(t, p.Ready())
	}
	assert.EqualValues(t, 1, calls.Load(), "answers within the TTL come from the cache")

	failing.Store(true)
	clock.Advance(time.Second)
	assert.NoError(t, p.Ready(), "still the cached answer")
	clock.Advance(time.Second)
	assert.ErrorIs(t, p.Ready(), errFrontend, "the TTL passed: checked again")
	assert.EqualValues(t, 2, calls.Load())

	failing.Store(false)
	clock.Advance(2 * time.Second)
	require.NoError(t, p.Ready())
	p.Down()
	assert.ErrorIs(t, p.Ready(), ErrDown, "Down outlives the cached ready answer")
	clock.Advance(time.Hour)
	assert.ErrorIs(t, p.Ready(), ErrDown)
	assert.EqualValues(t, 3, calls.Load(), "no check after Down")
}

// TestProbeCheckTimeout: a check runs under Options.Timeout, not the probe request's context.
func TestProbeCheckTimeout(t *testing.T) {
	p := NewProbe(Options{Timeout: 50 * time.Millisecond})
	p.SetCheck(func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	assert.ErrorIs(t, p.Ready(), context.DeadlineExceeded)
}

// TestWrapAnswersBeforeNext: the probe paths answer without reaching next (whose Host check and
// authentication would refuse a kubelet), with fixed bodies that name no reason; other paths
// reach next.
func TestWrapAnswersBeforeNext(t *testing.T) {
	p := NewProbe(Options{})
	refuse := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "refused", http.StatusUnauthorized)
	})
	h := p.Wrap(refuse)
	get := func(method, path string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(method, path, nil)
		req.Host = "10.1.2.3:9464"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body, err := io.ReadAll(rec.Result().Body)
		require.NoError(t, err)
		return rec.Code, string(body)
	}
	tests := []struct {
		name     string
		check    Check // nil: none set
		method   string
		path     string
		wantCode int
		wantBody string
	}{
		{name: "live", method: http.MethodGet, path: LivePath, wantCode: http.StatusOK, wantBody: "ok\n"},
		{name: "live head", method: http.MethodHead, path: LivePath, wantCode: http.StatusOK, wantBody: "ok\n"},
		{name: "not ready before a check", method: http.MethodGet, path: ReadyPath, wantCode: http.StatusServiceUnavailable, wantBody: "not ready\n"},
		{name: "a failing check names no reason", check: func(context.Context) error { return errors.New("dial 10.0.0.7:7233: refused") },
			method: http.MethodGet, path: ReadyPath, wantCode: http.StatusServiceUnavailable, wantBody: "not ready\n"},
		{name: "ready", check: func(context.Context) error { return nil }, method: http.MethodGet, path: ReadyPath, wantCode: http.StatusOK, wantBody: "ready\n"},
		{name: "post refused", check: func(context.Context) error { return nil }, method: http.MethodPost, path: ReadyPath, wantCode: http.StatusMethodNotAllowed, wantBody: "method not allowed\n"},
		{name: "other paths reach next", method: http.MethodGet, path: "/metrics", wantCode: http.StatusUnauthorized, wantBody: "refused\n"},
		{name: "a prefix is another path", method: http.MethodGet, path: "/readyz/x", wantCode: http.StatusUnauthorized, wantBody: "refused\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.SetCheck(tt.check)
			code, body := get(tt.method, tt.path)
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, tt.wantBody, body)
		})
	}
}
