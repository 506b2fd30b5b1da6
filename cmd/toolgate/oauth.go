package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/credentials"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// The consent endpoint's defaults.
const (
	// defaultConsentListen is --consent-listen's default: a fixed port, so that the redirect URL
	// registered at the providers stays the same from one run to the next.
	defaultConsentListen = "127.0.0.1:8250"
	// consentPath is where the consent endpoint answers (and the default redirect URL's path).
	consentPath = "/oauth/callback"
)

// oauthFlags are the per-user credential flags of toolgate worker and dev: the providers file
// and the consent endpoint.
type oauthFlags struct {
	providersFile string
	listen        string
	url           string
	allowHosts    []string
	ttl           time.Duration
	authOnly      bool
}

// addOAuthFlags adds --oauth-providers, --consent-listen, --consent-url, --allow-consent-host,
// --consent-ttl and --oauth-authenticated-only, whose default is authOnly: true for a worker (any
// client that may start calls could otherwise use any user's token by asserting them), false for
// dev (one user on loopback, where `toolgate call --as` is how principals are tried).
func addOAuthFlags(cmd *cobra.Command, f *oauthFlags, authOnly bool) {
	fs := cmd.Flags()
	fs.StringVar(&f.providersFile, "oauth-providers", "", "JSON file of the OAuth providers whose per-user tokens tools may ask for (client secrets by name, resolved from the secret source); enables the consent endpoint")
	fs.StringVar(&f.listen, "consent-listen", defaultConsentListen, "with --oauth-providers, serve the consent endpoint (the providers' redirect URI) on this host:port at "+consentPath+"; beyond loopback only with --consent-url")
	fs.StringVar(&f.url, "consent-url", "", "the consent endpoint's public URL, registered at every provider as the redirect URI (default http://<--consent-listen>"+consentPath+")")
	fs.StringSliceVar(&f.allowHosts, "allow-consent-host", nil, "Host name the consent endpoint accepts besides loopback names and --consent-url's host (repeat)")
	fs.BoolVar(&f.authOnly, "oauth-authenticated-only", authOnly, "give per-user tokens only to calls whose principal is authenticated (toolgate mcp with OAuth, or a frontend authorizer), not one a client merely asserts (--as); =false lets asserted principals have them")
	fs.DurationVar(&f.ttl, "consent-ttl", credentials.DefaultConsentTTL, "how long a consent URL may be used (single use; keep it at least as long as the tools' consent timeout)")
	bindEnv(fs, "oauth-providers", "TOOLGATE_OAUTH_PROVIDERS")
	bindEnv(fs, "consent-url", "TOOLGATE_CONSENT_URL")
}

// consentEndpoint is the consent endpoint opened by oauthFlags.open: providers loaded, listener
// bound (so port 0 has become a port and the redirect URL is known), not serving yet.
type consentEndpoint struct {
	*publicListener
	providers []credentials.Provider
	redirect  string
	ttl       time.Duration
	authOnly  bool
}

// open loads --oauth-providers and binds --consent-listen; nil without --oauth-providers. A
// non-loopback listen address needs --consent-url (the endpoint has no authentication: the
// consent's state is the capability, and the public URL says the exposure is meant), and a
// --consent-url beyond loopback must be https. Call close when done.
func (f oauthFlags) open() (*consentEndpoint, error) {
	if f.ttl < 0 {
		return nil, badInput(fmt.Errorf("--consent-ttl %s must not be negative", f.ttl))
	}
	if f.providersFile == "" {
		if f.url != "" || len(f.allowHosts) > 0 {
			return nil, badInput(errors.New("--consent-url and --allow-consent-host need --oauth-providers"))
		}
		return nil, nil
	}
	providers, err := credentials.LoadProviders(f.providersFile)
	if err != nil {
		return nil, badInput(fmt.Errorf("--oauth-providers: %w", err))
	}
	ln, err := openPublicListener(publicFlags{listen: "--consent-listen", url: "--consent-url"},
		f.listen, f.url, consentPath, f.allowHosts)
	if err != nil {
		return nil, err
	}
	return &consentEndpoint{publicListener: ln, providers: providers, redirect: ln.url, ttl: f.ttl, authOnly: f.authOnly}, nil
}

// serve builds the OAuth client over store (client secrets from secrets) and serves the consent
// endpoint, which wakes the waiting calls through c. It returns the worker's credential source.
// ctx's end makes the endpoint's readiness probe fail; close stops it.
func (e *consentEndpoint) serve(ctx context.Context, logger *zap.Logger, c client.Client, store credentials.Store, secrets toolcore.SecretSource) (toolcore.CredentialSource, error) {
	oauth, err := credentials.NewOAuth(credentials.OAuthOptions{Providers: e.providers, Store: store, Secrets: secrets, RedirectURL: e.redirect,
		ConsentTTL: e.ttl, AuthenticatedOnly: e.authOnly})
	if err != nil {
		return nil, badInput(fmt.Errorf("--oauth-providers: %w", err))
	}
	handler, err := credentials.ConsentHandler(oauth, credentials.ConsentOptions{Notify: signalConsent(c), AllowedHosts: e.allowHosts,
		Logger: slog.New(zapslog.NewHandler(logger.Core(), zapslog.WithName("consent")))})
	if err != nil {
		return nil, err
	}
	e.publicListener.serve(ctx, logger, c, "consent", consentPath, "", handler)
	logger.Info("consent endpoint serving; register its URL at every provider as the redirect URI",
		zap.String("listen", e.ln.Addr().String()), zap.String("url", e.redirect))
	return oauth, nil
}

// credentialSource opens the token store of storeFlags (sealed with keys) and serves the
// endpoint (see serve); a nil endpoint (no --oauth-providers) gives no source. Close the Closer
// after the worker has stopped.
func (e *consentEndpoint) credentialSource(ctx context.Context, logger *zap.Logger, c client.Client, storeFlags *credentialStoreFlags,
	keys codec.KeySource, secrets toolcore.SecretSource) (toolcore.CredentialSource, io.Closer, error) {
	if e == nil {
		return nil, nopCloser{}, nil
	}
	store, closer, err := openCredentialStore(ctx, storeFlags, keys)
	if err != nil {
		return nil, nil, err
	}
	source, err := e.serve(ctx, logger, c, store, secrets)
	if err != nil {
		_ = closer.Close()
		return nil, nil, err
	}
	// The endpoint stops before its store closes.
	return source, closerFunc(func() error { e.close(); return closer.Close() }), nil
}

// close stops the endpoint, once (a nil one is fine).
func (e *consentEndpoint) close() {
	if e != nil {
		e.publicListener.close()
	}
}

// signalConsent wakes a waiting call with wire.SignalConsent; a call that has ended is fine.
func signalConsent(c client.Client) func(ctx context.Context, waiter string, sig wire.ConsentSignal) error {
	return func(ctx context.Context, waiter string, sig wire.ConsentSignal) error {
		err := c.SignalWorkflow(ctx, waiter, "", wire.SignalConsent, sig)
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return nil
		}
		return err
	}
}
