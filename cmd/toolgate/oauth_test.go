package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/mocks"

	"github.com/toolgate/toolgate/wire"
)

// TestConsentFlagsOpen: --oauth-providers loads before anything dials, a non-loopback
// --consent-listen needs a public https --consent-url, and the redirect URL defaults to the bound
// address (port 0 picks one).
func TestConsentFlagsOpen(t *testing.T) {
	providers := filepath.Join(t.TempDir(), "providers.json")
	require.NoError(t, os.WriteFile(providers, []byte(`{"providers":[{"name":"example","issuer":"https://idp.example","clientID":"c"}]}`), 0o600))
	withSecret := filepath.Join(t.TempDir(), "secret.json")
	require.NoError(t, os.WriteFile(withSecret, []byte(`{"providers":[{"name":"example","issuer":"https://idp.example","clientID":"c","clientSecret":"s3cr3t-value"}]}`), 0o600))

	tests := []struct {
		name string
		give oauthFlags
		want string
	}{
		{"a consent URL without providers", oauthFlags{url: "https://toolgate.example.com/oauth/callback"}, "need --oauth-providers"},
		{"a client secret in the file", oauthFlags{providersFile: withSecret, listen: "127.0.0.1:0"}, "holds no secret"},
		{"beyond loopback without a public URL", oauthFlags{providersFile: providers, listen: "0.0.0.0:0"}, "not a loopback address"},
		{"a public URL over http", oauthFlags{providersFile: providers, listen: "0.0.0.0:0", url: "http://toolgate.example.com/oauth/callback"}, "want an absolute https URL"},
		{"no port", oauthFlags{providersFile: providers, listen: "127.0.0.1"}, "want host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := tt.give.open()
			require.Error(t, err)
			assert.Nil(t, e)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "s3cr3t-value")
			code, _ := classify(err)
			assert.Equal(t, ExitUsage, code)
		})
	}

	e, err := oauthFlags{}.open()
	require.NoError(t, err)
	assert.Nil(t, e, "no providers, no endpoint")

	e, err = oauthFlags{providersFile: providers, listen: "127.0.0.1:0"}.open()
	require.NoError(t, err)
	assert.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*/oauth/callback$`, e.redirect)
	e.close()

	e, err = oauthFlags{providersFile: providers, listen: "0.0.0.0:0", url: "https://toolgate.example.com/cb", allowHosts: []string{"10.0.0.7"}}.open()
	require.NoError(t, err)
	defer e.close()
	assert.Equal(t, "https://toolgate.example.com/cb", e.redirect)
	assert.ElementsMatch(t, []string{"10.0.0.7", "toolgate.example.com"}, e.allowHosts, "the public URL's host is accepted")
}

// TestSignalConsent: the consent endpoint wakes a call with wire.SignalConsent on its workflow ID;
// a call that has ended (NotFound) is not an error, anything else is.
func TestSignalConsent(t *testing.T) {
	c := &mocks.Client{}
	sig := wire.ConsentSignal{Provider: "github"}
	c.On("SignalWorkflow", mock.Anything, "toolcall-live", "", wire.SignalConsent, sig).Return(nil).Once()
	c.On("SignalWorkflow", mock.Anything, "toolcall-gone", "", wire.SignalConsent, sig).Return(serviceerror.NewNotFound("workflow execution already completed")).Once()
	down := errors.New("frontend unavailable")
	c.On("SignalWorkflow", mock.Anything, "toolcall-other", "", wire.SignalConsent, sig).Return(down).Once()
	notify := signalConsent(c)
	assert.NoError(t, notify(context.Background(), "toolcall-live", sig))
	assert.NoError(t, notify(context.Background(), "toolcall-gone", sig), "a call that has ended needs no wake-up")
	assert.ErrorIs(t, notify(context.Background(), "toolcall-other", sig), down)
	c.AssertExpectations(t)
}
