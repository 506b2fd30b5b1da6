package mcp

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/tooldefs"
	"github.com/toolgate/toolgate/wire"
)

// IdempotencyKeyMeta is the tools/call _meta key whose string value is the tool call ID: a
// retried call with the same key attaches to the recorded run instead of running again.
const IdempotencyKeyMeta = wire.MCPIdempotencyKeyMeta

// WorkflowIDMeta is the _meta key of a CallToolResult that names the call's workflow ID.
const WorkflowIDMeta = wire.MCPWorkflowIDMeta

// DefaultProgressInterval is how often a call with a progress token reads the tool's progress.
const DefaultProgressInterval = 250 * time.Millisecond

// Options configure NewServer. They work at their zero value.
type Options struct {
	// Name and Version are the server's MCP implementation info. Optional: default "toolgate", "dev".
	Name, Version string
	// ProgressInterval is how often a call with a progress token reads the tool's progress.
	// Optional: default DefaultProgressInterval.
	ProgressInterval time.Duration
	// Logger logs the SDK's server activity. Optional: default none.
	Logger *slog.Logger
	// PollAfter, when set, makes a tools/call over streamable HTTP that is still running after
	// this long close its SSE stream with a retry field of PollRetry (SSE polling, SEP-1699): the
	// client reconnects with GET and Last-Event-ID, and HTTPHandler's event store replays what it
	// missed, the result included. It frees connections that proxies would cut on long calls.
	// Streams of other transports are unaffected. Optional: default off.
	PollAfter time.Duration
	// PollRetry is the reconnection delay a polled stream asks for. Optional: default
	// DefaultPollRetry.
	PollRetry time.Duration
	// TaskSupportForbidden and TaskSupportRequired are globs (path.Match) of tool names whose
	// execution.taskSupport is forbidden (never a task: a 2026-07-28 call answers at once) or
	// required (a 2026-07-28 client must declare the tasks extension; a 2025-11-25 one must ask
	// for a task); forbidden wins. Optional: default optional for every tool, since every
	// toolgate call is durable.
	TaskSupportForbidden, TaskSupportRequired []string
	// TaskTTL is the ttlMs of 2026-07-28 tasks: how long a closed call stays readable, the
	// namespace's retention (NamespaceRetention). Optional: default null (not stated).
	TaskTTL time.Duration
	// PrincipalClaims name the token claims of a principal's groups, tenant and name. Optional:
	// default "groups", "tenant", "name".
	PrincipalClaims PrincipalClaims
	// Grants clamp the _meta priority and fairness weight of each token principal's calls
	// (grants.go). Optional: default every principal gets DefaultGrant.
	Grants Grants
	// Budget bounds the tools/call requests of each session, or of each principal's stateless
	// requests (budget.go): calls, cost units, wall clock; CallsPerTool applies too. A call over
	// it is answered BUDGET_EXCEEDED and starts nothing. Limits that fail
	// toolcore.BudgetLimits.Check refuse every call. Optional: default no limit.
	Budget toolcore.BudgetLimits
	// Policy hides from tools/list the tools the request's principal may never call (policy.go);
	// the workers decide the calls. Optional: default none (every tool listed).
	Policy *policy.Source
	// RequestStateKey is the HMAC-SHA256 key of the requestState of 2026-07-28 input_required
	// results (a tool that asks mid-run; input.go), at least RequestStateKeyBytes bytes: servers
	// that share a load balancer share it, so a retry verifies on any of them. NewServer panics
	// on a shorter one. Optional: default a random key of this server (a retry then verifies
	// only here; elsewhere, or after a restart, the client is told to call again).
	RequestStateKey []byte
	// RequestStateTTL bounds how long a requestState is accepted (it expires at the round's
	// deadline when that comes first). Optional: default DefaultRequestStateTTL.
	RequestStateTTL time.Duration
	// Parts is the part store the workers keep results' parts in (package blobs; sealed with the
	// same codec keys): each part of a result is returned as its MCP content type (parts.go).
	// Optional: default none (only short text parts and links are returned; each other part is
	// a text naming its claim).
	Parts blobs.Store
	// TracerProvider makes a SERVER span per request, "{mcp.method.name} {target}", a child of
	// the trace context the request's params._meta carries (traceparent, tracestate; tracing.go);
	// the call a tools/call starts continues it when tg's Temporal client carries
	// client.TracingInterceptor. Optional: default nil, OpenTelemetry's global provider.
	TracerProvider trace.TracerProvider
}

// DefaultPollRetry is the reconnection delay of a stream closed by Options.PollAfter.
const DefaultPollRetry = time.Second

// NewServer returns an MCP server listing tools and running each tools/call durably through tg.
func NewServer(tg *client.Client, tools []toolcore.ToolInfo, opts Options) *sdk.Server {
	if opts.Name == "" {
		opts.Name = "toolgate"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	if opts.PollRetry <= 0 {
		opts.PollRetry = DefaultPollRetry
	}
	//lint:ignore SA1019 logging is deprecated by 2026-07-28 (SEP-2577) and still served (logging.go)
	caps := &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Logging: &sdk.LoggingCapabilities{}}
	caps.AddExtension(wire.MCPTasksExtension, tasksCapability)
	s := sdk.NewServer(&sdk.Implementation{Name: opts.Name, Version: opts.Version},
		&sdk.ServerOptions{Logger: opts.Logger, Capabilities: caps})
	s.AddReceivingMiddleware(rejectUndeclared)
	levels := &sessionLevels{} // the log levels sessions set (logging.go)
	s.AddReceivingMiddleware(levels.track)
	t := &tasks{tg: tg, handlers: map[string]*callHandler{}, infos: map[string]toolcore.ToolInfo{},
		support: map[string]string{}, ttl: opts.TaskTTL, claims: opts.PrincipalClaims, grants: opts.Grants}
	states, err := newRequestStates(opts.RequestStateKey, opts.RequestStateTTL)
	if err != nil {
		panic("mcp.NewServer: Options.RequestStateKey: " + err.Error())
	}
	for _, info := range tools {
		t.infos[info.Name] = info
		t.support[info.Name] = toolTaskSupport(info.Name, opts)
		h := &callHandler{tg: tg, hasOutputSchema: len(info.OutputSchema) > 0, progressInterval: opts.ProgressInterval,
			pollAfter: opts.PollAfter, pollRetry: opts.PollRetry, grants: opts.Grants, needsConsent: len(info.Credentials) > 0,
			states: states, interactive: info.Interactive, parts: opts.Parts, levels: levels}
		t.handlers[info.Name] = h
		s.AddTool(toolDefinition(info), h.handle)
	}
	installPolicyList(s, opts.Policy, tools)
	if err := t.install(s); err != nil {
		// Only a method name of the standard set fails, and the task methods are none of them.
		panic(err)
	}
	// Outside the handlers and tasks: the last progress report before a result over stdio
	// (progressack.go), no answer to a cancelled request (cancelreply.go).
	s.AddReceivingMiddleware(ackFinalProgress, answerCancelled)
	newBudgets(opts.Budget, tools).install(s) // before a task starts a call
	// Outermost: a span for every request, the ones the budget refuses too (tracing.go).
	s.AddReceivingMiddleware(traceRequests(opts.TracerProvider))
	return s
}

// toolDefinition is the MCP Tool of info: schemas and the side-effect class's annotations.
func toolDefinition(info toolcore.ToolInfo) *sdk.Tool {
	def := tooldefs.MCP(info)
	readOnly, destructive, idempotent := def.Annotations.ReadOnlyHint, def.Annotations.DestructiveHint, def.Annotations.IdempotentHint
	t := &sdk.Tool{
		Name:        def.Name,
		Description: def.Description,
		InputSchema: def.InputSchema,
		Annotations: &sdk.ToolAnnotations{
			ReadOnlyHint:    readOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  idempotent,
		},
	}
	if len(def.OutputSchema) > 0 {
		t.OutputSchema = def.OutputSchema
	}
	return t
}

// newCallID returns a fresh call ID for a call without an idempotency key.
func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "mcp-" + hex.EncodeToString(b[:])
}
