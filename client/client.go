package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/internal/searchattr"
	"github.com/toolgate/toolgate/wire"
)

// Defaults of Options.
const (
	DefaultNamespace         = "default"
	DefaultCancelWaitTimeout = time.Minute
	// detectTimeout bounds the one-time search attribute detection.
	detectTimeout = 10 * time.Second
)

// Options configure a Client. They work at their zero value.
type Options struct {
	// TaskQueue the workflows start on; it must be a queue a toolgate worker polls.
	// Optional: default wire.DefaultTaskQueue ("toolgate").
	TaskQueue string
	// Scope prefixes workflow IDs: "<scope>/toolcall-<callId>". Optional: default none.
	Scope string
	// Namespace of the Temporal client, used only to detect the search attributes (the SDK client
	// does not expose it). Optional: default "default". A wrong value is survivable: a start the
	// server refuses for an undefined search attribute is retried once without them.
	Namespace string
	// SearchAttributes forces setting (true) or not setting (false) ToolName and ToolCallId at
	// start. Optional: default nil, detect once via the OperatorService.
	SearchAttributes *bool
	// DataConverter decodes history payloads (the recorded call, heartbeat details) that the
	// client reads directly. Set it to the Temporal client's data converter when that one uses a
	// payload codec. Optional: default converter.GetDefaultDataConverter().
	DataConverter converter.DataConverter
	// CancelWaitTimeout bounds how long Execute waits for a workflow it canceled (because its ctx
	// ended) to close. Optional: default 1 minute.
	CancelWaitTimeout time.Duration
	// Principal, when set, names whom the client's calls belong to (package mcp sets it to the
	// scope of an authenticated caller): starts set the ToolPrincipal search attribute to it,
	// when the namespace defines that attribute, and ListCalls lists only calls carrying it.
	// Optional: default none.
	Principal string
	// DisableEagerStart stops starts from asking for eager execution. With it (the default), a
	// start whose task queue has a worker built on the same Temporal client gets the call's first
	// workflow task back in the start response and runs it at once, skipping the task queue's
	// dispatch (about a sixth of a no-op call's latency, see BENCHMARKS.md); without such a
	// worker the start is an ordinary one. Eager start ignores worker versioning (Temporal marks
	// it experimental). Optional: default false (eager start requested).
	DisableEagerStart bool
	// NoWorker, when set, is called once for an Execute whose call is still waiting
	// NoWorkerDelay after its start while the server lists no worker polling TaskQueue (as when
	// the worker is down, or runs on another queue or namespace); the call keeps waiting and runs
	// once a worker polls. Execute calls it from a goroutine of its own while it waits, never
	// after it returned, and returns only after it did: keep it short, and safe for concurrent
	// use. A call that ends before NoWorkerDelay costs nothing more; a longer one costs one
	// DescribeTaskQueue. Optional: default none (Execute waits in silence; ErrNoWorker shows
	// only when its ctx ends).
	NoWorker func(NoWorkerEvent)
	// OtherQueue, when set, is called at once when Execute or Start attaches to a running call
	// with the same ID that was started on another task queue than TaskQueue (an earlier
	// submission on a wrong queue): the event names that queue, where the call goes on waiting
	// (NoWorker then watches that queue, and a canceled Execute asks whether a worker polls it).
	// Cost: one DescribeWorkflowExecution, only when the queues differ. Optional: default none.
	OtherQueue func(OtherQueueEvent)
	// NoWorkerDelay is how long after its start a call waits before Execute asks whether a worker
	// polls (see NoWorker). Optional: default DefaultNoWorkerDelay (3 s).
	NoWorkerDelay time.Duration
	// OnProgress, when set, hears the progress of each call Execute waits for: every report once
	// (a report equal to the one delivered just before it is not delivered again), in the order
	// the tool made them, and, when the call ends with a result (error results included), its
	// last report before Execute returns that result. While the call runs, Execute reads the
	// running attempt's progress window every ProgressInterval (one DescribeWorkflowExecution);
	// once it has a result, the window in history (one history read), so the reports a tool
	// makes just before returning always arrive. A report is lost only beyond the window's bound
	// (ProgressWatch; contract 10.6: up to 256 reports a second arrive). Execute calls it from one
	// goroutine at a time, never after it returned: keep it short. Optional: default none
	// (nothing is read).
	OnProgress func(ProgressEvent)
	// OnLog, when set, hears the log messages (toolcore.Log) of each call Execute waits for,
	// read like OnProgress's reports (the same reads serve both) and in order with them: every
	// message once, on one goroutine, all before Execute returns. Optional: default none.
	OnLog func(LogEvent)
	// ProgressInterval is how often Execute reads a running call's progress for OnProgress.
	// Optional: default DefaultProgressInterval (250 ms).
	ProgressInterval time.Duration
	// OnConsent, when set, hears each consent a call Execute waits for asks of its principal
	// (toolcore.Options.Credentials): once per request, with the authorization URL to open,
	// while the call waits durably for it (the call goes on once the consent arrives, and ends
	// at the tool's ConsentTimeout without it). Execute reads the call every ConsentInterval
	// (one DescribeWorkflowExecution; a query only while its ToolOutcome says it waits, so only
	// on a namespace with toolgate's search attributes) and calls it from one goroutine, never
	// after it returned: keep it short. Optional: default none (nothing is read).
	OnConsent func(ConsentEvent)
	// OnApproval, when set, hears each wait of a call Execute waits on for an approval decision,
	// once, with what a reviewer decides on (the wait goes on: a reviewer decides through
	// `toolgate approve` or DecideByWorkflowID). Execute reads the call every ConsentInterval,
	// as for OnConsent (one DescribeWorkflowExecution; the query only while the call's ToolOutcome
	// says it waits: namespaces without the search attributes never report). Optional: default
	// none.
	OnApproval func(ApprovalEvent)
	// ConsentInterval is how often Execute reads a running call for OnConsent. Optional:
	// default DefaultConsentInterval (1 s).
	ConsentInterval time.Duration
	// OnInput, when set, answers the questions the tool of a call Execute waits for asks
	// (toolcore.Ask, Elicit, Confirm, Sample, ListRoots): once per round, in a goroutine of its
	// own, with the questions it may answer (never a toolcore.Callback's: those are listed for
	// display only). The answers it returns, by key (each the JSON result of the MCP request
	// asked; a subset is fine), are sent back with the round (AnswerInput, By set to
	// Options.Principal or DefaultInputBy); once every question is answered the tool runs again.
	// An error or no answer leaves the questions for another answerer (toolgate answer, an MCP
	// client, AnswerInput); answers the call refuses are offered again with InputEvent.Refused
	// set, at most three times. Its ctx ends when the round ends (answered elsewhere, timed out,
	// the call ended) or Execute returns, and Execute waits for it to return: honour ctx.
	// Execute reads the call every InputInterval (one DescribeWorkflowExecution; a query only
	// while its ToolOutcome says it waits, so only on a namespace with toolgate's search
	// attributes). Optional: default none (nothing is read; the call waits for another
	// answerer).
	OnInput func(ctx context.Context, ev InputEvent) (map[string]json.RawMessage, error)
	// InputInterval is how often Execute reads a running call for OnInput. Optional: default
	// DefaultInputInterval (1 s).
	InputInterval time.Duration
	// TracerProvider makes the span of each Execute, "call <tool>" (tracing.go; docs/traces.md).
	// The worker's spans of the call join it only when the Temporal client was dialed with
	// TracingInterceptor in its Interceptors. Optional: default nil, OpenTelemetry's global
	// provider (a no-op until the program sets one).
	TracerProvider trace.TracerProvider
}

// Client runs tool calls durably. It is safe for concurrent use.
type Client struct {
	sdk  client.Client
	opts Options

	// attrs caches the search attribute detection (see searchAttributes), shared by Scoped
	// clients.
	attrs *attrState
}

type attrState struct {
	mu        sync.Mutex
	known     bool
	set       bool // ToolName and ToolCallId
	principal bool // ToolPrincipal
	subject   bool // ToolSubject
}

// New returns a Client using c, a connected Temporal client the caller owns (and closes).
func New(c client.Client, opts Options) *Client {
	if opts.TaskQueue == "" {
		opts.TaskQueue = wire.DefaultTaskQueue
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.DataConverter == nil {
		opts.DataConverter = converter.GetDefaultDataConverter()
	}
	if opts.CancelWaitTimeout <= 0 {
		opts.CancelWaitTimeout = DefaultCancelWaitTimeout
	}
	if opts.NoWorkerDelay <= 0 {
		opts.NoWorkerDelay = DefaultNoWorkerDelay
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	if opts.ConsentInterval <= 0 {
		opts.ConsentInterval = DefaultConsentInterval
	}
	if opts.InputInterval <= 0 {
		opts.InputInterval = DefaultInputInterval
	}
	cl := &Client{sdk: c, opts: opts, attrs: &attrState{}}
	if opts.SearchAttributes != nil {
		cl.attrs.known, cl.attrs.set, cl.attrs.principal, cl.attrs.subject = true, *opts.SearchAttributes, *opts.SearchAttributes, *opts.SearchAttributes
	}
	return cl
}

// Scoped returns a Client like c whose Options.Scope is scope and Options.Principal principal,
// sharing c's Temporal client and search attribute detection. It costs an allocation.
func (c *Client) Scoped(scope, principal string) *Client {
	opts := c.opts
	opts.Scope, opts.Principal = scope, principal
	return &Client{sdk: c.sdk, opts: opts, attrs: c.attrs}
}

// Scope returns Options.Scope.
func (c *Client) Scope() string { return c.opts.Scope }

// WorkflowID returns the workflow ID of callID under the client's scope.
func (c *Client) WorkflowID(callID string) string { return wire.WorkflowID(c.opts.Scope, callID) }

// detectAttributes reports whether starts should set ToolName and ToolCallId, whether
// ToolPrincipal, and whether ToolSubject. It detects once and caches the answer; a detection cut
// short by the caller's ctx, or by a server that could not answer then (unavailable, overloaded,
// an internal error: a database restarting), is not cached: that start goes without the
// attributes (its workflow upserts ToolName and ToolCallId when it closes, and an ok outcome stays
// unset as always) and the next start detects again.
func (c *Client) detectAttributes(ctx context.Context) (set, principal, subject bool) {
	a := c.attrs
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.known {
		return a.set, a.principal, a.subject
	}
	dctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	missing, err := searchattr.MissingIn(dctx, c.sdk.OperatorService(), c.opts.Namespace)
	if err != nil && (ctx.Err() != nil || transientDetection(err)) {
		return false, false, false
	}
	// A failed detection (no operator permission, old server) means "do not set": a start with
	// an undefined attribute is refused.
	has := func(name string) bool { _, no := missing[name]; return err == nil && !no }
	a.known, a.set = true, has(wire.SearchAttributeToolName) && has(wire.SearchAttributeToolCallID)
	a.principal = a.set && has(wire.SearchAttributeToolPrincipal)
	a.subject = a.set && has(wire.SearchAttributeToolSubject)
	return a.set, a.principal, a.subject
}

// transientDetection reports whether a detection failed for a reason that passes (the server or
// its database unavailable, overloaded, timed out, an internal error), not for what the caller
// may do or the server has.
func transientDetection(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	var exhausted *serviceerror.ResourceExhausted
	var internal *serviceerror.Internal
	var canceled *serviceerror.Canceled
	return errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &exhausted) ||
		errors.As(err, &internal) || errors.As(err, &canceled) || errors.Is(err, context.DeadlineExceeded)
}

// disableSearchAttributes records that the namespace refused them.
func (c *Client) disableSearchAttributes() {
	a := c.attrs
	a.mu.Lock()
	defer a.mu.Unlock()
	a.known, a.set, a.principal, a.subject = true, false, false, false
}

// isUndefinedSearchAttribute reports whether a start was refused for an undefined search attribute
// (the server says "search attribute <name> is not defined").
func isUndefinedSearchAttribute(err error) bool {
	var invalid *serviceerror.InvalidArgument
	if !errors.As(err, &invalid) {
		return false
	}
	msg := invalid.Error()
	return strings.Contains(msg, "search attribute") && strings.Contains(msg, "is not defined")
}
