package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// NewTransport returns a fresh transport to one MCP server: a mount reconnects with a new one
// after a transport failure (for a command, a new process).
type NewTransport func() sdk.Transport

// TargetOptions configure TargetWith. They work at their zero value.
type TargetOptions struct {
	// Env names the variables of this process that a command is started with, beside those of
	// BaseEnv; a name that is not set is left out. Nothing else is inherited: a mounted server
	// never sees the worker's TEMPORAL_API_KEY, codec keys or database password unless named
	// here. Optional: default none.
	Env []string
	// LookupEnv reads this process's variables. Optional: default os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// BaseEnv names the variables every mounted command gets when they are set in this process: what
// a process needs to find programs, its home and temporary directory, and its locale and zone.
func BaseEnv() []string {
	return []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ"}
}

// CommandEnv is the environment of a mounted command: BaseEnv's variables and opts.Env's, with
// their values in this process, in that order, each once.
func CommandEnv(opts TargetOptions) []string {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	env := []string{}
	seen := map[string]bool{}
	for _, name := range append(BaseEnv(), opts.Env...) {
		if seen[name] {
			continue
		}
		seen[name] = true
		if v, ok := lookup(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// Target is TargetWith(target, TargetOptions{}): a command gets only BaseEnv's variables.
func Target(target string) (NewTransport, error) { return TargetWith(target, TargetOptions{}) }

// TargetWith returns the transport of a mount target: an http:// or https:// URL is the
// streamable HTTP transport; anything else is a command line, split on white space (no quoting),
// spawned with the environment of CommandEnv(opts) and its stderr on this process's stderr, and
// spoken to over stdin/stdout.
func TargetWith(target string, opts TargetOptions) (NewTransport, error) {
	target = strings.TrimSpace(target)
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		return func() sdk.Transport { return &sdk.StreamableClientTransport{Endpoint: target} }, nil
	}
	argv := strings.Fields(target)
	if len(argv) == 0 {
		return nil, errors.New("empty MCP server target: want a command line or an http(s) URL")
	}
	env := CommandEnv(opts)
	return func() sdk.Transport {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Stderr = os.Stderr
		return &sdk.CommandTransport{Command: cmd}
	}, nil
}

// SplitMount splits "PREFIX=TARGET" (the worker's --mcp flag) and checks PREFIX.
func SplitMount(spec string) (prefix, target string, err error) {
	prefix, target, ok := strings.Cut(spec, "=")
	if !ok || !prefixPattern.MatchString(prefix) {
		return "", "", fmt.Errorf("MCP mount %q: want PREFIX=COMMAND... or PREFIX=http(s)://URL, PREFIX matching %s", spec, prefixPattern)
	}
	return prefix, target, nil
}

// ParseMount parses "PREFIX=TARGET" (the worker's --mcp flag): PREFIX names the mount, TARGET is
// as Target takes it.
func ParseMount(spec string) (prefix string, transport NewTransport, err error) {
	prefix, target, err := SplitMount(spec)
	if err != nil {
		return "", nil, err
	}
	transport, err = Target(target)
	if err != nil {
		return "", nil, fmt.Errorf("MCP mount %q: %w", spec, err)
	}
	return prefix, transport, nil
}

// prefixPattern bounds a mount prefix so that PREFIX_NAME can be a toolgate tool name.
var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,32}$`)

// notToolNameChar matches what a toolgate tool name may not hold (MCP names may hold '.' and '/').
var notToolNameChar = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// MountOptions configure Mount. They work at their zero value.
type MountOptions struct {
	// Timeout bounds one attempt of a remote call. Optional: default toolcore.DefaultTimeout.
	Timeout time.Duration
	// HeartbeatTimeout bounds the silence of a running remote call. Optional: default
	// toolcore.DefaultHeartbeatTimeout.
	HeartbeatTimeout time.Duration
	// MaxAttempts bounds the attempts of remote ReadOnly and Idempotent tools after transport
	// failures. Optional: default toolcore.DefaultMaxAttempts.
	MaxAttempts int
	// Logger logs the SDK's client activity. Optional: default none.
	Logger *slog.Logger
	// Approve are globs (path.Match syntax) over the mounted tool names (PREFIX_NAME, such as
	// "fs_delete_*" or "fs_*" for a whole mount): a matching tool requires approval
	// (toolcore.Options.RequireApproval) for every call. Optional: default none.
	Approve []string
	// ApproveByCaller are globs like Approve: a matching tool that requires approval lets the
	// caller's human decide it (toolcore.Options.ApprovalByCaller: through MCP 2026-07-28's
	// tasks/update); operators can still decide. Optional: default none, operators only.
	ApproveByCaller []string
	// Headers are HTTP headers of a streamable-HTTP mount whose values are secrets (an API key,
	// "Authorization: Bearer ..."), resolved from Secrets each time the mount connects or
	// reconnects, so a rotated secret is used by the next connection. Every mounted tool
	// declares their secrets (toolcore.Options.Secrets): its attempts redact the values from
	// whatever the remote server sends back. They are sent to the endpoint's scheme, host and
	// port only (never on a redirect elsewhere), over https or over http to loopback only.
	// Optional: default none.
	Headers []SecretHeader
	// Query are query parameters of a streamable-HTTP mount whose values are secrets, like
	// Headers, for a server that takes its key only in the URL. Optional: default none.
	Query []SecretQuery
	// Secrets resolves the secrets of Headers and Query: the worker's source
	// (worker.Options.Secrets, which resolves them again for each attempt, to redact them).
	// Required with Headers or Query.
	Secrets toolcore.SecretSource
	// AskCaller relays the server's elicitation/create and sampling/createMessage during a call
	// (at 2025-11-25 on the call's stream, at 2026-07-28 as an InputRequiredResult) to the
	// mounted tool's caller as its questions (remote_input.go): the client declares elicitation
	// and sampling, and the mounted tools are Interactive. Optional: default false (the client
	// declares neither).
	AskCaller bool
	// KeepParts returns the images, audio, embedded resources and resource links of the
	// server's results as the call's parts (toolcore.Rich; remote_parts.go), besides describing
	// them in the content: the worker must have a part store (worker.Options.Parts). Optional:
	// default false (binary contents are described by their size only).
	KeepParts bool
}

// ApprovalRequired reports whether a mounted tool name matches one of globs; a malformed glob
// is an error.
func ApprovalRequired(name string, globs []string) (bool, error) {
	for _, g := range globs {
		ok, err := path.Match(g, name)
		if err != nil {
			return false, fmt.Errorf("approval glob %q: %w", g, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// Remote is a mounted MCP server: its tools as toolgate tools, and the session their calls use.
// It is safe for concurrent use; Close ends the session.
type Remote struct {
	prefix       string
	newTransport NewTransport
	client       *sdk.Client
	tools        []toolcore.Tool
	opts         MountOptions // Headers, Query and Secrets: resolved at each connect

	mu      sync.Mutex
	current *sdk.ClientSession // nil until connected, and after a transport failure
	// currentSecrets are the header and query values current was connected with (nil without).
	currentSecrets *mountSecrets

	// progress routes notifications/progress by token to the running call's route.
	progress sync.Map // string -> *progressRoute
	// askers are the in-flight calls the server's requests are asked in (MountOptions.AskCaller).
	askers askers
}

// progressRoute is a running call's progress: its reporter, and how many notifications of its
// token the connection read (in wire order, before the result: remoteWire counts them) and the
// handler delivered. The SDK hands notifications to its handler asynchronously, so the result
// can arrive first: the call waits until every notification read before its result is
// delivered, the last report included.
type progressRoute struct {
	report func(toolcore.Progress)

	mu      sync.Mutex
	read    int // notifications read off the connection
	handled int // notifications delivered to report
	change  chan struct{}
}

func newProgressRoute(report func(toolcore.Progress)) *progressRoute {
	return &progressRoute{report: report, change: make(chan struct{}, 1)}
}

func (p *progressRoute) update(f func()) {
	p.mu.Lock()
	f()
	p.mu.Unlock()
	select {
	case p.change <- struct{}{}:
	default:
	}
}

// progressDrainLimit bounds drain: a notification the SDK read but drops (params it cannot
// decode) is never delivered, and must not hold the result.
const progressDrainLimit = 5 * time.Second

// drain waits until every notification read before the result has been delivered, at most
// progressDrainLimit.
func (p *progressRoute) drain(ctx context.Context) {
	limit := time.NewTimer(progressDrainLimit)
	defer limit.Stop()
	for {
		p.mu.Lock()
		done := p.handled >= p.read
		p.mu.Unlock()
		if done {
			return
		}
		select {
		case <-p.change:
		case <-ctx.Done():
			return
		case <-limit.C:
			return
		}
	}
}

// Mount connects to an MCP server and defines each of its tools as the toolgate tool
// PREFIX_NAME (characters of NAME a tool name may not hold become '_'):
//
//   - its input schema is the remote tool's, checked in workflow code like any tool's;
//   - its side-effect class comes from the annotations: readOnlyHint is ReadOnly, else
//     idempotentHint is Idempotent, else (no annotations too) Unsafe;
//   - a call runs tools/call on the remote server with the activity's context, so cancellation
//     reaches the remote call as notifications/cancelled; the remote server's progress becomes the
//     call's progress, and _meta carries the call's idempotency key (IdempotencyKeyMeta);
//   - a tool whose execution.taskSupport is "required" is called as a task (remote_tasks.go):
//     created once per call, polled durably, cancelled with tasks/cancel; an Unsafe one declares
//     a Reconcile that polls the task of a lost attempt to its end (remote_reconcile.go);
//   - a result with isError is an error result whose message is the result's text; a JSON-RPC
//     error of the remote server is one too; a transport failure is toolcore.Transient (retried
//     for ReadOnly and Idempotent tools only) and the next call reconnects;
//   - a successful result's content is as Remote.output says.
func Mount(ctx context.Context, prefix string, transport NewTransport, opts MountOptions) (*Remote, error) {
	if !prefixPattern.MatchString(prefix) {
		return nil, fmt.Errorf("MCP mount prefix %q must match %s", prefix, prefixPattern)
	}
	if err := checkMountSecrets(opts); err != nil {
		return nil, fmt.Errorf("MCP mount %s: %w", prefix, err)
	}
	r := &Remote{prefix: prefix, newTransport: transport, opts: opts}
	clientOpts := &sdk.ClientOptions{
		Logger: opts.Logger,
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			token, _ := req.Params.ProgressToken.(string)
			if v, ok := r.progress.Load(token); ok {
				route := v.(*progressRoute)
				route.report(toolcore.Progress{
					Completed: int64(req.Params.Progress), Total: int64(req.Params.Total), Message: req.Params.Message,
				})
				route.update(func() { route.handled++ })
			}
		},
	}
	if opts.AskCaller {
		askHandlers(clientOpts, &r.askers)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "toolgate", Version: "dev"}, clientOpts)
	client.AddSendingMiddleware(injectTrace) // the attempt's trace context in params._meta (tracing.go)
	if err := installTaskMethods(client); err != nil {
		return nil, err
	}
	r.client = client
	cs, err := r.connect(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for remote, err := range cs.Tools(ctx, nil) {
		if err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("MCP server %q: list tools: %w", prefix, err)
		}
		tool, err := r.define(remote, opts)
		if err == nil && seen[tool.Name()] != "" {
			err = fmt.Errorf("its name is also that of remote tool %q", seen[tool.Name()])
		}
		if err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("MCP server %q: tool %q: %w", prefix, remote.Name, err)
		}
		seen[tool.Name()] = remote.Name
		r.tools = append(r.tools, tool)
	}
	return r, nil
}

// Tools returns the mounted tools, to register with a worker's registry.
func (r *Remote) Tools() []toolcore.Tool { return r.tools }

// Close ends the session with the remote server (for a command, the process).
func (r *Remote) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current == nil {
		return nil
	}
	err := r.current.Close()
	r.current, r.currentSecrets = nil, nil
	return err
}

// SideEffectOf maps MCP tool annotations to a side-effect class: readOnlyHint is ReadOnly, else
// idempotentHint is Idempotent, else Unsafe (also without annotations: the MCP defaults are
// not read-only, not idempotent, destructive).
func SideEffectOf(a *sdk.ToolAnnotations) toolcore.SideEffect {
	switch {
	case a == nil:
		return toolcore.Unsafe
	case a.ReadOnlyHint:
		return toolcore.ReadOnly
	case a.IdempotentHint:
		return toolcore.Idempotent
	}
	return toolcore.Unsafe
}

// define returns the toolgate tool of one remote tool.
func (r *Remote) define(remote *sdk.Tool, opts MountOptions) (toolcore.Tool, error) {
	input, err := json.Marshal(remote.InputSchema)
	if err != nil {
		return toolcore.Tool{}, fmt.Errorf("input schema: %w", err)
	}
	var output json.RawMessage
	if remote.OutputSchema != nil {
		if output, err = json.Marshal(remote.OutputSchema); err != nil {
			return toolcore.Tool{}, fmt.Errorf("output schema: %w", err)
		}
	}
	description := strings.TrimSpace(remote.Description)
	if description == "" {
		description = fmt.Sprintf("Tool %s of the MCP server %s.", remote.Name, r.prefix)
	}
	sideEffect := SideEffectOf(remote.Annotations)
	maxAttempts := opts.MaxAttempts
	if sideEffect == toolcore.Unsafe {
		maxAttempts = 1
	}
	name := remote.Name
	asTask := taskSupportOf(remote) == "required"
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = toolcore.DefaultTimeout
	}
	// The remote task outlives every attempt that may poll it: of an Unsafe tool, its one
	// attempt and the ReconcileTool attempts after a lost one (reconcileTask).
	ttl := timeout * time.Duration(max(maxAttempts, toolcore.DefaultMaxAttempts, 1))
	var reconcile func(context.Context, string) (any, bool, error)
	if asTask && sideEffect == toolcore.Unsafe {
		ttl = timeout * (1 + wire.ReconcileMaxAttempts)
		reconcile = func(ctx context.Context, _ string) (any, bool, error) { return r.reconcileTask(ctx) }
	}
	toolName := r.prefix + "_" + notToolNameChar.ReplaceAllString(name, "_")
	approve, err := ApprovalRequired(toolName, opts.Approve)
	if err != nil {
		return toolcore.Tool{}, err
	}
	byCaller, err := ApprovalRequired(toolName, opts.ApproveByCaller)
	if err != nil {
		return toolcore.Tool{}, err
	}
	return toolcore.Define(toolcore.Definition[json.RawMessage]{
		Name:         toolName,
		Description:  description,
		InputSchema:  input,
		OutputSchema: output,
		Execute: func(ctx context.Context, args json.RawMessage) (any, error) {
			if asTask {
				return r.callTask(ctx, name, args, ttl)
			}
			return r.call(ctx, name, args)
		},
		Reconcile: reconcile,
		Options: toolcore.Options{
			SideEffect:       sideEffect,
			Timeout:          opts.Timeout,
			HeartbeatTimeout: opts.HeartbeatTimeout,
			MaxAttempts:      maxAttempts,
			RequireApproval:  approve,
			ApprovalByCaller: byCaller,
			// Without annotations the MCP defaults make it Unsafe: flagged, not declared.
			SideEffectAssumed: remote.Annotations == nil,
			// The mount's credentials: each attempt resolves them to redact what the server
			// echoes of them.
			Secrets: mountSecretNames(opts),
			// The server's questions are the call's (remote_input.go).
			Interactive: opts.AskCaller,
		},
	})
}

// call runs tools/call for the remote tool name.
func (r *Remote) call(ctx context.Context, name string, args json.RawMessage) (any, error) {
	cs, err := r.session(ctx)
	if err != nil {
		return nil, err
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if key := toolcore.IdempotencyKey(ctx); key != "" {
		params.Meta = sdk.Meta{IdempotencyKeyMeta: key}
	}
	token := progressToken()
	params.SetProgressToken(token)
	route := r.route(ctx, token)
	defer r.progress.Delete(token)

	var asking *remoteAsk
	if r.opts.AskCaller {
		asking = r.askers.begin(ctx)
		defer r.askers.end(asking)
	}
	res, err := cs.CallTool(ctx, params)
	if asked := asking.askedOf(); asked != nil {
		return nil, asked // the call waits for the answer; the next attempt calls again
	}
	if err != nil {
		return nil, r.callError(ctx, cs, err)
	}
	if task, ok := createdTask(res); ok {
		// A server that made a task of a call that did not ask for one (2026-07-28 lets it).
		res, err = r.awaitTask(ctx, task.TaskID, task)
		if err != nil {
			return nil, err
		}
	}
	route.drain(ctx)
	return r.output(res)
}

// route registers the progress route of token, reporting to the call of ctx.
func (r *Remote) route(ctx context.Context, token string) *progressRoute {
	route := newProgressRoute(func(p toolcore.Progress) { toolcore.ReportProgress(ctx, p) })
	r.progress.Store(token, route)
	return route
}

// session is connect for a call: a failure to connect is toolcore.Transient.
func (r *Remote) session(ctx context.Context) (*sdk.ClientSession, error) {
	cs, err := r.connect(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, toolcore.Transient(err)
	}
	return cs, nil
}

// callError is the error of a request on cs that failed with err: the context's when it is
// done, the remote server's verdict when it answered, else a transport failure
// (toolcore.Transient), after which the next request reconnects.
func (r *Remote) callError(ctx context.Context, cs *sdk.ClientSession, err error) error {
	if ctx.Err() != nil {
		// Canceled or timed out: the activity records it as such.
		return ctx.Err()
	}
	secrets := r.secretsOf(cs)
	if secrets.refusedByServer() {
		// Rotated or revoked: the next request reconnects with the secrets as they are now.
		r.drop(cs)
		return toolcore.Transient(fmt.Errorf("MCP server %s refused the mount's credentials (HTTP 401 or 403): %s", r.prefix, secrets.redact(err.Error())))
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && !localErrorCodes[rpcErr.Code] {
		// The server answered: a protocol error is its verdict on this call, not retried.
		return fmt.Errorf("MCP server %s: %s (JSON-RPC error %d)", r.prefix, secrets.redact(rpcErr.Message), rpcErr.Code)
	}
	r.drop(cs)
	if secrets != nil {
		return toolcore.Transient(fmt.Errorf("MCP server %s: %s", r.prefix, secrets.redact(err.Error())))
	}
	return toolcore.Transient(fmt.Errorf("MCP server %s: %w", r.prefix, err))
}

// modelOutput is the model-facing toolgate output of a remote result (output adds the parts):
//   - isError: an error whose message is the result's text contents;
//   - structuredContent when present: that JSON (served back by toolgate mcp as
//     structuredContent when the remote tool has an outputSchema);
//   - a single text content: its text as it is (toolcore.Text: not JSON-quoted);
//   - else the content list as JSON, where the bytes of images, audio and embedded blobs are
//     left out, each replaced by its size ("omittedBytes"): a model reads text, and base64 would
//     fill the capped content with nothing it can use.
//
// The values of the current connection's headers and query parameters are redacted from it
// (the attempt redacts the values it resolved; these may be older, for a server that still
// accepts a rotated credential).
func (r *Remote) modelOutput(res *sdk.CallToolResult) (any, error) {
	secrets := r.liveSecrets()
	if res.IsError {
		return nil, errors.New(secrets.redact(resultText(res)))
	}
	if res.StructuredContent != nil {
		structured, err := json.Marshal(res.StructuredContent)
		if err == nil {
			return secrets.redactJSON(structured), nil
		}
	}
	if len(res.Content) == 1 {
		if text, ok := res.Content[0].(*sdk.TextContent); ok {
			// The text as the server wrote it, not a JSON string of it: the model reads what the
			// remote tool said, byte for byte (capped like any content).
			return toolcore.Text(secrets.redact(text.Text)), nil
		}
	}
	list := make([]any, len(res.Content))
	for i, c := range res.Content {
		list[i] = describeContent(c)
	}
	content, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: encode content: %w", r.prefix, err)
	}
	return secrets.redactJSON(content), nil
}

// describeContent is c for the content list of output: binary data left out, its size said.
func describeContent(c sdk.Content) any {
	switch c := c.(type) {
	case *sdk.ImageContent:
		return map[string]any{"type": "image", "mimeType": c.MIMEType, "omittedBytes": len(c.Data)}
	case *sdk.AudioContent:
		return map[string]any{"type": "audio", "mimeType": c.MIMEType, "omittedBytes": len(c.Data)}
	case *sdk.EmbeddedResource:
		if c.Resource != nil && c.Resource.Blob != nil {
			return map[string]any{"type": "resource", "resource": map[string]any{
				"uri": c.Resource.URI, "mimeType": c.Resource.MIMEType, "omittedBytes": len(c.Resource.Blob),
			}}
		}
	}
	return c
}

// localErrorCodes are the JSON-RPC error codes the Go SDK's client makes up itself for a request
// that did not get an answer (client closing -32003, server closing -32004, rejected by the
// transport -32005): transport failures, not the remote server's verdict.
var localErrorCodes = map[int64]bool{-32003: true, -32004: true, -32005: true}

// connect returns the session, connecting a new one when there is none.
func (r *Remote) connect(ctx context.Context) (*sdk.ClientSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil {
		return r.current, nil
	}
	transport := r.newTransport()
	wire := remoteWire{r}
	t, isHTTP := transport.(*sdk.StreamableClientTransport)
	var secrets *mountSecrets
	if len(r.opts.Headers)+len(r.opts.Query) > 0 {
		if !isHTTP {
			return nil, fmt.Errorf("MCP server %s: headers and query parameters apply to an http(s) server, not a command", r.prefix)
		}
		var err error
		if secrets, err = resolveMountSecrets(ctx, r.prefix, t.Endpoint, r.opts); err != nil {
			return nil, err
		}
	}
	if isHTTP {
		// Not wrapped: the SDK tells its HTTP connection of session changes through an unexported
		// method a wrapper would hide. Its HTTP exchanges are.
		withWire := *t
		base := http.DefaultTransport
		client := &http.Client{}
		if t.HTTPClient != nil {
			*client = *t.HTTPClient
			if t.HTTPClient.Transport != nil {
				base = t.HTTPClient.Transport
			}
		}
		if secrets != nil {
			base = secretTransport{base: base, secrets: secrets}
		}
		client.Transport = remoteRoundTripper{base: TaskRoutingTransport(base), wire: wire}
		withWire.HTTPClient = client
		transport = &withWire
	} else {
		transport = remoteTransport{Transport: transport, wire: wire}
	}
	cs, err := r.client.Connect(ctx, transport, nil)
	if err != nil {
		if secrets != nil {
			// What a refusing server answered may quote the credential.
			return nil, fmt.Errorf("connect to MCP server %s: %s", r.prefix, secrets.redact(err.Error()))
		}
		return nil, fmt.Errorf("connect to MCP server %s: %w", r.prefix, err)
	}
	r.current, r.currentSecrets = cs, secrets
	return cs, nil
}

// drop closes cs after a transport failure, so the next call reconnects.
func (r *Remote) drop(cs *sdk.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current == cs {
		r.current, r.currentSecrets = nil, nil
	}
	_ = cs.Close()
}

// resultText joins the text contents of a result (the message of an isError result).
func resultText(res *sdk.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// progressToken returns a fresh progress token.
func progressToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "toolgate-" + hex.EncodeToString(b[:])
}
