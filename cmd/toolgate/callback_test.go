package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/wire"
)

// TestCallbackFlagsOpen: nothing without the flags; a non-loopback --callback-listen needs a
// public https --callback-url; the URL defaults to the bound address; --callback-url alone mints
// only (no listener).
func TestCallbackFlagsOpen(t *testing.T) {
	tests := []struct {
		name string
		give callbackFlags
		want string
	}{
		{"an allowed host without a listener", callbackFlags{allowHosts: []string{"hooks.example.com"}}, "needs --callback-listen"},
		{"beyond loopback without a public URL", callbackFlags{listen: "0.0.0.0:0"}, "not a loopback address"},
		{"a public URL over http", callbackFlags{listen: "0.0.0.0:0", url: "http://hooks.example.com/callback"}, "want an absolute https URL"},
		{"a mint-only URL over http", callbackFlags{url: "http://hooks.example.com/callback"}, "want an absolute https URL"},
		{"no port", callbackFlags{listen: "127.0.0.1"}, "want host:port"},
		{"a negative rate", callbackFlags{listen: "127.0.0.1:0", perMinute: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := tt.give.open()
			require.Error(t, err)
			assert.Nil(t, e)
			assert.Contains(t, err.Error(), tt.want)
			code, _ := classify(err)
			assert.Equal(t, ExitUsage, code)
		})
	}

	e, err := callbackFlags{}.open()
	require.NoError(t, err)
	assert.Nil(t, e, "no flags, no endpoint")

	e, err = callbackFlags{listen: "127.0.0.1:0"}.open()
	require.NoError(t, err)
	assert.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*/callback$`, e.url)
	e.close()

	e, err = callbackFlags{url: "https://hooks.example.com/callback"}.open()
	require.NoError(t, err)
	assert.Nil(t, e.listener, "mint only")
	e.close()

	e, err = callbackFlags{listen: "0.0.0.0:0", url: "https://hooks.example.com/cb", allowHosts: []string{"10.0.0.7"}}.open()
	require.NoError(t, err)
	defer e.close()
	assert.ElementsMatch(t, []string{"10.0.0.7", "hooks.example.com"}, e.allow, "the public URL's host is accepted")
}

// TestCallbackEndpointServed: the endpoint the worker serves mints URLs under its own and answers
// them: GET 405, a tampered URL 410, a real POST updates the call with wire.UpdateInput; without
// a key source or with a short key it refuses to start, naming the secret, never a value.
func TestCallbackEndpointServed(t *testing.T) {
	e, err := callbackFlags{listen: "127.0.0.1:0", keySecret: "callback_key"}.open()
	require.NoError(t, err)
	defer e.close()
	c := &mocks.Client{}
	handle := &mocks.WorkflowUpdateHandle{}
	handle.On("Get", mock.Anything, mock.Anything).Return(nil)
	c.On("UpdateWorkflow", mock.Anything, mock.MatchedBy(func(o client.UpdateWorkflowOptions) bool {
		return o.WorkflowID == "toolcall-1" && o.UpdateName == wire.UpdateInput
	})).Return(handle, nil)

	_, err = e.serve(t.Context(), zap.NewNop(), c, nil)
	assert.ErrorContains(t, err, `"callback_key"`)
	_, err = e.serve(t.Context(), zap.NewNop(), c, secrets.Map{"callback_key": "short-s3cr3t"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "short-s3cr3t")

	urls, err := e.serve(t.Context(), zap.NewNop(), c, secrets.Map{"callback_key": strings.Repeat("k", 32)})
	require.NoError(t, err)
	u, _, _, err := urls.Mint(t.Context(), "toolcall-1", "payment", time.Hour)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(u, e.url+"/"), u)

	post := func(method, target string) int {
		req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(`{"paid":true}`))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusMethodNotAllowed, post(http.MethodGet, u))
	assert.Equal(t, http.StatusGone, post(http.MethodPost, u[:len(u)-2]+"AA"))
	assert.Equal(t, http.StatusOK, post(http.MethodPost, u))
	c.AssertNumberOfCalls(t, "UpdateWorkflow", 1)
}

// TestDevCallbackKey: dev's own key is made once in the data directory (0600) and read again at
// the next start; without a data directory it is new each time; the worker's secret comes first.
func TestDevCallbackKey(t *testing.T) {
	dir := t.TempDir()
	first, err := devCallbackKey(dir)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(first), 32)
	info, err := os.Stat(filepath.Join(dir, "callback.key"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	again, err := devCallbackKey(dir)
	require.NoError(t, err)
	assert.Equal(t, first, again, "URLs live across restarts")

	a, err := devCallbackKey("")
	require.NoError(t, err)
	b, err := devCallbackKey("")
	require.NoError(t, err)
	assert.NotEqual(t, a, b)

	keys, err := devCallbackKeys(secrets.Map{"callback_key": "the-worker-s"}, "callback_key", "")
	require.NoError(t, err)
	v, err := keys.Secret(context.Background(), "callback_key")
	require.NoError(t, err)
	assert.Equal(t, "the-worker-s", v, "the worker's secret first")
}
