package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"go.uber.org/zap/exp/zapslog"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/internal/loopback"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

type mcpOptions struct {
	conn           connOptions
	toolbox        toolboxOptions
	policy         policyFlags
	taskQueue      string
	scope          string
	listen         string
	allowedHosts   []string
	allowedOrigins []string
	metrics        metricsOptions
	auth           mcpAuthOptions
	http           mcpHTTPLimits
	// taskForbidden and taskRequired are the --task-support-* globs.
	taskForbidden, taskRequired []string
	principals                  mcpPrincipalFlags
	budget                      mcpBudgetFlags
	partStore                   partStoreFlags // parts.go
	// requestStateKeyFile is --request-state-key-file ("" for a random key).
	requestStateKeyFile string
	traces              traceOptions // otel.go
}

// mcpAuthOptions are the authentication flags of `toolgate mcp --listen`.
type mcpAuthOptions struct {
	tokenFile      string
	jwksURL        string
	jwtKeyFile     string
	resource       string
	issuer         string
	authServers    []string
	scopes         []string
	insecureNoAuth bool
}

// mcpHTTPLimits are the HTTP limits of `toolgate mcp --listen`.
type mcpHTTPLimits struct {
	readHeaderTimeout time.Duration
	maxConns          int
	unauthPerAddress  int
	connsPerPrincipal int
	unauthTimeout     time.Duration
	maxSessions       int
	sessionTimeout    time.Duration
	maxBodyBytes      int64
	eventStoreBytes   int
	pollAfter         time.Duration
}

func newMCPCommand(a *app) *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the worker's tools as durable MCP tools (stdio, or streamable HTTP with --listen)",
		Long: `Serve the tools of the workers on --task-queue to MCP clients. Every tools/call runs as one
ToolCallWorkflow on the Temporal server, so it survives this process: a client that retries with
the same "_meta": {"io.toolgate/idempotencyKey": "<key>"} attaches to the recorded run.

Without --listen, MCP speaks over stdin/stdout (the way an agent spawns a local server; logs go
to stderr). With --listen HOST:PORT it serves streamable HTTP at /mcp, loopback by default;
requests whose Host or Origin is not loopback (or allowed with --allow-mcp-host,
--allow-mcp-origin) get 403.

Authentication (the MCP authorization spec: an OAuth 2.1 resource server). With --auth-jwks-url
or --auth-jwt-key-file every request needs "Authorization: Bearer <JWT>": signed RS256/ES256 (or
RS384/512, PS*, ES384/512) by a key of the JWKS or the PEM file, aud containing --auth-resource
(this server's URL, e.g. https://mcp.example.com/mcp), exp and nbf valid within 30 s, iss equal
to --auth-issuer when given, and a sub. The protected-resource metadata (RFC 9728) is served at
/.well-known/oauth-protected-resource[/mcp] naming --auth-server, and a 401 points to it in
WWW-Authenticate. For small setups --auth-token-file names a file holding one static bearer
token (at least 16 characters; never put it in argv). A --listen address that is not loopback
(0.0.0.0, ::, :PORT, a LAN address) refuses to start without one of these, unless
--insecure-no-auth (which warns on every start).

MCP 2026-07-28 clients get tasks through the io.modelcontextprotocol/tasks extension when a
request declares it: tools/call of a tool answers with a task (tasks/get, tasks/update,
tasks/cancel), except for tools matching --task-support-forbidden, which answer at once; tools
matching --task-support-required need the extension. A call waiting for approval is
input_required when its tool lets the caller decide (toolcore.Options.ApprovalByCaller), and
the decision arrives with tasks/update; otherwise operators decide (toolgate approve).

Tasks and idempotency keys belong to the principal that created them (a JWT's issuer and
subject; the static token's holders are one principal; stdio and unauthenticated HTTP are this
server's own principal): their workflow IDs are <scope>/mcp-<principal hash>/toolcall-<key> (or
<scope>/mcp/toolcall-<key>), apart from toolgate call's IDs, and tasks/get, tasks/result,
tasks/list and tasks/cancel see only the caller's tool calls.

HTTP limits: headers must arrive within --read-header-timeout (10 s) and a body within 1 min;
idle keep-alive connections close after 2 min; at most --max-connections connections are
served at once; sessions idle for --session-timeout are closed and at most --max-sessions live
at once (an initialize beyond gets 503); a body over --max-body-bytes gets 413. A connection
none of whose requests has authenticated yet holds no slot: it is closed --unauthenticated-timeout
(5 s) after its accept, and past --max-unauthenticated-per-address (16) such connections from one
address (an IPv6 /64; sparing those accepted less than a second ago), or half of
--max-connections from all, the oldest is closed for the newcomer; only authenticated
connections make others wait, and one token principal holds at most
--max-connections-per-principal (128) of them. A 401 says only what the MCP spec requires; the
reason is logged at debug level.

Budgets: --budget-calls, --budget-cost and --budget-wall bound each MCP session's tools/call
requests (calls, the tools' cost units, time since its first call); a stateless (2026-07-28)
request counts against its principal's budget, a window of --budget-wall (the process's life
without it). A call over budget is answered with the BUDGET_EXCEEDED result (isError) and starts
nothing; every result carries what remains in _meta "io.toolgate/budget" (docs/budgets.md).

Probes: GET /healthz answers 200 while the process serves, /readyz 200 while the Temporal
frontend answers a health check (503 otherwise, and from Ctrl-C on). Both answer without a token
and whatever the Host, with one fixed word: they reveal nothing.

The tool list comes from the workers' catalog; when no worker answers, from this build's toolbox
(--root, --allow-host).

` + mcpPrincipalHelp,
		Example: `  toolgate mcp
  toolgate mcp --listen 127.0.0.1:8931
  toolgate mcp --listen 0.0.0.0:8931 --auth-token-file /run/secrets/mcp-token
  toolgate mcp --listen 0.0.0.0:8931 --auth-resource https://mcp.example.com/mcp \
    --auth-jwks-url https://id.example.com/.well-known/jwks.json --auth-issuer https://id.example.com \
    --auth-server https://id.example.com
  claude mcp add toolgate -- toolgate mcp --address 127.0.0.1:7233`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd.Context(), a, o)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTaskQueueFlag(cmd, &o.taskQueue)
	addScopeFlag(cmd, &o.scope)
	addToolboxFlags(cmd, &o.toolbox)
	addPolicyFlags(cmd, &o.policy, policyUsageMCP)
	addMetricsFlag(cmd, &o.metrics)
	addTraceFlags(cmd, &o.traces, false)
	addMCPBudgetFlags(cmd, &o.budget)
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "listen", "", "serve streamable HTTP on HOST:PORT at /mcp instead of stdio")
	fs.StringSliceVar(&o.allowedHosts, "allow-mcp-host", nil, "Host name accepted besides loopback names (repeat)")
	fs.StringSliceVar(&o.allowedOrigins, "allow-mcp-origin", nil, "Origin accepted besides loopback origins (repeat)")
	fs.StringVar(&o.auth.tokenFile, "auth-token-file", "", "file holding the static bearer token every HTTP request must carry")
	fs.StringVar(&o.auth.jwksURL, "auth-jwks-url", "", "JWKS URL of the authorization server whose JWT access tokens are accepted")
	fs.StringVar(&o.auth.jwtKeyFile, "auth-jwt-key-file", "", "PEM file of the public key(s) verifying JWT access tokens (instead of --auth-jwks-url)")
	fs.StringVar(&o.auth.resource, "auth-resource", "", "this server's resource URL: a JWT's aud must contain it (required with JWTs)")
	fs.StringVar(&o.auth.issuer, "auth-issuer", "", "a JWT's iss must equal this (optional)")
	fs.StringSliceVar(&o.auth.authServers, "auth-server", nil, "authorization server named in the protected-resource metadata (repeat)")
	fs.StringSliceVar(&o.auth.scopes, "auth-scope", nil, "scope every token must carry (repeat)")
	fs.BoolVar(&o.auth.insecureNoAuth, "insecure-no-auth", false, "serve a non-loopback --listen address without authentication (anyone who reaches it can run tools)")
	fs.DurationVar(&o.http.readHeaderTimeout, "read-header-timeout", mcp.DefaultReadHeaderTimeout, "drop a connection whose request headers take longer")
	fs.IntVar(&o.http.maxConns, "max-connections", mcp.DefaultMaxConns, "connections served at once; past it the oldest unauthenticated one is closed, or (all authenticated) newcomers wait in the listen queue")
	fs.IntVar(&o.http.connsPerPrincipal, "max-connections-per-principal", mcp.DefaultMaxConnsPerPrincipal, "connections one token principal may hold; its request on one more gets 429 (-1: no bound; raise it when many clients share a static token)")
	fs.IntVar(&o.http.unauthPerAddress, "max-unauthenticated-per-address", mcp.DefaultMaxUnauthenticatedPerAddress, "connections not yet authenticated from one address (an IPv6 /64); past it its oldest is closed once a second old (-1: no bound; raise it behind a reverse proxy)")
	fs.DurationVar(&o.http.unauthTimeout, "unauthenticated-timeout", mcp.DefaultUnauthenticatedTimeout, "close a connection this long after its accept unless one of its requests authenticated")
	fs.IntVar(&o.http.maxSessions, "max-sessions", mcp.DefaultMaxSessions, "live MCP sessions; an initialize beyond gets 503")
	fs.DurationVar(&o.http.sessionTimeout, "session-timeout", mcp.DefaultSessionTimeout, "close a session that sent no request for this long")
	fs.Int64Var(&o.http.maxBodyBytes, "max-body-bytes", mcp.DefaultMaxBodyBytes, "largest request body; a larger one gets 413")
	fs.IntVar(&o.http.eventStoreBytes, "event-store-bytes", mcp.DefaultEventStoreBytes, "memory kept of SSE events, all sessions together, for clients resuming a dropped stream with Last-Event-ID")
	fs.StringSliceVar(&o.taskForbidden, "task-support-forbidden", nil, "glob of tool names never run as MCP tasks (execution.taskSupport forbidden; repeat)")
	fs.StringSliceVar(&o.taskRequired, "task-support-required", nil, "glob of tool names run only as MCP tasks (execution.taskSupport required; repeat)")
	fs.DurationVar(&o.http.pollAfter, "sse-poll-after", 0, "close the SSE stream of a tools/call still running after this long, with a retry field: the client resumes it with Last-Event-ID (0: never)")
	bindEnv(fs, "listen", "TOOLGATE_MCP_LISTEN")
	fs.StringVar(&o.requestStateKeyFile, "request-state-key-file", "", "file holding the HMAC key (at least 32 bytes) of the requestState of 2026-07-28 input_required results; servers behind one load balancer share it (default: a random key of this process)")
	bindEnv(fs, "auth-token-file", "TOOLGATE_MCP_TOKEN_FILE")
	bindEnv(fs, "request-state-key-file", "TOOLGATE_MCP_REQUEST_STATE_KEY_FILE")
	addMCPPrincipalFlags(cmd, &o.principals)
	o.partStore.DefaultDir, o.partStore.OnlyExisting = readerPartStoreDir(a.lookupEnv), true
	addPartStoreFlags(cmd, a, &o.partStore, "(the workers' store, read to return each part as its MCP content type; default toolgate dev's: $TOOLGATE_DATA_DIR/parts, else ~/.local/share/toolgate/parts)")
	return cmd
}

func runMCP(ctx context.Context, a *app, o mcpOptions) (err error) {
	for _, globs := range [][]string{o.taskForbidden, o.taskRequired} {
		if err := mcp.CheckTaskSupportGlobs(globs); err != nil {
			return badInput(err)
		}
	}
	claims, grants, err := o.principals.serverOptions()
	if err != nil {
		return err
	}
	// A retry's requestState verifies on any server holding the key (mcp/requeststate.go).
	var stateKey []byte
	if key, err := readTokenFile("--request-state-key-file", o.requestStateKeyFile); err != nil {
		return err
	} else if key != "" && len(key) < mcp.RequestStateKeyBytes {
		return badInput(fmt.Errorf("--request-state-key-file %s holds %d bytes, at least %d needed", o.requestStateKeyFile, len(key), mcp.RequestStateKeyBytes))
	} else if key != "" {
		stateKey = []byte(key)
	}
	budget, err := o.budget.limits()
	if err != nil {
		return err
	}
	var httpOpts mcp.HTTPOptions
	if o.listen != "" {
		// Checked before dialing: a refused configuration fails at once.
		if httpOpts, err = o.httpOptions(a); err != nil {
			return err
		}
	}
	traces, err := o.traces.start(ctx, a.lookupEnv, "toolgate-mcp", a.logger)
	if err != nil {
		return err
	}
	defer traces.shutdown() // after the server stopped: its last spans are flushed
	o.conn.tracer = traces.tracerProvider()
	c, ms, closeAll, err := dialMetered(ctx, a.logger, o.metrics, o.conn) // the SDK client's request metrics
	if err != nil {
		return err
	}
	// One probe (one cached frontend check) answers on the metrics listener and on --listen.
	probe := health.NewProbe(health.Options{Logger: a.logger.Named("health")})
	if ms != nil {
		probe = ms.Health()
	}
	probe.SetCheck(clientHealth(c))
	context.AfterFunc(ctx, probe.Down)
	defer func() { err = closeAll(err) }()
	tg := o.conn.toolgate(c, o.taskQueue, o.scope)
	tools, err := mcpTools(ctx, a, o, tg)
	if err != nil {
		return err
	}
	// A closed call stays readable for the namespace's retention: the ttlMs of its task.
	retention, err := mcp.NamespaceRetention(ctx, c, o.conn.namespace)
	if err != nil {
		return err
	}
	// The policy hides from tools/list what a principal may never call; the workers decide calls.
	decider, err := o.policy.source(ctx, a.logger)
	if err != nil {
		return err
	}
	// Results' parts are read from the workers' part store, with the same codec keys.
	keys, err := o.conn.keys.open(o.conn.codecKey, a.logger)
	if err != nil {
		return err
	}
	parts, partsCloser, err := o.partStore.open(ctx, credentialKeys(keys))
	if err != nil {
		return err
	}
	defer partsCloser.Close()
	server := mcp.NewServer(tg, tools, mcp.Options{PollAfter: o.http.pollAfter,
		TaskSupportForbidden: o.taskForbidden, TaskSupportRequired: o.taskRequired, TaskTTL: retention,
		PrincipalClaims: claims, Grants: grants, Budget: budget, Policy: decider, Parts: parts,
		RequestStateKey: stateKey, TracerProvider: traces.tracerProvider()})
	if o.listen == "" {
		err := server.Run(ctx, mcp.Transport(&sdk.StdioTransport{}))
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return badInput(fmt.Errorf("listen on %s: %w", o.listen, err))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.HTTPHandler(server, httpOpts))
	if httpOpts.Resource != "" {
		metadata, err := mcp.ProtectedResourceHandler(httpOpts, o.auth.authServers)
		if err != nil {
			return badInput(err)
		}
		mux.Handle(mcp.ProtectedResourcePath, metadata)
		mux.Handle(mcp.ProtectedResourcePath+"/mcp", metadata)
	}
	// Unauthenticated connections hold no slot and have short deadlines (mcp.ConnLimiter).
	limited := mcp.LimitConns(ln, mcp.ConnOptions{MaxConns: o.http.maxConns, ReadHeaderTimeout: o.http.readHeaderTimeout,
		MaxUnauthenticatedPerAddress: o.http.unauthPerAddress, UnauthenticatedTimeout: o.http.unauthTimeout,
		MaxConnsPerPrincipal: o.http.connsPerPrincipal})
	// The probes answer before the Host check and the authentication of /mcp (package health):
	// a kubelet sends neither a token nor a loopback Host, and they reveal nothing.
	srv := limited.Server(probe.Wrap(mux))
	a.logger.Sugar().Infof("MCP streamable HTTP on http://%s/mcp", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(limited); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpOptions are the HTTP handler's options of o: the Host/Origin allow-lists, the limits and
// the verifier of the --auth-* flags. A non-loopback --listen without a verifier is refused
// unless --insecure-no-auth.
func (o mcpOptions) httpOptions(a *app) (mcp.HTTPOptions, error) {
	opts := mcp.HTTPOptions{
		AllowedHosts:    o.allowedHosts,
		AllowedOrigins:  o.allowedOrigins,
		Resource:        o.auth.resource,
		Scopes:          o.auth.scopes,
		MaxBodyBytes:    o.http.maxBodyBytes,
		SessionTimeout:  o.http.sessionTimeout,
		MaxSessions:     o.http.maxSessions,
		EventStoreBytes: o.http.eventStoreBytes,
		Logger:          slog.New(zapslog.NewHandler(a.logger.Core(), zapslog.WithName("mcp"))),
	}
	o.principals.httpOptions(&opts)
	ao := o.auth
	jwt := ao.jwksURL != "" || ao.jwtKeyFile != ""
	switch {
	case ao.tokenFile != "" && jwt:
		return opts, badInput(errors.New("--auth-token-file and --auth-jwks-url/--auth-jwt-key-file exclude each other"))
	case ao.jwksURL != "" && ao.jwtKeyFile != "":
		return opts, badInput(errors.New("--auth-jwks-url and --auth-jwt-key-file exclude each other"))
	case ao.tokenFile != "":
		data, err := os.ReadFile(ao.tokenFile)
		if err != nil {
			return opts, badInput(fmt.Errorf("--auth-token-file: %w", err))
		}
		if opts.Verifier, err = mcp.StaticTokenVerifier(string(data)); err != nil {
			return opts, badInput(fmt.Errorf("--auth-token-file %s: %w", ao.tokenFile, err))
		}
	case jwt:
		jo := mcp.JWTOptions{Audience: ao.resource, Issuer: ao.issuer, JWKSURL: ao.jwksURL, Logger: opts.Logger}
		if ao.resource == "" {
			return opts, badInput(errors.New("--auth-resource (this server's URL, the tokens' audience) is required with --auth-jwks-url or --auth-jwt-key-file"))
		}
		if ao.jwtKeyFile != "" {
			data, err := os.ReadFile(ao.jwtKeyFile)
			if err != nil {
				return opts, badInput(fmt.Errorf("--auth-jwt-key-file: %w", err))
			}
			if jo.Keys, err = mcp.ParsePublicKeysPEM(data); err != nil {
				return opts, badInput(fmt.Errorf("--auth-jwt-key-file %s: %w", ao.jwtKeyFile, err))
			}
		}
		v, err := mcp.JWTVerifier(jo)
		if err != nil {
			return opts, badInput(err)
		}
		opts.Verifier = v
	}
	if opts.Verifier == nil && !loopback.Address(o.listen) {
		if !ao.insecureNoAuth {
			return opts, badInput(fmt.Errorf("--listen %s is not a loopback address: anyone who reaches it could run tools and read every task; "+
				"set --auth-token-file or --auth-jwks-url/--auth-jwt-key-file with --auth-resource (or, on a network you trust, --insecure-no-auth)", o.listen))
		}
		a.logger.Sugar().Warnf("MCP on %s WITHOUT authentication (--insecure-no-auth): anyone who reaches it can run tools and read, list and cancel this server's tasks", o.listen)
	}
	return opts, nil
}

// limitListener accepts at most n connections at once (netutil.LimitListener's idea): past it,
// Accept waits until one closes, and further clients wait in the kernel's listen queue.
func limitListener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n)}
}

type limitedListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitedListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// mcpTools lists the workers' tools, or this build's toolbox when no worker answers.
func mcpTools(ctx context.Context, a *app, o mcpOptions, tg *tgclient.Client) ([]toolcore.ToolInfo, error) {
	tools, err := tg.ListTools(ctx)
	if err == nil {
		return tools, nil
	}
	if !errors.Is(err, tgclient.ErrNoWorker) {
		return nil, err
	}
	a.logger.Sugar().Warnf("no worker answered on task queue %s; listing this build's toolbox", o.taskQueue)
	reg, err := o.toolbox.registry(nil)
	if err != nil {
		return nil, err
	}
	return reg.Infos(), nil
}
