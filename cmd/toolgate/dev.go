package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

type devOptions struct {
	dataDir        string
	inMemory       bool
	db             string
	namespace      string
	port           int
	uiPort         int
	noUI           bool
	serverLogLevel string
	stopTimeout    time.Duration
	taskQueue      string
	toolbox        toolboxOptions
	metrics        metricsOptions
	codecKey       string
	codecTokenFile string
	dynamicConfig  []string
	workflowCache  int
	policy         policyFlags
	secrets        secretsFlags
	oauth          oauthFlags
	credStore      credentialStoreFlags
	partStore      partStoreFlags // parts.go
	callbacks      callbackFlags
	sandbox        sandboxFlags // sandbox.go
	traces         traceOptions // otel.go
}

func newDevCommand(a *app) *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a Temporal server, the Web UI and a worker with the toolbox, on loopback",
		Long: `Run toolgate's embedded default: an in-process Temporal server (SQLite in a file under
--data-dir, or in memory with --in-memory), the Temporal Web UI and a worker with the toolbox,
all on loopback. Nothing is downloaded and nothing else needs to run.

When everything is ready it prints, on stdout, one "key value" line each:

  frontend 127.0.0.1:7233
  ui http://127.0.0.1:8233
  namespace default
  task-queue toolgate
  data /home/me/.local/share/toolgate

(no ui line with --no-ui; "data postgres://user@host:port/database" with --db; with --codec-key a "codec-server http://..." line after ui, the codec server the UI decodes
payloads with; a "metrics http://.../metrics" line with --metrics-listen, where the embedded
server's own metrics are served too; a "consent http://.../oauth/callback" line with
--oauth-providers, the consent endpoint's redirect URL; a "callback http://.../callback" line with
--callback-listen, the base of the callback URLs tools hand out; "data in-memory" with --in-memory). Port 0 picks a free port and the
printed line says which. Ctrl-C (or SIGTERM) stops the worker (running tools get --stop-timeout
to finish, then they are interrupted and drained; a second Ctrl-C kills at once), then the UI and the
server, and exits 0. Started again on the same data directory, the server still has every
earlier call: toolgate result finds them.

The default data directory is $TOOLGATE_DATA_DIR, else $XDG_DATA_HOME/toolgate, else
~/.local/share/toolgate: one per user, the same whichever directory you start from.

--db postgres://user[:password]@host[:port][/database][?params] runs the server on an existing
PostgreSQL instead: the main store in the database (default temporal), visibility in
<database>_visibility, both created with the server's schemas when missing (the server's own SQL
tooling, what temporal-sql-tool runs) and upgraded when older. The params are libpq's TLS
settings: sslmode (disable, the default, require, verify-ca, verify-full, ...), sslrootcert (the
CA's PEM file; without it verify-* check against the system's roots), sslcert and sslkey (a
client certificate), plus connect_timeout and application_name; a certificate that fails
verification is reported with the verification error and the file. The
dev server has one history shard, fixed for the life of a database: give it databases of its own.
A URL with a password belongs in $TOOLGATE_DB, never on the command line: every local user can
read a process's arguments in /proc.

--sandbox serves the sandbox tools as toolgate worker --sandbox-dir does (see its help), with the
workspaces' store in <data-dir>/sandbox/store (a temporary directory with --in-memory) and their
local copies in a temporary directory (or --sandbox-dir); it needs bubblewrap (make setup). It is
off by default: exec runs any command a model writes, so a dev server serves it only when asked.

--callback-listen ADDR serves the callback endpoint as toolgate worker does (see its help).
Without a --callback-key-secret secret, dev seals the URLs with a key of its own kept in
<data-dir>/callback.key (made anew at each start with --in-memory or --db).`,
		Example: `  toolgate dev
  toolgate dev --in-memory --port 0 --ui-port 0
  toolgate dev --codec-key keys.txt --metrics-listen 127.0.0.1:9464
  toolgate dev --data-dir ./.toolgate --root ./docs --allow-host example.com
  toolgate dev --db postgres://me@127.0.0.1:5432/toolgate_dev
  toolgate dev --callback-listen 127.0.0.1:8251
  toolgate dev --sandbox --sandbox-ro /usr/local/go
  TOOLGATE_DB="$(cat /run/secrets/toolgate-db-url)" toolgate dev`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDev(cmd.Context(), a, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.dataDir, "data-dir", defaultDataDir(a.lookupEnv), "directory of the SQLite database, created if missing")
	fs.BoolVar(&o.inMemory, "in-memory", false, "keep everything in memory: nothing survives a restart")
	fs.StringVar(&o.db, "db", "", "run the server on this PostgreSQL (postgres://user[:password]@host[:port][/database]) instead of SQLite; with a password, set $TOOLGATE_DB instead")
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "namespace to create and serve")
	fs.IntVar(&o.port, "port", 7233, "frontend gRPC port on 127.0.0.1 (0: any free port)")
	fs.IntVar(&o.uiPort, "ui-port", 8233, "Web UI HTTP port on 127.0.0.1 (0: any free port)")
	fs.BoolVar(&o.noUI, "no-ui", false, "do not start the Web UI")
	fs.DurationVar(&o.stopTimeout, "stop-timeout", 5*time.Second, "on Ctrl-C, how long running tools may finish before the worker interrupts them (drain)")
	fs.StringVar(&o.serverLogLevel, "server-log-level", "error", "lowest level of the Temporal server's own log lines (it is chatty)")
	bindEnv(fs, "data-dir", "TOOLGATE_DATA_DIR")
	bindEnv(fs, "namespace", "TEMPORAL_NAMESPACE")
	bindEnv(fs, "db", "TOOLGATE_DB")
	addTaskQueueFlag(cmd, &o.taskQueue)
	addToolboxFlags(cmd, &o.toolbox)
	addPolicyFlags(cmd, &o.policy, policyUsageWorker)
	addMetricsFlag(cmd, &o.metrics)
	addCallCountFlags(cmd, &o.metrics)
	addCodecKeyFlag(cmd, &o.codecKey)
	fs.StringVar(&o.codecTokenFile, "codec-token-file", "", "file holding a token the codec server then requires: a bearer token, or a browser session from its /login page (default: none, any local user may decode)")
	addDynamicConfigFlag(cmd, &o.dynamicConfig)
	addWorkflowCacheFlag(cmd, &o.workflowCache)
	addSecretsFlags(cmd, &o.secrets)
	addOAuthFlags(cmd, &o.oauth, false)
	addCredentialStoreFlags(cmd, a, &o.credStore, credentialStoreDev)
	addPartStoreFlags(cmd, a, &o.partStore, "(default <data-dir>/parts; a temporary directory with --in-memory)")
	addCallbackFlags(cmd, &o.callbacks)
	addSandboxFlags(cmd, a, &o.sandbox, true)
	addTraceFlags(cmd, &o.traces, true)
	cmd.MarkFlagsMutuallyExclusive("data-dir", "in-memory", "db")
	return cmd
}

// defaultDataDir is $XDG_DATA_HOME/toolgate, else ~/.local/share/toolgate, else ./.toolgate when
// there is no home directory. ($TOOLGATE_DATA_DIR overrides it like any flag's variable.)
func defaultDataDir(lookupEnv func(string) (string, bool)) string {
	if dir, ok := lookupEnv("XDG_DATA_HOME"); ok && filepath.IsAbs(dir) {
		return filepath.Join(dir, "toolgate")
	}
	if home, ok := lookupEnv("HOME"); ok && filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "share", "toolgate")
	}
	return ".toolgate"
}

func runDev(ctx context.Context, a *app, o devOptions) (err error) {
	if err := applyWorkflowCache(o.workflowCache); err != nil {
		return err
	}
	if err := o.metrics.checkCallCounts(); err != nil {
		return err
	}
	reg, err := o.toolbox.registry(a.logger.Named("toolbox"))
	if err != nil {
		return err
	}
	secretSource, err := o.secrets.source(a.lookupEnv)
	if err != nil {
		return err
	}
	serverLevel, err := zapcore.ParseLevel(o.serverLogLevel)
	if err != nil {
		return badInput(fmt.Errorf("parse --server-log-level: %w", err))
	}
	if o.db != "" {
		if err := checkPostgresURL(o.db); err != nil {
			return badInput(fmt.Errorf("--db: %w", err))
		}
	}
	dynamicConfig, err := parseDynamicConfig(o.dynamicConfig)
	if err != nil {
		return err
	}
	traces, err := o.traces.start(ctx, a.lookupEnv, "toolgate-dev", a.logger)
	if err != nil {
		return err
	}
	defer traces.shutdown() // after the worker stopped: its last spans are flushed
	dataDir := ""
	if !o.inMemory && o.db == "" {
		dataDir, err = filepath.Abs(o.dataDir)
		if err != nil {
			return badInput(fmt.Errorf("resolve --data-dir: %w", err))
		}
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return fmt.Errorf("create data directory: %w", err)
		}
	}
	// Per-user OAuth tokens default to <data-dir>/credentials (a temporary directory with
	// --in-memory); the providers file and the consent listener are checked before the server starts.
	o.credStore.InMemory = o.inMemory
	o.partStore.InMemory = o.inMemory
	if dataDir != "" {
		o.credStore.DefaultDir = filepath.Join(dataDir, "credentials")
	}
	if !o.inMemory {
		// Under --data-dir also with --db: where toolgate result and mcp look by default.
		o.partStore.DefaultDir = devPartStoreDir(o.dataDir)
	}
	o.sandbox.InMemory, o.sandbox.TempWork = o.inMemory, true
	if !o.inMemory { // as the part store: where toolgate sandbox looks by default
		o.sandbox.store.DefaultDir = filepath.Join(devSandboxDir(o.dataDir), "store")
	}
	if err := o.sandbox.check(); err != nil {
		return err
	}
	consent, err := o.oauth.open()
	if err != nil {
		return err
	}
	defer consent.close()
	callbackEP, err := o.callbacks.open()
	if err != nil {
		return err
	}
	defer callbackEP.close()

	devKeys := new(codecKeys)
	keys, err := devKeys.open(o.codecKey, a.logger)
	if err != nil {
		return err
	}
	codecToken, err := readTokenFile("--codec-token-file", o.codecTokenFile)
	if err != nil {
		return err
	}
	// With keys, a codec server on a free loopback port lets the Web UI show the payloads; it
	// grants CORS to the UI's origin once that is known.
	var codecSrv *codecServer
	var uiOrigin atomic.Value
	uiOrigin.Store("")
	if keys != nil && !o.noUI {
		codecSrv, err = startCodecServer(net.JoinHostPort("127.0.0.1", "0"), keys, codec.HandlerOptions{
			AllowOrigin: func(origin string) bool {
				ui := uiOrigin.Load().(string)
				return ui != "" && (origin == ui || origin == strings.Replace(ui, "127.0.0.1", "localhost", 1))
			},
			Token: codecToken,
		}, codecLimits{}, a.logger.Named("codec"))
		if err != nil {
			return err
		}
		defer func() {
			if stopErr := codecSrv.stop(); stopErr != nil {
				err = errors.Join(err, stopErr)
			}
		}()
	}
	codecEndpoint := ""
	if codecSrv != nil {
		codecEndpoint = codecSrv.url
	}

	// With --metrics-listen the embedded server's own metrics are served beside the worker's.
	var serverMetrics prometheus.Registerer
	var gatherers []prometheus.Gatherer
	if o.metrics.listen != "" {
		reg := prometheus.NewRegistry()
		serverMetrics, gatherers = reg, append(gatherers, reg)
	}
	srv, err := startEmbedded(ctx, embeddedOptions{
		MetricsRegisterer: serverMetrics,
		UICodecEndpoint:   codecEndpoint,
		DataDir:           dataDir,
		Postgres:          o.db,
		Namespace:         o.namespace,
		UI:                !o.noUI,
		Logger:            a.logger.Named("temporal-server"),
		ServerLogLevel:    &serverLevel,
		FrontendPort:      o.port,
		UIPort:            o.uiPort,
		DynamicConfig:     dynamicConfig,
	})
	if err != nil {
		return fmt.Errorf("start dev server: %w", err)
	}
	logger := a.logger.With(zap.String("frontend", srv.FrontendAddress()), zap.String("namespace", srv.Namespace()))
	stopServer := func() error {
		logger.Info("stopping Temporal server")
		if err := srv.Stop(); err != nil {
			return fmt.Errorf("stop dev server: %w", err)
		}
		return nil
	}

	ms, err := o.metrics.start(a.logger, gatherers...)
	if err != nil {
		return errors.Join(err, stopServer())
	}
	defer func() { err = closeMetrics(ms, err) }()
	uiOrigin.Store(srv.UIAddress())
	conn := connOptions{address: srv.FrontendAddress(), namespace: srv.Namespace(), codecKey: o.codecKey, keys: devKeys, tracer: traces.tracerProvider()}
	if ms != nil {
		conn.metrics = ms.Handler()
	}
	c, err := conn.dial(ctx, a.logger)
	if err != nil {
		return errors.Join(err, stopServer())
	}
	dc, _ := conn.dataConverter(nil) // dial loaded the same keys
	decider, err := o.policy.source(ctx, a.logger)
	if err != nil {
		c.Close()
		return errors.Join(err, stopServer())
	}
	creds, credsCloser, err := consent.credentialSource(ctx, a.logger, c, &o.credStore, credentialKeys(keys), secretSource)
	if err != nil {
		c.Close()
		return errors.Join(err, stopServer())
	}
	defer credsCloser.Close()
	parts, partsCloser, err := o.partStore.open(ctx, credentialKeys(keys))
	if err != nil {
		c.Close()
		return errors.Join(err, stopServer())
	}
	defer partsCloser.Close()
	sb, err := o.sandbox.open(ctx, a.logger.Named("sandbox"), credentialKeys(keys), parts != nil)
	if err == nil {
		defer sb.Close()
		err = sb.register(reg, a.logger.Named("sandbox"))
	}
	if err != nil {
		c.Close()
		return errors.Join(err, stopServer())
	}
	var callbackURLs activities.CallbackURLs
	if callbackEP != nil {
		keys, err := devCallbackKeys(secretSource, callbackEP.keyName, dataDir)
		if err == nil {
			callbackURLs, err = callbackEP.serve(ctx, a.logger, c, keys)
		}
		if err != nil {
			c.Close()
			return errors.Join(err, stopServer())
		}
	}
	w, err := worker.New(c, srv.Namespace(), reg, worker.Options{TaskQueue: o.taskQueue, StopTimeout: o.stopTimeout, Logger: a.logger, DataConverter: dc, Policy: decider,
		Secrets: secretSource, Credentials: creds, Callbacks: callbackURLs, Parts: parts,
		TracerProvider: traces.tracerProvider(), TraceContent: o.traces.content})
	if err != nil {
		c.Close()
		return errors.Join(fmt.Errorf("create worker: %w", err), stopServer())
	}
	if err := w.Start(); err != nil {
		c.Close()
		return errors.Join(fmt.Errorf("start worker: %w", err), stopServer())
	}
	if err := o.metrics.serveWorker(ctx, ms, c, w, srv.Namespace(), o.taskQueue); err != nil {
		w.Stop()
		c.Close()
		return errors.Join(err, stopServer())
	}

	data := "in-memory"
	switch {
	case o.db != "":
		data = srv.Database()
	case dataDir != "":
		data = dataDir
	}
	ready := fmt.Sprintf("frontend %s\n", srv.FrontendAddress())
	if ui := srv.UIAddress(); ui != "" {
		ready += fmt.Sprintf("ui %s\n", ui)
	}
	if codecSrv != nil {
		ready += fmt.Sprintf("codec-server %s\n", codecSrv.url)
	}
	if ms != nil {
		ready += fmt.Sprintf("metrics %s\n", ms.URL())
	}
	if consent != nil {
		ready += fmt.Sprintf("consent %s\n", consent.redirect)
	}
	if callbackEP != nil {
		ready += fmt.Sprintf("callback %s\n", callbackEP.url)
	}
	ready += fmt.Sprintf("namespace %s\ntask-queue %s\ndata %s\n", srv.Namespace(), taskQueueOrDefault(o.taskQueue), data)
	if _, err := fmt.Fprint(a.out, ready); err != nil {
		w.Stop()
		c.Close()
		return errors.Join(fmt.Errorf("print addresses: %w", err), stopServer())
	}
	logger.Info("toolgate dev is ready; Ctrl-C stops it",
		zap.String("ui", srv.UIAddress()), zap.String("taskQueue", taskQueueOrDefault(o.taskQueue)),
		zap.String("data", data), zap.Strings("tools", reg.Names()))

	<-ctx.Done()
	logger.Info("stopping worker")
	w.Stop()
	c.Close()
	return stopServer()
}

func taskQueueOrDefault(q string) string {
	if q == "" {
		return wire.DefaultTaskQueue
	}
	return q
}
