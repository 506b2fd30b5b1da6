package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/callbacks"
	"github.com/toolgate/toolgate/internal/loopback"
	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
)

// callbackPath is where the callback endpoint answers by default: a URL is
// <--callback-url>/<opaque segment>.
const callbackPath = "/callback"

// callbackFlags are the callback endpoint's flags of toolgate worker and dev.
type callbackFlags struct {
	listen     string
	url        string
	allowHosts []string
	keySecret  string
	perMinute  int
}

// addCallbackFlags adds --callback-listen, --callback-url, --allow-callback-host,
// --callback-key-secret and --callback-requests-per-minute.
func addCallbackFlags(cmd *cobra.Command, f *callbackFlags) {
	fs := cmd.Flags()
	fs.StringVar(&f.listen, "callback-listen", "", "serve the callback endpoint (the URLs tools hand to external systems, toolcore.Callback) on this host:port at "+callbackPath+"/; beyond loopback only with --callback-url")
	fs.StringVar(&f.url, "callback-url", "", "the callback endpoint's public base URL: the URLs tools hand out start with it (default http://<--callback-listen>"+callbackPath+"); without --callback-listen the worker mints URLs another worker's endpoint serves (same key)")
	fs.StringSliceVar(&f.allowHosts, "allow-callback-host", nil, "Host name the callback endpoint accepts besides loopback names and --callback-url's host (repeat)")
	fs.StringVar(&f.keySecret, "callback-key-secret", callbacks.DefaultKeyName, "the secret (a file of --secrets-dir, a variable of --secrets-env-prefix) holding the keys that seal callback URLs: one a line, at least 32 bytes each, the first seals")
	fs.IntVar(&f.perMinute, "callback-requests-per-minute", callbacks.DefaultRequestsPerMinute, "requests a minute the callback endpoint takes from one remote address (behind a reverse proxy, every sender shares the proxy's)")
	bindEnv(fs, "callback-url", "TOOLGATE_CALLBACK_URL")
}

// callbackEndpoint is the callback endpoint opened by callbackFlags.open: its listener bound (or
// none: mint only), its public URL known, not serving yet.
type callbackEndpoint struct {
	listener  *publicListener // nil when the worker only mints
	url       string
	allow     []string
	keyName   string
	perMinute int
}

// open binds --callback-listen; nil with neither it nor --callback-url. A non-loopback listen
// address needs --callback-url (the URLs are capabilities: the public URL says the exposure is
// meant), https beyond loopback. Call close when done.
func (f callbackFlags) open() (*callbackEndpoint, error) {
	if f.perMinute < 0 {
		return nil, badInput(fmt.Errorf("--callback-requests-per-minute %d must not be negative", f.perMinute))
	}
	if f.listen == "" {
		if len(f.allowHosts) > 0 {
			return nil, badInput(errors.New("--allow-callback-host needs --callback-listen"))
		}
		if f.url == "" {
			return nil, nil
		}
		u, err := url.Parse(f.url)
		if err != nil || u.Host == "" || (u.Scheme != "https" && (u.Scheme != "http" || !loopback.Host(u.Hostname()))) {
			return nil, badInput(fmt.Errorf("--callback-url %q: want an absolute https URL (http only on a loopback host)", f.url))
		}
		return &callbackEndpoint{url: f.url, keyName: f.keySecret, perMinute: f.perMinute}, nil
	}
	ln, err := openPublicListener(publicFlags{listen: "--callback-listen", url: "--callback-url"}, f.listen, f.url, callbackPath, f.allowHosts)
	if err != nil {
		return nil, err
	}
	return &callbackEndpoint{listener: ln, url: ln.url, allow: ln.allowHosts, keyName: f.keySecret, perMinute: f.perMinute}, nil
}

// serve builds the endpoint, its signing keys read from keys, and serves it when it listens; the
// callbacks answer the calls through c. It returns what worker.Options.Callbacks takes (nil for
// a nil endpoint). ctx's end makes the readiness probe fail; close stops it.
func (e *callbackEndpoint) serve(ctx context.Context, logger *zap.Logger, c client.Client, keys toolcore.SecretSource) (activities.CallbackURLs, error) {
	if e == nil {
		return nil, nil
	}
	if keys == nil {
		return nil, badInput(fmt.Errorf("the callback endpoint needs its signing key: a secret %q of --secrets-dir or --secrets-env-prefix (--callback-key-secret)", e.keyName))
	}
	ep, err := callbacks.New(ctx, callbacks.Options{URL: e.url, Keys: keys, KeyName: e.keyName, Client: c, AllowedHosts: e.allow,
		RequestsPerMinute: e.perMinute, Logger: slog.New(zapslog.NewHandler(logger.Core(), zapslog.WithName("callback")))})
	if err != nil {
		return nil, badInput(err)
	}
	if e.listener != nil {
		e.listener.serve(ctx, logger, c, "callback", callbackPath, "/", ep)
		logger.Info("callback endpoint serving", zap.String("listen", e.listener.ln.Addr().String()), zap.String("url", e.url))
	}
	return ep, nil
}

// close stops the endpoint, once (a nil one is fine).
func (e *callbackEndpoint) close() {
	if e != nil {
		e.listener.close()
	}
}

// devCallbackKeys is toolgate dev's signing key source: the worker's secret source first, then a
// key of dev's own, kept in <dataDir>/callback.key (created 0600 at the first run, so URLs live
// across restarts), or made anew in memory without a data directory.
func devCallbackKeys(secretSource toolcore.SecretSource, name, dataDir string) (toolcore.SecretSource, error) {
	key, err := devCallbackKey(dataDir)
	if err != nil {
		return nil, err
	}
	own := secrets.Map{name: key}
	if secretSource == nil {
		return own, nil
	}
	return secrets.Chain(secretSource, own), nil
}

// devCallbackKey reads or creates dev's own key.
func devCallbackKey(dataDir string) (string, error) {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	fresh := base64.RawStdEncoding.EncodeToString(raw)
	if dataDir == "" {
		return fresh, nil
	}
	path := filepath.Join(dataDir, "callback.key")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read the callback key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("create the callback key: %w", err)
	}
	_, err = f.WriteString(fresh + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write the callback key: %w", err)
	}
	return fresh, nil
}
