package toolcore

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// SideEffect says what a repeated execution costs. The zero value is Unsafe.
type SideEffect uint8

const (
	// Unsafe tools run at most once: a lost worker or a timeout ends the call with an
	// outcome-unknown TOOL_EXECUTION_FAILED, never a silent second run.
	Unsafe SideEffect = iota
	// Idempotent tools may repeat: the same idempotency key gives the same effect.
	Idempotent
	// ReadOnly tools have no effect.
	ReadOnly
)

// String returns "unsafe", "idempotent" or "readOnly"; an unknown value is "SideEffect(<n>)".
func (s SideEffect) String() string {
	switch s {
	case Unsafe:
		return "unsafe"
	case Idempotent:
		return "idempotent"
	case ReadOnly:
		return "readOnly"
	}
	return fmt.Sprintf("SideEffect(%d)", uint8(s))
}

// Defaults of Options.
const (
	DefaultTimeout = time.Minute
	// DefaultHeartbeatTimeout is twice DefaultIdleHeartbeat: an idle beat may be 30 s late
	// before the server times the attempt out, and a lost worker is noticed within a minute.
	DefaultHeartbeatTimeout = time.Minute
	// DefaultIdleHeartbeat caps the default IdleHeartbeat: at most 2 heartbeats a minute for an
	// idle held call where cancellation is pushed.
	DefaultIdleHeartbeat   = 30 * time.Second
	DefaultMaxAttempts     = 3
	DefaultApprovalTimeout = 24 * time.Hour
)

// Options are the execution options the durable path uses. They work at their zero value.
type Options struct {
	// SideEffect. Optional: default Unsafe.
	SideEffect SideEffect
	// Timeout bounds one attempt (start to close). Optional: default 1 minute.
	Timeout time.Duration
	// HeartbeatTimeout bounds the silence of a running attempt: a lost worker is noticed within
	// it (the attempt then times out and is retried, or ends outcome unknown for an Unsafe tool).
	// Optional: default 1 minute (twice the default IdleHeartbeat).
	HeartbeatTimeout time.Duration
	// IdleHeartbeat is how often a running attempt that reports nothing heartbeats where the
	// namespace pushes cancellation to its workers (docs/operations.md): there a heartbeat only
	// tells the server the worker lives, and a cancellation reaches the tool without one. It must
	// be shorter than HeartbeatTimeout, leaving a slow server time to take the beat. Where
	// cancellation is not pushed it rides on heartbeat responses, and an idle attempt beats every
	// half of its HeartbeatTimeout, at most every 5 s, whatever this says. Progress is sent as it
	// comes either way (at most every 500 ms). Not part of the DefinitionHash. Optional: default
	// half the HeartbeatTimeout, at most DefaultIdleHeartbeat (30 s).
	IdleHeartbeat time.Duration
	// MaxAttempts bounds attempts of ReadOnly and Idempotent tools. Optional: default 3. Unsafe
	// tools always have exactly one attempt: a MaxAttempts above 1 on an Unsafe tool is an
	// INVALID_TOOL_DEFINITION.
	MaxAttempts int
	// TaskQueue runs the tool's activity on another queue. Optional: default the worker's queue.
	TaskQueue string
	// RequireApproval makes every call wait, after validation and before any effect, for a
	// human decision bound to the exact call (see CallHash). Definition.ApprovalRule can require
	// it for some calls only. Optional: default false.
	RequireApproval bool
	// ApprovalByCaller lets the caller's human decide the tool's approvals where the caller's
	// protocol can ask them: `toolgate mcp` shows a waiting call of a 2026-07-28 MCP client's task
	// as input_required and takes the decision through tasks/update, bound to the exact call and
	// checked against Reviewers like any other. Without it only operators decide (toolgate
	// approve, the UI). Meaningless without RequireApproval or an ApprovalRule. Optional: default
	// false. Not part of the DefinitionHash.
	ApprovalByCaller bool
	// ApprovalTimeout bounds the wait for a decision; past it the call is TOOL_APPROVAL_EXPIRED.
	// Optional: default DefaultApprovalTimeout (24 hours).
	ApprovalTimeout time.Duration
	// Reviewers names who may decide the tool's approvals (Tool.MayDecideAs): "<issuer>|<subject>"
	// for that subject of that issuer only (wire.ApprovalDecision.Issuer and Reviewer: a caller
	// deciding over MCP is its token's iss and sub), a plain name for a reviewer named without an
	// issuer only (an operator's `toolgate approve --reviewer`), or "group:<name>" for any
	// reviewer whose decision carries that group (wire.ApprovalDecision.Groups). The update
	// validator refuses a decision by anyone else, so a same-subject token of another issuer
	// never passes. Names, issuers and groups are what the deciding client asserts unless a
	// frontend authorizer checks them (approvalauth.Check): Temporal's authorization of the
	// namespace is the boundary (see docs/approvals.md). Optional: default anyone who can send
	// the update. Not part of the DefinitionHash.
	Reviewers []string
	// RerunWhenNotReconciled declares that, when Definition.Reconcile says the lost attempt's
	// effect did not happen, running the tool once more is safe. Requires Reconcile. Optional:
	// default false (a negative reconcile ends the call outcome-unknown).
	RerunWhenNotReconciled bool
	// Local runs the tool on the durable path as a local activity, inside the workflow task of
	// the worker that runs the call's workflow: one workflow task and no activity task per call,
	// with the same validation, result bytes and retry policy. For short ReadOnly tools only:
	// Local on another SideEffect, or with a TaskQueue, is an INVALID_TOOL_DEFINITION. What it
	// changes (no heartbeats or progress, cancellation without waiting for the tool, a re-run of
	// the attempt when the worker is lost) is stated in docs/contract.md. Optional: default false.
	Local bool
	// Sequential makes the tool's calls run alone inside a round of calls (client.ExecuteRound,
	// workflows.ExecuteRound): every call before it in the round has finished before it starts,
	// and no later call starts before it has finished. Calls between two sequential calls still
	// run in parallel. It does not affect single calls. Optional: default false (parallel).
	Sequential bool
	// RateLimit bounds the tool's attempts started per second across every worker of the fleet.
	// The server enforces it (docs/flow-control.md): the tool's activities run on a task queue of
	// their own (TaskQueue, or "<worker queue>/tool/<name>") whose workers ask the server for this
	// rate; calls beyond it wait on the server, holding no worker slot. An operator's
	// `toolgate limits set` overrides it until reset. Optional: default 0 (no limit).
	RateLimit float64
	// FairnessKeyRateLimit bounds the attempts started per second for each fairness key (an agent
	// run, a user; see wire.Priority), scaled by the key's weight, on the tool's own queue. A
	// worker sets it on the server at start unless an operator has set one. It needs fairness
	// enabled on the server (matching.enableFairness). Optional: default 0 (no per-key limit).
	FairnessKeyRateLimit float64
	// MaxConcurrent bounds the tool's attempts running at once in one worker process: the worker
	// polls the tool's own queue with at most this many slots, so further calls wait on the server
	// without holding a slot of other tools. Optional: default 0 (the worker's
	// MaxConcurrentActivities).
	MaxConcurrent int
	// SideEffectAssumed says SideEffect was not declared by the tool's author but assumed (a
	// mounted MCP tool without annotations is Unsafe by the MCP defaults); `toolgate tools` flags
	// such tools so an operator can require approval for them or annotate them. Optional:
	// default false. Not part of the DefinitionHash.
	SideEffectAssumed bool
	// Cost is what one call of the tool spends from a budget of cost units (workflows.Budget,
	// `toolgate mcp --budget-cost`); what a unit stands for (cents, tokens, a quota) is the
	// operator's convention. A call is charged when it starts, whatever its outcome. Negative is
	// an INVALID_TOOL_DEFINITION. Optional: default 0 (free). Not part of the DefinitionHash.
	Cost int64
	// Secrets names the secrets the tool reads with Secret during Execute (an API key, a
	// password), each ^[A-Za-z0-9_.-]{1,128}$, at most MaxToolSecrets. The executor resolves them
	// on the worker from its SecretSource when an attempt starts (a missing one fails the call
	// with a model-safe TOOL_EXECUTION_FAILED naming it, before the tool runs) and redacts their
	// values from everything the attempt reports (docs/secrets.md). Names only: values never
	// reach a definition, workflow code or history. Optional: default none. Not part of the
	// DefinitionHash.
	Secrets []string
	// Credentials names the OAuth providers whose access token of the calling principal the
	// tool reads with AccessToken (a per-user credential). A call runs only once its principal
	// has a valid token with the scopes asked: the first call of a principal waits, durably and
	// holding no worker slot, for the principal's consent (docs/secrets.md). A call without a
	// principal fails before the tool runs. Optional: default none. Not part of the
	// DefinitionHash.
	Credentials []Credential
	// ConsentTimeout bounds a call's wait for its principal's consent to a Credential; past it
	// the call ends TOOL_EXECUTION_FAILED (consent not given). Optional: default
	// DefaultApprovalTimeout (24 hours) for a tool with Credentials. Not part of the
	// DefinitionHash.
	ConsentTimeout time.Duration
	// InputTimeout bounds each of a call's waits for input the tool asked for mid-run (Ask,
	// Elicit, Sample, ListRoots, Callback); past it the call ends TOOL_EXECUTION_FAILED saying no
	// answer came, and a callback URL the tool handed out expires with it. Optional: zero means
	// DefaultApprovalTimeout (24 hours; Options.InputWait). Not part of the DefinitionHash.
	InputTimeout time.Duration
	// Interactive says the tool may ask its caller mid-run (Ask, Elicit, Confirm, Sample,
	// ListRoots, Callback). A call in its own workflow may ask either way; an agent's inline call
	// (workflows.Inline) of an Interactive tool runs as a child call workflow, which holds the
	// wait, and an inline call of a tool that asks without it ends TOOL_EXECUTION_FAILED saying
	// so. Optional: default false. Not part of the DefinitionHash.
	Interactive bool
}

// InputWait is how long each of a call's waits for input may take: InputTimeout, or
// DefaultApprovalTimeout when it is zero.
func (o Options) InputWait() time.Duration {
	if o.InputTimeout > 0 {
		return o.InputTimeout
	}
	return DefaultApprovalTimeout
}

// Credential asks for the calling principal's OAuth access token at a provider.
type Credential struct {
	// Provider names the provider as the worker's OAuth configuration does
	// (^[A-Za-z0-9_.-]{1,128}$, like a secret's name). Required.
	Provider string `json:"provider"`
	// Scopes the token must carry, each without spaces. Optional: default the provider's
	// configured scopes.
	Scopes []string `json:"scopes,omitempty"`
}

// FlowControlled reports whether the options declare a rate or concurrency limit, which gives the
// tool a task queue of its own when it names none.
func (o Options) FlowControlled() bool {
	return o.RateLimit > 0 || o.FairnessKeyRateLimit > 0 || o.MaxConcurrent > 0
}

// Definition is what a tool author fills in. A is the validated argument type: it must survive a
// JSON round trip, because on the durable path it crosses from workflow to activity as JSON.
type Definition[A any] struct {
	// Name matches ^[A-Za-z0-9_-]{1,64}$.
	Name string
	// Description is non-blank text for the model.
	Description string
	// Validate is synchronous and pure: it runs in deterministic workflow code. It must not block,
	// start goroutines, do I/O or read the clock. Optional where the input schema constrains
	// the arguments (an explicit InputSchema, or a struct A): default nil checks the arguments
	// against InputSchema and then decodes them strictly into A (Arguments.Decode); a rejection
	// names the first failing argument. A nil Validate with a generated schema that accepts any
	// object (A is any, Arguments, map[string]any, json.RawMessage, ...) is an
	// INVALID_TOOL_DEFINITION.
	Validate func(Arguments) Decision[A]
	// Execute runs the effect with the validated value. ctx carries cancellation and the
	// execution values (ToolCallID, Attempt, IdempotencyKey, ReportProgress).
	Execute func(ctx context.Context, args A) (any, error)
	// Options for the durable path.
	Options Options
	// InputSchema is the JSON Schema (draft 2020-12 unless its $schema says otherwise) of the
	// arguments object, shown to models; its top-level "type" must be "object". Optional: default
	// generated from A (see the package doc, # Schemas).
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the tool's output, shown to clients that want it.
	// Optional: default none.
	OutputSchema json.RawMessage
	// CheckSchema checks the arguments against InputSchema before Validate runs, so Validate only
	// sees arguments the schema accepts. Optional: default false (Validate alone decides); with a
	// nil Validate the schema is always checked.
	CheckSchema bool
	// ApprovalRule requires approval for the calls whose validated value it returns true for
	// (e.g. an amount above a limit). It is synchronous and pure like Validate: it runs in
	// workflow code. A panic requires approval. Optional: default nil, only
	// Options.RequireApproval decides.
	ApprovalRule func(A) bool
	// Reconcile asks the downstream system whether this call's effect already happened, by its
	// idempotency key (e.g. look up a payment). The durable path calls it for an Unsafe tool
	// whose only attempt ended without a verdict (a lost worker, a timeout): found, output
	// becomes the result (serialized like Execute's output) and the tool does not run again;
	// not found, the call ends outcome-unknown, or runs once more with
	// Options.RerunWhenNotReconciled. An error is retried with backoff, a bounded number of
	// times; EffectFailed(err) says instead that the effect happened and ended in err, which
	// becomes the result as Execute's error would. LastCheckpoint in Reconcile returns the
	// checkpoint the lost attempt's last heartbeat carried (a remote job's ID, say). Only Unsafe
	// tools may declare it. Optional: default nil (outcome unknown, as without).
	Reconcile func(ctx context.Context, idempotencyKey string) (output any, found bool, err error)
	// Compensate undoes the effect of one completed call (a refund for a charge, a cancellation
	// for a booking) when an agent run or an operator undoes the run's effects (workflows.Undo,
	// `toolgate undo`). It runs as a durable, retried step with its own idempotency key
	// (Compensation.Key, also the ctx's IdempotencyKey): it must apply at most once per key. A
	// NonRecoverableToolError says it failed for good (the undo stops there); any other error is
	// retried. Only Unsafe tools may declare it. Optional: default nil (the call's effect is
	// left in place when a run is undone).
	Compensate func(ctx context.Context, c Compensation) error
}

// Tool is an immutable, defined tool. The zero value is invalid (a nil entry in a batch).
type Tool struct {
	d *tool
}

// tool is the immutable core of a Tool. Its fields are written once by Define.
type tool struct {
	name        string
	description string
	options     Options // defaults applied
	argType     string  // the Go type of A, for messages

	input  *compiledSchema // never nil
	output *compiledSchema // nil when the tool has none
	hash   string          // DefinitionHash

	// validate runs the author's validator; accepted is A boxed for json encoding.
	validate func(Arguments) (accepted any, reason string, kind decisionKind)
	// decode checks that JSON decodes into a fresh A (the round-trip check of Validate).
	decode func(raw []byte) error
	// run decodes JSON into a fresh A and runs the author's Execute with it.
	run func(ctx context.Context, raw []byte) (any, error)
	// approvalRule decodes JSON into a fresh A and runs the author's ApprovalRule; nil without one.
	approvalRule func(raw []byte) (bool, error)
	// reconcile is the author's Reconcile; nil without one.
	reconcile func(ctx context.Context, idempotencyKey string) (any, bool, error)
	// compensate is the author's Compensate; nil without one.
	compensate func(ctx context.Context, c Compensation) error
}

// Define copies d once into an immutable Tool, or returns a *ContractError with
// CodeInvalidToolDefinition.
//
// It checks the name (^[A-Za-z0-9_-]{1,64}$), a non-blank valid-UTF-8 description, a non-nil
// Execute, that a nil Validate leaves an input schema that constrains the arguments (an explicit
// InputSchema, or one generated from A that is more than {"type":"object"}: see constrains), the
// options (no negative durations or attempts, a known SideEffect, at
// most one attempt for Unsafe tools, a task queue without surrounding space) and that A can
// round-trip through encoding/json (see checkJSONType; the value itself is checked again at
// each validation).
func Define[A any](d Definition[A]) (Tool, error) {
	// Read every field of d exactly once: d is a copy already, and the funcs are captured by value.
	name, description, validate, execute, opts := d.Name, d.Description, d.Validate, d.Execute, d.Options
	inputRaw, outputRaw, checkSchema := bytes.Clone(d.InputSchema), bytes.Clone(d.OutputSchema), d.CheckSchema
	rule, reconcile, compensate := d.ApprovalRule, d.Reconcile, d.Compensate
	if err := checkName(name); err != nil {
		return Tool{}, err
	}
	if strings.TrimSpace(description) == "" {
		return Tool{}, contractErrorf(CodeInvalidToolDefinition, "tool %q: description must not be blank", name)
	}
	if !utf8.ValidString(description) {
		return Tool{}, contractErrorf(CodeInvalidToolDefinition, "tool %q: description must be valid UTF-8", name)
	}
	if execute == nil {
		return Tool{}, contractErrorf(CodeInvalidToolDefinition, "tool %q: Execute must not be nil", name)
	}
	opts, err := checkOptions(opts)
	if err != nil {
		return Tool{}, contractErrorf(CodeInvalidToolDefinition, "tool %q: %s", name, err)
	}
	switch {
	case reconcile != nil && opts.SideEffect != Unsafe:
		return Tool{}, contractErrorf(CodeInvalidToolDefinition, "tool %q: Reconcile is for Unsafe tools; %s tools are retried instead", name, opts.SideEffect)
	case compensate != nil && opts.SideEffect != Unsafe:
		return Tool{}, contractErrorf(CodeInvalidToolDefinition, "tool %q: Compensate is for Unsafe tools, not %s ones", name, opts.SideEffect)
	case reconcile == nil && opts.RerunWhenNotReconciled:
		return Tool{}, contractErrorf(CodeInvalidToolDefinition, "tool %q: RerunWhenNotReconciled needs a Reconcile", name)
	}
	argType := reflect.TypeFor[A]()
	if err := checkJSONType(argType); err != nil {
		return Tool{}, contractErrorf(CodeInvalidToolDefinition,
			"tool %q: argument type %s cannot round-trip through JSON: %s", name, argType, err)
	}
	var approvalRule func(raw []byte) (bool, error)
	if rule != nil {
		approvalRule = func(raw []byte) (bool, error) {
			a, err := decodeArgs[A](raw)
			if err != nil {
				return true, fmt.Errorf("decode validated arguments: %w", err)
			}
			return rule(a), nil
		}
	}
	input, output, err := defineSchemas(argType, inputRaw, outputRaw)
	if err != nil {
		return Tool{}, contractErrorf(CodeInvalidToolDefinition, "tool %q: %s", name, err)
	}
	if validate == nil {
		if len(inputRaw) == 0 && !constrains(input) {
			return Tool{}, contractErrorf(CodeInvalidToolDefinition,
				"tool %q: nil Validate and the input schema generated from %s accepts any object, so nothing would check the arguments: give a Validate, an InputSchema, or a struct argument type",
				name, argType)
		}
		validate, checkSchema = decodeValidator[A], true
	}
	return Tool{d: &tool{
		name:         name,
		approvalRule: approvalRule,
		reconcile:    reconcile,
		compensate:   compensate,
		description:  description,
		options:      opts,
		argType:      argType.String(),
		input:        input,
		output:       output,
		hash:         definitionHash(name, input, opts),
		validate: func(args Arguments) (any, string, decisionKind) {
			if checkSchema {
				if reason := input.check(args); reason != "" {
					return nil, reason, decisionReject
				}
			}
			dec := validate(args)
			return dec.value, dec.reason, dec.kind
		},
		decode: func(raw []byte) error {
			_, err := decodeArgs[A](raw)
			return err
		},
		run: func(ctx context.Context, raw []byte) (any, error) {
			a, err := decodeArgs[A](raw)
			if err != nil {
				return nil, fmt.Errorf("decode validated arguments: %w", err)
			}
			return execute(ctx, a)
		},
	}}, nil
}

// constrains reports whether a generated input schema says anything about the arguments beyond
// "an object": false for the {"type":"object"} of Arguments, any, map[string]any,
// json.RawMessage and other non-struct types (annotations and additionalProperties true aside).
// A nil Validate with such a schema would let unchecked arguments reach Execute, so Define
// refuses it.
func constrains(s *compiledSchema) bool {
	for k, v := range members(s.canonical) {
		switch {
		case k == "$schema" || k == "$id" || k == "$comment" || k == "title" || k == "description":
		case k == "type" && v == `"object"`:
		case k == "additionalProperties" && v == "true":
		default:
			return true
		}
	}
	return false
}

// MustDefine is Define for package-level tool sets; it panics on an invalid definition.
func MustDefine[A any](d Definition[A]) Tool {
	t, err := Define(d)
	if err != nil {
		panic(err)
	}
	return t
}

// Name returns the tool's name; "" for the zero Tool.
func (t Tool) Name() string {
	if t.d == nil {
		return ""
	}
	return t.d.name
}

// Description returns the tool's description; "" for the zero Tool.
func (t Tool) Description() string {
	if t.d == nil {
		return ""
	}
	return t.d.description
}

// Options returns the tool's options with defaults applied (MaxAttempts is 1 for Unsafe tools).
func (t Tool) Options() Options {
	if t.d == nil {
		o, _ := checkOptions(Options{})
		return o
	}
	return t.d.options
}

// InputSchema returns a fresh copy of the tool's input JSON Schema in canonical form (keys
// sorted, no whitespace): the explicit Definition.InputSchema, or the one generated from A. Nil
// for the zero Tool.
func (t Tool) InputSchema() json.RawMessage {
	if t.d == nil {
		return nil
	}
	return json.RawMessage(t.d.input.canonical)
}

// OutputSchema returns a fresh copy of the tool's output JSON Schema in canonical form; nil when
// the tool has none.
func (t Tool) OutputSchema() json.RawMessage {
	if t.d == nil || t.d.output == nil {
		return nil
	}
	return json.RawMessage(t.d.output.canonical)
}

// DefinitionHash returns "sha256:<64 hex digits>" of the tool's name, canonical input schema,
// side-effect class and attempts (see definitionHash for the exact encoding); "" for the zero
// Tool. Equal definitions give equal hashes on every machine and build.
func (t Tool) DefinitionHash() string {
	if t.d == nil {
		return ""
	}
	return t.d.hash
}

// IsZero reports whether t is the invalid zero Tool.
func (t Tool) IsZero() bool { return t.d == nil }

// maxNameLen is the longest tool name model providers accept.
const maxNameLen = 64

// checkName enforces ^[A-Za-z0-9_-]{1,64}$.
func checkName(name string) error {
	if strings.TrimSpace(name) == "" {
		return contractErrorf(CodeInvalidToolDefinition, "tool name must not be blank")
	}
	ok := len(name) <= maxNameLen
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	if !ok {
		return contractErrorf(CodeInvalidToolDefinition, "tool name %s must match ^[A-Za-z0-9_-]{1,64}$", quoteShort(name))
	}
	return nil
}

// quoteShort quotes s for a message, cut to 80 bytes.
func quoteShort(s string) string {
	const limit = 80
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q...", strings.ToValidUTF8(s[:limit], ""))
}

// checkOptions rejects out-of-range options and returns them with defaults applied.
func checkOptions(o Options) (Options, error) {
	switch {
	case o.SideEffect > ReadOnly:
		return o, fmt.Errorf("unknown SideEffect %d", uint8(o.SideEffect))
	case o.Timeout < 0:
		return o, fmt.Errorf("option Timeout %s must not be negative", o.Timeout)
	case o.HeartbeatTimeout < 0:
		return o, fmt.Errorf("option HeartbeatTimeout %s must not be negative", o.HeartbeatTimeout)
	case o.IdleHeartbeat < 0:
		return o, fmt.Errorf("option IdleHeartbeat %s must not be negative", o.IdleHeartbeat)
	case o.ConsentTimeout < 0:
		return o, fmt.Errorf("option ConsentTimeout %s must not be negative", o.ConsentTimeout)
	case o.InputTimeout < 0:
		return o, fmt.Errorf("option InputTimeout %s must not be negative", o.InputTimeout)
	case o.ApprovalTimeout < 0:
		return o, fmt.Errorf("option ApprovalTimeout %s must not be negative", o.ApprovalTimeout)
	case o.MaxAttempts < 0:
		return o, fmt.Errorf("option MaxAttempts %d must not be negative", o.MaxAttempts)
	case o.SideEffect == Unsafe && o.MaxAttempts > 1:
		return o, fmt.Errorf("option MaxAttempts %d on an unsafe tool: unsafe tools run at most once", o.MaxAttempts)
	case o.TaskQueue != strings.TrimSpace(o.TaskQueue) || !utf8.ValidString(o.TaskQueue):
		return o, fmt.Errorf("option TaskQueue %s must be valid UTF-8 without surrounding space", quoteShort(o.TaskQueue))
	case o.Local && o.SideEffect != ReadOnly:
		return o, fmt.Errorf("option Local on a %s tool: only ReadOnly tools may run as local activities (a lost worker re-runs the attempt)", o.SideEffect)
	case o.RateLimit < 0 || o.RateLimit != o.RateLimit || o.RateLimit > 1e6:
		return o, fmt.Errorf("option RateLimit %v must be a non-negative number of calls per second", o.RateLimit)
	case o.FairnessKeyRateLimit < 0 || o.FairnessKeyRateLimit != o.FairnessKeyRateLimit || o.FairnessKeyRateLimit > 1e6:
		return o, fmt.Errorf("option FairnessKeyRateLimit %v must be a non-negative number of calls per second", o.FairnessKeyRateLimit)
	case o.MaxConcurrent < 0:
		return o, fmt.Errorf("option MaxConcurrent %d must not be negative", o.MaxConcurrent)
	case o.Cost < 0:
		return o, fmt.Errorf("option Cost %d must not be negative", o.Cost)
	case checkSecretNames(o.Secrets) != nil:
		return o, checkSecretNames(o.Secrets)
	case checkCredentials(o.Credentials) != nil:
		return o, checkCredentials(o.Credentials)
	case o.Local && o.Interactive:
		return o, errors.New("option Local with Interactive: a local activity runs inside the workflow task, which cannot wait for an answer")
	case o.Local && (len(o.Secrets) > 0 || len(o.Credentials) > 0):
		return o, errors.New("option Local with Secrets or Credentials: a local activity runs inside the workflow task, which holds no secrets")
	case o.Local && o.FlowControlled():
		return o, errors.New("option Local with RateLimit, FairnessKeyRateLimit or MaxConcurrent: a local activity runs inside the workflow task, outside any task queue")
	case o.Local && o.TaskQueue != "":
		return o, fmt.Errorf("option Local with TaskQueue %s: a local activity runs on the workflow's worker", quoteShort(o.TaskQueue))
	}
	// The definition keeps its own copies: a caller's later change of a slice changes nothing.
	o.Reviewers, o.Secrets = slices.Clone(o.Reviewers), slices.Clone(o.Secrets)
	o.Credentials = cloneCredentials(o.Credentials)
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	switch {
	case o.IdleHeartbeat == 0:
		o.IdleHeartbeat = min(o.HeartbeatTimeout/2, DefaultIdleHeartbeat)
	case o.IdleHeartbeat >= o.HeartbeatTimeout:
		return o, fmt.Errorf("option IdleHeartbeat %s must be shorter than HeartbeatTimeout %s: a beat must reach the server within it", o.IdleHeartbeat, o.HeartbeatTimeout)
	}
	if o.ApprovalTimeout == 0 {
		o.ApprovalTimeout = DefaultApprovalTimeout
	}
	if o.ConsentTimeout == 0 && len(o.Credentials) > 0 {
		o.ConsentTimeout = DefaultApprovalTimeout
	}
	switch {
	case o.SideEffect == Unsafe:
		o.MaxAttempts = 1
	case o.MaxAttempts == 0:
		o.MaxAttempts = DefaultMaxAttempts
	}
	return o, nil
}

// decodeArgs decodes raw into a fresh A the way the durable path does: strictly (unknown fields
// and trailing data are errors) and with numbers in `any` as json.Number.
func decodeArgs[A any](raw []byte) (A, error) {
	var a A
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return a, errors.New("trailing data after the JSON value")
	}
	return a, nil
}

var (
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkJSONType reports why values of t cannot survive encoding/json's Marshal followed by
// Unmarshal into a fresh value, judging by the type alone:
//
//   - funcs, channels, complex numbers and unsafe pointers cannot be encoded;
//   - a non-empty interface cannot be decoded into (`any` can: its values come back as generic
//     JSON values, with numbers as json.Number);
//   - map keys must be strings, integers, or encoding.TextMarshaler with TextUnmarshaler;
//   - an unexported struct field (other than an embedded struct json promotes) would be silently
//     lost, and an embedded pointer to an unexported struct cannot be decoded;
//   - a type with only one half of json.Marshaler/json.Unmarshaler (or of the Text pair) is
//     asymmetric. A type with both halves is trusted here and checked per value at validation.
//
// Fields tagged `json:"-"` are skipped. Recursive types are fine.
func checkJSONType(t reflect.Type) error {
	return checkType(t, "", map[reflect.Type]bool{})
}

func checkType(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	at := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if path == "" {
			return errors.New(msg)
		}
		return fmt.Errorf("%s: %s", path, msg)
	}
	ptr := reflect.PointerTo(t)
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		marshals := t.Implements(jsonMarshalerType) || ptr.Implements(jsonMarshalerType)
		unmarshals := ptr.Implements(jsonUnmarshalerType)
		switch {
		case marshals && unmarshals:
			return nil
		case marshals:
			return at("%s implements json.Marshaler but not json.Unmarshaler", t)
		case unmarshals:
			return at("%s implements json.Unmarshaler but not json.Marshaler", t)
		}
		textMarshals := t.Implements(textMarshalerType) || ptr.Implements(textMarshalerType)
		textUnmarshals := ptr.Implements(textUnmarshalerType)
		switch {
		case textMarshals && textUnmarshals:
			return nil
		case textMarshals:
			return at("%s implements encoding.TextMarshaler but not encoding.TextUnmarshaler", t)
		case textUnmarshals:
			return at("%s implements encoding.TextUnmarshaler but not encoding.TextMarshaler", t)
		}
	}
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return at("%s cannot be encoded as JSON", t)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return at("interface %s cannot be decoded from JSON (only the empty interface can)", t)
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkType(t.Elem(), path, seen)
	case reflect.Map:
		k := t.Key()
		switch k.Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !(k.Implements(textMarshalerType) || reflect.PointerTo(k).Implements(textMarshalerType)) ||
				!reflect.PointerTo(k).Implements(textUnmarshalerType) {
				return at("map key type %s is not a string, an integer or a text marshaler", k)
			}
		}
		return checkType(t.Elem(), path, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if err := checkField(t, t.Field(i), path, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkField(t reflect.Type, f reflect.StructField, path string, seen map[reflect.Type]bool) error {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return nil
	}
	fieldPath := t.String() + "." + f.Name
	if path != "" {
		fieldPath = path + "." + f.Name
	}
	if !f.IsExported() {
		ft := f.Type
		if !f.Anonymous || ft.Kind() != reflect.Struct || strings.Split(tag, ",")[0] != "" {
			if f.Anonymous && ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
				return fmt.Errorf("%s: embedded pointer to unexported struct %s cannot be decoded", fieldPath, ft.Elem())
			}
			return fmt.Errorf("%s: unexported field would be lost (export it or tag it `json:\"-\"`)", fieldPath)
		}
	}
	return checkType(f.Type, fieldPath, seen)
}
