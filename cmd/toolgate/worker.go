package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/internal/searchattr"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

type workerOptions struct {
	conn          connOptions
	taskQueue     string
	setup         bool
	stopTimeout   time.Duration
	toolbox       toolboxOptions
	policy        policyFlags
	metrics       metricsOptions
	mcpMounts     []string
	mcpEnv        []string
	mcpSecrets    mountSecretFlags
	secrets       secretsFlags
	mcpApprove    []string
	mcpByCaller   []string
	mcpHeartbeat  time.Duration
	mcpTimeout    time.Duration
	workflowCache int
	traces        traceOptions // otel.go
	deployment    worker.Deployment
	oauth         oauthFlags
	credStore     credentialStoreFlags
	partStore     partStoreFlags // parts.go
	callbacks     callbackFlags
	sandbox       sandboxFlags // sandbox.go
}

func newWorkerCommand(a *app) *cobra.Command {
	var o workerOptions
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a worker with the toolbox against any Temporal frontend",
		Long: `Run a worker that executes tool calls with the toolbox, against any Temporal frontend:
a self-hosted cluster, Temporal Cloud (--api-key, or mTLS with --tls-cert-path/--tls-key-path),
or toolgate dev. Run as many as you like on one task queue: Temporal spreads the calls.

--setup first registers the search attributes ToolName, ToolCallId and ToolOutcome on the
namespace (idempotent). Where the server does not allow it (Temporal Cloud registers them in its
console or tcld), the worker says so and runs on: it detects which attributes the namespace has
and never upserts a missing one.

Ctrl-C (or SIGTERM) drains the worker: it stops polling at once, gives running tools
--stop-timeout (30 s) to finish, then interrupts the attempts left and reports each to the server
(waiting up to 10 s more for their tools to return), and exits 0. An interrupted readOnly or
idempotent call goes on at once on another worker, and the interrupted attempt does not count
against its MaxAttempts; an unsafe one ends with an outcome-unknown TOOL_EXECUTION_FAILED (or
is reconciled). Give the process a grace period above --stop-timeout + 10 s before a SIGKILL.

--deployment-name NAME --build-id ID (or TOOLGATE_DEPLOYMENT_NAME, TOOLGATE_BUILD_ID) joins
the worker to a Temporal Worker Deployment Version, with every task queue it serves: a tool call
completes on the version that validated it (pinned), and a new build with another tool set starts
beside the old one, gets no calls until "toolgate deploy promote" makes it current, and is never
refused as a conflicting tool set. The worker records its tool set in the version's metadata
("toolgate deploy status" shows it). Keep the old version's workers running until "toolgate deploy
status" says it is drained. Without a deployment the worker is unversioned, and one whose tool
set differs from a live worker's on its task queue refuses to start.

--mcp PREFIX=COMMAND... or --mcp PREFIX=http(s)://URL (repeatable) mounts an MCP server: each of
its tools becomes the tool PREFIX_NAME, with the remote input schema, a side-effect class from
its annotations (readOnlyHint: readOnly, idempotentHint: idempotent, otherwise unsafe), and each
call a tools/call on the remote server. A command is split on spaces and spawned once, again
after a transport failure.

A mounted command starts with a clean environment: only PATH, HOME, USER, LOGNAME, TMPDIR,
LANG, LC_ALL, LC_CTYPE and TZ, plus the variables named for its mount by --mcp-env PREFIX=NAME
(repeatable; names only, the value is this process's). It never sees TEMPORAL_API_KEY, codec keys
or the database password unless named.

--secrets-dir DIR and --secrets-env-prefix PREFIX give the worker its secrets: the tools that
declare a secret (toolcore.Options.Secrets) read DIR/NAME (re-read when the file changes), else
the variable PREFIX+NAME (upper case). An http(s) mount's credentials are secrets too, never part
of argv: --mcp-bearer PREFIX=SECRET_NAME sends Authorization: Bearer <value>, --mcp-header
PREFIX=Header-Name=SECRET_NAME any header, --mcp-query PREFIX=param=SECRET_NAME a query
parameter; resolved at each (re)connect, and redacted from what the server sends back. An --mcp
URL with user:password@ or a credential's query parameter (key, token, ...) is refused.

--mcp-approve GLOB (repeatable, path.Match syntax over the mounted names PREFIX_NAME, such as
'fs_delete_*' or 'fs_*' for a whole mount) makes every call of a matching tool wait for a human
decision (toolgate approve). A remote tool without annotations is unsafe by the MCP defaults:
'toolgate tools --remote' flags it "unsafe (assumed)". --mcp-approve-by-caller GLOB lets the
human of the MCP client that called a matching tool decide its approval too (toolgate mcp shows
the waiting call as input_required to a 2026-07-28 client, which answers with tasks/update).

--mcp-timeout D (1m) bounds one attempt of a mounted tool's call: raise it for remote tools
that take longer (a remote task is polled for that long by each attempt, and by each of an
unsafe tool's reconcile attempts). --mcp-heartbeat-timeout D (1m) is how long a mounted tool's
call may go without a heartbeat before Temporal counts its worker lost: then a readOnly or
idempotent call, or one whose remote server runs it as a task (polled again, never started
twice), is retried on another worker.

--oauth-providers FILE gives the tools that declare a per-user credential their principal's
OAuth token (docs/secrets.md): the file lists the providers (client secrets by name, resolved
from the worker's secret source), the tokens are kept encrypted with --codec-key's keys in
--credentials-dir or PostgreSQL (--credentials-postgres-file), and a call whose principal has no
token waits "awaiting consent" with an authorization URL. The provider redirects the principal
to the consent endpoint this worker serves on --consent-listen (127.0.0.1:8250) at
/oauth/callback, which stores the token and wakes the waiting calls. It needs no
authentication (the URL's single-use state is the capability, usable for --consent-ttl, 24h);
a non-loopback --consent-listen needs --consent-url, the public https URL registered at the
providers as the redirect URI. Tokens go only to calls whose principal is authenticated (toolgate
mcp's OAuth, or a frontend authorizer), not merely asserted by the starting client (--as):
--oauth-authenticated-only=false lets asserted principals have them (toolgate dev's default).

--callback-listen ADDR serves the callback endpoint: the URLs tools hand to external systems
(toolcore.Callback: a payment provider's webhook), each unguessable, expiring with the tool's
InputTimeout and answered once; a POST to one answers the waiting call with its body. The URLs
start with --callback-url (default http://ADDR/callback; a non-loopback ADDR needs an https
--callback-url) and are sealed with the key in the secret --callback-key-secret (callback_key) of
--secrets-dir or --secrets-env-prefix: one key a line, at least 32 bytes, the first seals and
every one opens. Every worker of a fleet reads the same key, so any of them serves any URL;
--callback-url without --callback-listen mints URLs that other workers serve (docs/talkback.md).

--sandbox-dir DIR serves the sandbox tools (docs/sandbox.md): exec runs a command under
bubblewrap in the workspace of the call's agent run, and workspace_write_file,
workspace_read_file and workspace_list_dir reach its files. DIR holds this worker's local copies;
the workspaces themselves are kept in --sandbox-store DIR or PostgreSQL
(--sandbox-store-postgres-file), which every worker of the fleet shares, sealed with
--codec-key's keys when given: a call on another worker, or after this one is lost, finds the
files the run's earlier calls left. Commands run as an unprivileged user with no network (or only
the --sandbox-allow-host names, through a proxy, on public addresses), with only HOME, PATH,
TMPDIR and the --sandbox-env names exec's env sets; --sandbox-ro binds more host paths read-only
(a toolchain). --sandbox-command NAME=LINE adds a tool that runs one fixed line
(--sandbox-idempotent-command: declared idempotent, so retried), and --sandbox-no-exec leaves
exec out. The worker removes workspaces no call committed for --sandbox-retention (7 days).`,
		Example: `  toolgate worker --setup
  TEMPORAL_ADDRESS=temporal.example.com:7233 toolgate worker --task-queue tools --root /srv/docs
  toolgate worker --metrics-listen 127.0.0.1:9464
  toolgate worker --deployment-name tools --build-id "$(git rev-parse --short HEAD)"
  toolgate worker --mcp 'fs=npx -y @modelcontextprotocol/server-filesystem /srv/docs' --mcp web=http://127.0.0.1:3000/mcp
  toolgate worker --mcp 'gh=github-mcp-server stdio' --mcp-env gh=GITHUB_TOKEN --mcp-approve 'gh_delete_*'
  toolgate worker --secrets-dir /run/secrets --mcp web=https://mcp.example.com/mcp --mcp-bearer web=web_token
  TEMPORAL_API_KEY=... toolgate worker --address ns.acct.tmprl.cloud:7233 -n ns.acct
  toolgate worker --codec-key keys.txt --oauth-providers providers.json --credentials-dir /var/lib/toolgate/credentials
  toolgate worker --secrets-dir /run/secrets --callback-listen 0.0.0.0:8251 --callback-url https://hooks.example.com/callback
  toolgate worker --sandbox-dir /var/lib/toolgate/sandbox --sandbox-store /srv/shared/sandbox-store --sandbox-ro /usr/local/go --sandbox-idempotent-command 'run_tests=go test ./...'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWorker(cmd.Context(), a, o)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTaskQueueFlag(cmd, &o.taskQueue)
	addToolboxFlags(cmd, &o.toolbox)
	addPolicyFlags(cmd, &o.policy, policyUsageWorker)
	addMetricsFlag(cmd, &o.metrics)
	addCallCountFlags(cmd, &o.metrics)
	addWorkflowCacheFlag(cmd, &o.workflowCache)
	addTraceFlags(cmd, &o.traces, true)
	cmd.Flags().DurationVar(&o.stopTimeout, "stop-timeout", 30*time.Second, "on Ctrl-C, how long running tools may finish before the worker interrupts them (drain)")
	cmd.Flags().BoolVar(&o.setup, "setup", false, "register the search attributes on the namespace first, when allowed")
	cmd.Flags().StringVar(&o.deployment.Name, "deployment-name", "", "join this worker deployment (with --build-id): a new build rolls out by toolgate deploy promote (default none: unversioned)")
	cmd.Flags().StringVar(&o.deployment.BuildID, "build-id", "", "this build's ID in --deployment-name (a new tool set or new code gets a new one)")
	bindEnv(cmd.Flags(), "deployment-name", "TOOLGATE_DEPLOYMENT_NAME")
	bindEnv(cmd.Flags(), "build-id", "TOOLGATE_BUILD_ID")
	cmd.Flags().StringArrayVar(&o.mcpMounts, "mcp", nil, "mount an MCP server's tools as PREFIX_NAME: PREFIX=COMMAND... or PREFIX=http(s)://URL (repeat)")
	addSecretsFlags(cmd, &o.secrets)
	addMountSecretFlags(cmd, &o.mcpSecrets)
	cmd.Flags().StringArrayVar(&o.mcpEnv, "mcp-env", nil, "PREFIX=NAME: pass this process's variable NAME to the mounted command PREFIX (repeat; nothing else but PATH, HOME, locale and TMPDIR is passed)")
	cmd.Flags().StringArrayVar(&o.mcpApprove, "mcp-approve", nil, "mounted tools whose PREFIX_NAME matches this glob require approval, such as 'fs_delete_*' (repeat)")
	cmd.Flags().StringArrayVar(&o.mcpByCaller, "mcp-approve-by-caller", nil, "mounted tools whose PREFIX_NAME matches this glob let the calling MCP client's human decide their approval (repeat)")
	cmd.Flags().DurationVar(&o.mcpTimeout, "mcp-timeout", toolcore.DefaultTimeout, "how long one attempt of a mounted tool's call may take")
	cmd.Flags().DurationVar(&o.mcpHeartbeat, "mcp-heartbeat-timeout", toolcore.DefaultHeartbeatTimeout, "how long a mounted tool's call may go without a heartbeat before its worker counts as lost")
	addOAuthFlags(cmd, &o.oauth, true)
	addCredentialStoreFlags(cmd, a, &o.credStore, credentialStoreWorker)
	addPartStoreFlags(cmd, a, &o.partStore, "(default none: a tool's rich result with parts to keep fails its call; with one, the images, audio and resources of --mcp servers' results are kept as parts too)")
	addCallbackFlags(cmd, &o.callbacks)
	addSandboxFlags(cmd, a, &o.sandbox, false)
	return cmd
}

func runWorker(ctx context.Context, a *app, o workerOptions) (err error) {
	if err := applyWorkflowCache(o.workflowCache); err != nil {
		return err
	}
	// Before anything echoes a mount: its URL may hold the credential it is refused for.
	if err := checkMountURLs(o.mcpMounts); err != nil {
		return err
	}
	reg, err := o.toolbox.registry(a.logger.Named("toolbox"))
	if err != nil {
		return err
	}
	if err := o.sandbox.check(); err != nil {
		return err
	}
	secretSource, err := o.secrets.source(a.lookupEnv)
	if err != nil {
		return err
	}
	mountSecrets, err := o.mcpSecrets.options(o.mcpMounts, secretSource)
	if err != nil {
		return err
	}
	mcpEnv, err := mountEnv(o.mcpEnv, o.mcpMounts, a.lookupEnv)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		flag  string
		globs []string
	}{{"--mcp-approve", o.mcpApprove}, {"--mcp-approve-by-caller", o.mcpByCaller}} {
		if _, err := mcp.ApprovalRequired("", f.globs); err != nil {
			return badInput(fmt.Errorf("%s: %w", f.flag, err))
		}
	}
	for _, f := range []struct {
		flag string
		d    time.Duration
	}{{"--mcp-timeout", o.mcpTimeout}, {"--mcp-heartbeat-timeout", o.mcpHeartbeat}} {
		if f.d <= 0 {
			return badInput(fmt.Errorf("%s %s: want a positive duration", f.flag, f.d))
		}
	}
	mountOpts := mcp.MountOptions{Approve: o.mcpApprove, ApproveByCaller: o.mcpByCaller, Timeout: o.mcpTimeout, HeartbeatTimeout: o.mcpHeartbeat,
		KeepParts: o.partStore.configured()} // a mounted server's images and resources become parts when there is a store
	for _, spec := range o.mcpMounts {
		remote, err := mountMCP(ctx, spec, mcpEnv, mountSecrets, mountOpts, reg)
		if err != nil {
			return err
		}
		defer remote.Close()
	}
	if err := o.metrics.checkCallCounts(); err != nil {
		return err
	}
	// A policy file that does not load fails before dialing.
	decider, err := o.policy.source(ctx, a.logger)
	if err != nil {
		return err
	}
	// So does a providers file, and a consent listener that cannot bind.
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
	traces, err := o.traces.start(ctx, a.lookupEnv, "toolgate-worker", a.logger)
	if err != nil {
		return err
	}
	defer traces.shutdown() // after the worker stopped: its last spans are flushed
	o.conn.tracer = traces.tracerProvider()
	c, ms, closeAll, err := dialMetered(ctx, a.logger, o.metrics, o.conn)
	if err != nil {
		return err
	}
	defer func() { err = closeAll(err) }()
	logger := a.logger.With(zap.String("address", o.conn.address), zap.String("namespace", o.conn.namespace),
		zap.String("taskQueue", taskQueueOrDefault(o.taskQueue)))
	if o.setup {
		if err := worker.SetupSearchAttributes(ctx, c, o.conn.namespace); err != nil {
			logger.Warn("search attributes not registered; the worker runs without upserting missing ones",
				zap.Error(err))
		} else {
			logger.Info("search attributes registered", zap.Strings("attributes", searchattr.Names()))
		}
	}
	dc, _ := o.conn.dataConverter(nil) // dialMetered loaded the same keys
	keys, _ := o.conn.keys.open(o.conn.codecKey, a.logger)
	creds, credsCloser, err := consent.credentialSource(ctx, a.logger, c, &o.credStore, credentialKeys(keys), secretSource)
	if err != nil {
		return err
	}
	defer credsCloser.Close()
	parts, partsCloser, err := o.partStore.open(ctx, credentialKeys(keys))
	if err != nil {
		return err
	}
	defer partsCloser.Close()
	sb, err := o.sandbox.open(ctx, a.logger.Named("sandbox"), credentialKeys(keys), parts != nil)
	if err != nil {
		return err
	}
	defer sb.Close()
	if err := sb.register(reg, a.logger.Named("sandbox")); err != nil {
		return err
	}
	callbackURLs, err := callbackEP.serve(ctx, a.logger, c, secretSource)
	if err != nil {
		return err
	}
	w, err := worker.New(c, o.conn.namespace, reg, worker.Options{TaskQueue: o.taskQueue, StopTimeout: o.stopTimeout, Logger: a.logger,
		Deployment: o.deployment, DataConverter: dc, Policy: decider, Secrets: secretSource, Credentials: creds, Callbacks: callbackURLs, Parts: parts,
		TracerProvider: traces.tracerProvider(), TraceContent: o.traces.content})
	if err != nil {
		return fmt.Errorf("create worker: %w", err)
	}
	if err := o.metrics.serveWorker(ctx, ms, c, w, o.conn.namespace, o.taskQueue); err != nil {
		return err
	}
	logger.Info("worker running; Ctrl-C stops it", zap.Strings("tools", reg.Names()))
	if err := w.Run(ctx); err != nil {
		return fmt.Errorf("run worker: %w", err)
	}
	return nil
}

// mountEnv groups --mcp-env PREFIX=NAME by prefix, each a TargetOptions reading lookup; a prefix
// that no --mcp mount has is an error.
func mountEnv(specs, mounts []string, lookup func(string) (string, bool)) (map[string]mcp.TargetOptions, error) {
	prefixes := map[string]bool{}
	for _, m := range mounts {
		if p, _, err := mcp.SplitMount(m); err == nil {
			prefixes[p] = true
		}
	}
	out := map[string]mcp.TargetOptions{}
	for p := range prefixes {
		out[p] = mcp.TargetOptions{LookupEnv: lookup}
	}
	for _, spec := range specs {
		prefix, name, ok := strings.Cut(spec, "=")
		if !ok || name == "" || strings.Contains(name, "=") {
			return nil, badInput(fmt.Errorf("--mcp-env %q: want PREFIX=NAME (a variable's name, never its value)", spec))
		}
		if !prefixes[prefix] {
			return nil, badInput(fmt.Errorf("--mcp-env %q: no --mcp mount has prefix %q", spec, prefix))
		}
		o := out[prefix]
		o.Env = append(o.Env, name)
		out[prefix] = o
	}
	return out, nil
}

// mountMCP mounts the MCP server of spec (PREFIX=TARGET), with the headers and query parameters
// of secrets[PREFIX], and registers its tools in reg.
func mountMCP(ctx context.Context, spec string, env map[string]mcp.TargetOptions, secrets map[string]mcp.MountOptions, opts mcp.MountOptions, reg *toolcore.Registry) (*mcp.Remote, error) {
	prefix, target, err := mcp.SplitMount(spec)
	if err != nil {
		return nil, badInput(fmt.Errorf("--mcp: %w", err))
	}
	if s, ok := secrets[prefix]; ok {
		opts.Headers, opts.Query, opts.Secrets = s.Headers, s.Query, s.Secrets
	}
	transport, err := mcp.TargetWith(target, env[prefix])
	if err != nil {
		return nil, badInput(fmt.Errorf("--mcp %s: %w", prefix, err))
	}
	remote, err := mcp.Mount(ctx, prefix, transport, opts)
	if err != nil {
		return nil, fmt.Errorf("--mcp %s: %w", prefix, err)
	}
	if err := reg.RegisterMany(remote.Tools()...); err != nil {
		_ = remote.Close()
		return nil, fmt.Errorf("--mcp %s: %w", prefix, err)
	}
	return remote, nil
}
