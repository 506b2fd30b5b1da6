package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/internal/loopback"
)

type codecServerOptions struct {
	codecKey     string
	listen       string
	origins      []string
	allowHosts   []string
	tokenFile    string
	token        string // deprecated: argv is world-readable in /proc/PID/cmdline
	maxBodyBytes int64
	maxConns     int
	readHeader   time.Duration
	sessionTTL   time.Duration
	secureCookie bool
	metrics      metricsOptions
}

// The codec server's HTTP limits: a request is one small JSON body, so every phase is bounded.
const (
	codecReadHeaderTimeout = 10 * time.Second
	codecReadTimeout       = time.Minute
	codecWriteTimeout      = time.Minute
	codecIdleTimeout       = 2 * time.Minute
	defaultCodecMaxConns   = 256
	codecTokenEnv          = "TOOLGATE_CODEC_TOKEN"
)

func newCodecServerCommand(a *app) *cobra.Command {
	var o codecServerOptions
	cmd := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve the Temporal codec-server protocol, so the Web UI shows encrypted payloads",
		Long: `Serve POST /encode and /decode (the Temporal codec-server protocol) with the keys of
--codec-key, so the Temporal Web UI (Settings > Codec Server, or ui-server's codec.endpoint) and
the Temporal CLI (--codec-endpoint) show the arguments and results of encrypted calls.

--ui-origin grants CORS to the Web UI's origin (repeat it for several; "*" grants any origin,
without credentials). A bearer token, read from --token-file or $TOOLGATE_CODEC_TOKEN (never from
the command line, which every local user can read in /proc), makes every request carry
"Authorization: Bearer <token>" (the UI sends it with "pass access token" when its login issues
that token). A --listen address beyond loopback is refused without a token.

The Temporal Web UI cannot send a static token. With a token, a browser logs in once at
/login (a form: the token goes in a POST body, never in a URL) and gets a session cookie
(HttpOnly, SameSite=Strict, Secure with --secure-cookie; valid for --session-ttl, ended by a new
token). The UI sends it when its codec settings include credentials (ui-server codec:
includeCredentials: true, or "Include cross-origin credentials" in its settings); the codec
server accepts it only from a --ui-origin, on JSON requests. The UI and the codec server must be
same-site (say ui.example.com and codec.example.com).

--codec-key is a file read again whenever it changes (every 2 s), so keys rotate without a
restart (docs/operations.md, Encrypted payloads); --metrics-listen serves toolgate_codec_keys,
the keys it holds, for toolgate codec keys --metrics.

Only requests whose Host is localhost, 127.0.0.1 or [::1] (any port), the --listen IP, or a name
of --allow-host (the name the UI or CLI uses to reach this server) are answered; any other Host
gets 421, so a web page that rebinds its DNS name to this server cannot read plaintext. A body
longer than --max-body-bytes gets 413 without being read further.

GET /healthz and /readyz answer 200 for probes (without a token, whatever the Host, one fixed
word), /readyz while the server holds a key to encrypt with.

When it listens it prints "codec-server http://host:port" on stdout. Ctrl-C stops it.`,
		Example: `  toolgate codec-server --codec-key keys.txt --ui-origin http://127.0.0.1:8233
  TOOLGATE_CODEC_KEY=env:KEYS toolgate codec-server --listen 0.0.0.0:8081 \
      --token-file /run/secrets/codec-token --allow-host codec.internal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCodecServer(cmd.Context(), a, o)
		},
	}
	addCodecKeyFlag(cmd, &o.codecKey)
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8081", "host:port to serve on (port 0: any free port)")
	fs.StringArrayVar(&o.origins, "ui-origin", nil, `browser origin allowed by CORS, such as http://127.0.0.1:8233 ("*": any)`)
	fs.StringArrayVar(&o.allowHosts, "allow-host", nil, "Host name answered beside localhost, 127.0.0.1 and [::1] (repeat for several)")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the bearer token every request must carry (default: $"+codecTokenEnv+", else none)")
	fs.StringVar(&o.token, "token", "", "deprecated: the command line is world-readable; use --token-file or $"+codecTokenEnv)
	_ = fs.MarkHidden("token")
	fs.Int64Var(&o.maxBodyBytes, "max-body-bytes", codec.DefaultMaxBodyBytes, "largest request body; a longer one gets 413")
	fs.DurationVar(&o.readHeader, "read-header-timeout", codecReadHeaderTimeout, "time a client has to send a request's headers")
	fs.IntVar(&o.maxConns, "max-connections", defaultCodecMaxConns, "connections served at once; more wait in the listen queue")
	fs.DurationVar(&o.sessionTTL, "session-ttl", codec.DefaultSessionTTL, "how long a browser session from /login lasts")
	fs.BoolVar(&o.secureCookie, "secure-cookie", false, "mark the session cookie Secure (HTTPS only): set it when browsers reach this server through a TLS proxy")
	addMetricsFlag(cmd, &o.metrics)
	return cmd
}

func runCodecServer(ctx context.Context, a *app, o codecServerOptions) error {
	if o.codecKey == "" {
		return badInput(errors.New("--codec-key is required"))
	}
	ck := new(codecKeys)
	keys, err := ck.open(o.codecKey, a.logger)
	if err != nil {
		return err
	}
	token, err := o.bearerToken(a)
	if err != nil {
		return err
	}
	if token == "" && !loopback.Address(o.listen) {
		return badInput(fmt.Errorf("--listen %s is not a loopback address: anyone who reaches it could decrypt every payload; "+
			"set a token with --token-file or $%s", o.listen, codecTokenEnv))
	}
	allowHosts := o.allowHosts
	if host, _, err := net.SplitHostPort(o.listen); err == nil {
		if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
			allowHosts = append(allowHosts, host) // the address it was told to listen on
		}
	}
	ms, err := o.metrics.start(a.logger)
	if err != nil {
		return err
	}
	if ms != nil {
		ck.report(ms.Handler())
	}
	srv, err := startCodecServer(o.listen, keys, codec.HandlerOptions{
		AllowedOrigins: o.origins, Token: token, AllowedHosts: allowHosts, MaxBodyBytes: o.maxBodyBytes,
		SessionTTL: o.sessionTTL, SecureCookie: o.secureCookie,
	}, codecLimits{maxConns: o.maxConns, readHeaderTimeout: o.readHeader}, a.logger)
	if err != nil {
		return closeMetrics(ms, err)
	}
	if ms != nil {
		ms.Health().SetCheck(codecReady(keys)) // --metrics-listen's /readyz is the codec server's
	}
	if _, err := fmt.Fprintf(a.out, "codec-server %s\n", srv.url); err != nil {
		return closeMetrics(ms, errors.Join(fmt.Errorf("print address: %w", err), srv.stop()))
	}
	a.logger.Info("codec server ready; Ctrl-C stops it", zap.String("url", srv.url),
		zap.String("encryptKeyId", keys.Keyring().CurrentKeyID()), zap.Strings("uiOrigins", o.origins), zap.Bool("token", token != ""), zap.Strings("allowHosts", allowHosts))
	<-ctx.Done()
	return closeMetrics(ms, srv.stop())
}

// bearerToken is the token of --token-file, else $TOOLGATE_CODEC_TOKEN, else the deprecated
// --token (with a warning); surrounding white space is trimmed.
func (o codecServerOptions) bearerToken(a *app) (string, error) {
	switch {
	case o.tokenFile != "":
		return readTokenFile("--token-file", o.tokenFile)
	case o.token != "":
		a.logger.Warn("--token puts the secret on the command line, readable by every local user in /proc; use --token-file or $" + codecTokenEnv)
		return o.token, nil
	}
	if v, ok := a.lookupEnv(codecTokenEnv); ok {
		return strings.TrimSpace(v), nil
	}
	return "", nil
}

// readTokenFile reads the token in path ("" for none), trimmed; flag names it in errors.
func readTokenFile(flag, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", badInput(fmt.Errorf("%s: %w", flag, err))
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", badInput(fmt.Errorf("%s %s is empty", flag, path))
	}
	return token, nil
}

// codecServer is a running codec HTTP server.
type codecServer struct {
	url  string
	http *http.Server
	done chan struct{}
}

// codecLimits bound a codec server's connections; the zero value is the defaults.
type codecLimits struct {
	maxConns          int
	readHeaderTimeout time.Duration
}

// startCodecServer serves codec.Handler for keys on listen, at most lim.maxConns connections at
// once, each phase of a request under a timeout.
func startCodecServer(listen string, keys codec.KeySource, opts codec.HandlerOptions, lim codecLimits, logger *zap.Logger) (*codecServer, error) {
	if lim.maxConns <= 0 {
		lim.maxConns = defaultCodecMaxConns
	}
	if lim.readHeaderTimeout <= 0 {
		lim.readHeaderTimeout = codecReadHeaderTimeout
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, badInput(fmt.Errorf("listen for the codec server on %s: %w", listen, err))
	}
	s := &codecServer{
		url: "http://" + ln.Addr().String(),
		http: &http.Server{
			Handler:           codecProbe(keys, logger).Wrap(codec.Handler(codec.New(keys), opts)),
			ReadHeaderTimeout: lim.readHeaderTimeout,
			ReadTimeout:       codecReadTimeout,
			WriteTimeout:      codecWriteTimeout,
			IdleTimeout:       codecIdleTimeout,
		},
		done: make(chan struct{}),
	}
	ln = limitListener(ln, lim.maxConns)
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve codec", zap.Error(err))
		}
	}()
	return s, nil
}

// stop shuts the server down, letting requests in progress finish for up to 5 s.
func (s *codecServer) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	<-s.done
	if err != nil {
		return fmt.Errorf("stop codec server: %w", err)
	}
	return nil
}

// codecProbe answers /healthz and /readyz for a codec server (package health: no token, any
// Host, nothing revealed) with codecReady.
func codecProbe(keys codec.KeySource, logger *zap.Logger) *health.Probe {
	p := health.NewProbe(health.Options{Logger: logger.Named("health")})
	p.SetCheck(codecReady(keys))
	return p
}

// codecReady is a codec server's readiness: the keyring in force has a key to encrypt with.
func codecReady(keys codec.KeySource) health.Check {
	return func(context.Context) error {
		if keys.Keyring().CurrentKeyID() == "" {
			return errors.New("no codec key")
		}
		return nil
	}
}
