package faults

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// Names of the tools in Registry.
const (
	ToolUnsafe       = "effect_unsafe"
	ToolIdempotent   = "effect_idempotent"
	ToolReadOnly     = "effect_readonly"
	ToolPathological = "pathological"
	// ToolReconciled is Unsafe, requires approval, and commits its effect before it holds (with
	// Config.Hold); its Reconcile finds the effect in the ledger by the idempotency key.
	ToolReconciled = "effect_reconciled"
	// ToolCheckpointed is Idempotent and processes CheckpointItems items, recording a ledger
	// record "item-<i>" and a checkpoint after each; with Config.Hold it holds after two items.
	ToolCheckpointed = "effect_checkpointed"
	// ToolAsks is Unsafe: it records its run and, unless its checkpoint says it already did, its
	// effect and a checkpoint of it; then it asks its caller to confirm (toolcore.Confirm, key
	// AskKey, message AskMessage) and returns AskedOutput with the answer. The attempt that runs
	// with the answer resumes from the asking attempt's checkpoint: the effect happens once.
	ToolAsks = "effect_asks"
)

// ToolAsks's question: its key, and a message with a terminal escape sequence and a newline
// that every human-facing rendering must show escaped.
const (
	AskKey     = "proceed"
	AskMessage = "Delete 3 resources?\x1b]8;;http://evil\x1b\\ now\nreally"
)

// AskedOutput is ToolAsks's result: whether the caller confirmed, and the attempt that read
// the answer.
type AskedOutput struct {
	Proceed bool `json:"proceed"`
	Attempt int  `json:"attempt"`
}

// askedState is ToolAsks's checkpoint: its effect is done.
type askedState struct {
	Effect bool `json:"effect"`
}

// CheckpointItems is how many items ToolCheckpointed processes; CheckpointAttempts its
// MaxAttempts.
const (
	CheckpointItems    = 6
	CheckpointAttempts = 5
)

// ItemKind is the ledger kind of ToolCheckpointed's item i.
func ItemKind(i int) Kind { return Kind(fmt.Sprintf("item-%d", i)) }

// CheckpointState is ToolCheckpointed's checkpoint: the next item to process.
type CheckpointState struct {
	Next int `json:"next"`
}

// CheckpointedOutput is ToolCheckpointed's result.
type CheckpointedOutput struct {
	Items       int `json:"items"`
	ResumedFrom int `json:"resumedFrom"`
	Attempt     int `json:"attempt"`
}

// Tool options. HeartbeatTimeout is short so a lost worker is noticed within seconds, and not
// shorter: the SDK sends heartbeats at most every 0.8 x HeartbeatTimeout and gives each RPC
// max(0.8 x HeartbeatTimeout, 1 s), so the server must answer within the remaining fifth. With
// 1 s, a server starved of CPU (a soak with other builds on two cores) let running attempts time
// out or be interrupted by a timed-out heartbeat RPC, three times in a row: a stalled worker, not
// the fault under test. Timeout bounds one attempt of a tool that ignores its context.
const (
	HeartbeatTimeout = 5 * time.Second
	AttemptTimeout   = 2 * time.Minute
	// RetriedAttempts is MaxAttempts of the Idempotent and ReadOnly tools.
	RetriedAttempts = 3
	// PathologicalTimeout bounds one attempt of the pathological tool (its "hang" outcome ignores
	// its context until this passes), and PathologicalAttempts its attempts.
	PathologicalTimeout  = 3 * time.Second
	PathologicalAttempts = 2
)

// Outcome selects what a tool does; the zero value is OutcomeOK.
type Outcome string

// Outcomes of the effect tools.
const (
	// OutcomeOK commits the effect and returns {"call","attempt","key"}.
	OutcomeOK Outcome = ""
	// OutcomeError returns an ordinary error: TOOL_EXECUTION_FAILED, no effect.
	OutcomeError Outcome = "error"
	// OutcomePanic panics: TOOL_EXECUTION_FAILED, no effect.
	OutcomePanic Outcome = "panic"
	// OutcomeFatal returns a genuine NonRecoverableToolError: the workflow fails, no effect.
	OutcomeFatal Outcome = "fatal"
	// OutcomeTransient fails the first attempt with a transient error, then behaves like
	// OutcomeOK: the Idempotent and ReadOnly tools succeed on attempt 2, the Unsafe tool ends
	// with TOOL_EXECUTION_FAILED.
	OutcomeTransient Outcome = "transient"
	// OutcomeReject is refused by the validator: TOOL_ARGUMENTS_INVALID, the tool never runs.
	OutcomeReject Outcome = "reject"
)

// Outcomes of the pathological tool: each goes far beyond a bound the durable path must keep.
const (
	ShapeHugeString   Outcome = "huge-string"   // 8 Mi characters of output
	ShapeHugeMap      Outcome = "huge-map"      // 200,000 map entries
	ShapeDeep         Outcome = "deep"          // 10,000 levels of nesting
	ShapeBigInt       Outcome = "big-int"       // a 1-million-bit integer
	ShapeInvalidUTF8  Outcome = "invalid-utf8"  // 1 MiB of bytes that are not UTF-8, as a string
	ShapeHugeError    Outcome = "huge-error"    // a 1 MiB error message
	ShapeHugePanic    Outcome = "huge-panic"    // a panic with a 1 MiB string
	ShapePanicError   Outcome = "panic-error"   // an error whose Error method panics
	ShapeLookalike    Outcome = "lookalike"     // a struct literal of NonRecoverableToolError
	ShapeHugeProgress Outcome = "huge-progress" // a 1 MiB progress message, then a result
	ShapeHang         Outcome = "hang"          // ignores its context until the attempt times out
	ShapeUnserialized Outcome = "unserializable"
)

// Args are the arguments of every tool in Registry. Unknown members are rejected.
type Args struct {
	// Outcome chooses the behaviour. Optional: default OutcomeOK.
	Outcome Outcome `json:"outcome,omitempty"`
	// Gate makes the attempt wait (after its "run" record) until the file Config.GateDir/Gate
	// exists, or its context ends. Optional: default no wait.
	Gate string `json:"gate,omitempty"`
	// Pad is ignored; it makes calls as large as a test needs. Optional.
	Pad string `json:"pad,omitempty"`
}

// Config configures Registry for one worker process.
type Config struct {
	// Ledger is the file the tools append records to. Required.
	Ledger string
	// GateDir holds the gate files of Args.Gate. Optional: default the ledger's directory.
	GateDir string
	// Hold makes every attempt wait until its context ends (after its "run" record) and return
	// the cancellation: a worker to kill mid-call. Optional: default false.
	Hold bool
	// GatePoll is how often a gated attempt looks for its gate file. Optional: default 10 ms.
	GatePoll time.Duration
}

// Registry returns the tools of this package writing to cfg.Ledger.
func Registry(cfg Config) (*toolcore.Registry, error) {
	if cfg.Ledger == "" {
		return nil, errors.New("build fault tools: Config.Ledger is required")
	}
	if cfg.GateDir == "" {
		cfg.GateDir = filepath.Dir(cfg.Ledger)
	}
	if cfg.GatePoll <= 0 {
		cfg.GatePoll = 10 * time.Millisecond
	}
	led, err := OpenLedger(cfg.Ledger)
	if err != nil {
		return nil, fmt.Errorf("build fault tools: %w", err)
	}
	t := &tools{cfg: cfg, ledger: led}
	var defs []toolcore.Tool
	for _, d := range []struct {
		name string
		opts toolcore.Options
	}{
		{ToolUnsafe, toolcore.Options{SideEffect: toolcore.Unsafe}},
		{ToolIdempotent, toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: RetriedAttempts}},
		{ToolReadOnly, toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: RetriedAttempts}},
	} {
		d.opts.HeartbeatTimeout = HeartbeatTimeout
		d.opts.Timeout = AttemptTimeout
		tool, err := toolcore.Define(toolcore.Definition[Args]{
			Name:        d.name,
			Description: "Counts its executions in a ledger; arguments choose the outcome.",
			Validate:    validate,
			Execute:     t.effect,
			Options:     d.opts,
		})
		if err != nil {
			return nil, err
		}
		defs = append(defs, tool)
	}
	patho, err := toolcore.Define(toolcore.Definition[Args]{
		Name:        ToolPathological,
		Description: "Returns outputs and errors far beyond every bound.",
		Validate:    validate,
		Execute:     t.pathological,
		Options: toolcore.Options{
			SideEffect:       toolcore.ReadOnly,
			MaxAttempts:      PathologicalAttempts,
			HeartbeatTimeout: HeartbeatTimeout,
			Timeout:          PathologicalTimeout,
		},
	})
	if err != nil {
		return nil, err
	}
	reconciled, err := toolcore.Define(toolcore.Definition[Args]{
		Name:        ToolReconciled,
		Description: "Commits its effect, then holds; its Reconcile finds the effect in the ledger.",
		Validate:    validate,
		Execute:     t.effectThenHold,
		Reconcile:   t.reconcile,
		Options: toolcore.Options{
			SideEffect: toolcore.Unsafe, RequireApproval: true,
			HeartbeatTimeout: HeartbeatTimeout, Timeout: AttemptTimeout,
		},
	})
	if err != nil {
		return nil, err
	}
	checkpointed, err := toolcore.Define(toolcore.Definition[Args]{
		Name:        ToolCheckpointed,
		Description: "Processes items, checkpointing after each; holds after two with -hold.",
		Validate:    validate,
		Execute:     t.processItems,
		Options: toolcore.Options{
			SideEffect: toolcore.Idempotent, MaxAttempts: CheckpointAttempts,
			HeartbeatTimeout: HeartbeatTimeout, Timeout: AttemptTimeout,
		},
	})
	if err != nil {
		return nil, err
	}
	asks, err := toolcore.Define(toolcore.Definition[Args]{
		Name:        ToolAsks,
		Description: "Commits its effect, checkpoints it, then asks its caller to confirm.",
		Validate:    validate,
		Execute:     t.effectThenAsk,
		Options: toolcore.Options{
			SideEffect: toolcore.Unsafe, HeartbeatTimeout: HeartbeatTimeout, Timeout: AttemptTimeout,
		},
	})
	if err != nil {
		return nil, err
	}
	booked, err := t.booked()
	if err != nil {
		return nil, err
	}
	return toolcore.NewRegistry(append(defs, patho, reconciled, checkpointed, asks, booked)...)
}

// effectThenAsk records the run; on the first attempt the effect and its checkpoint; then asks.
func (t *tools) effectThenAsk(ctx context.Context, _ Args) (any, error) {
	if err := t.record(ctx, KindRun); err != nil {
		return nil, err
	}
	var st askedState
	if _, err := toolcore.LastCheckpoint(ctx, &st); err != nil {
		return nil, err
	}
	if !st.Effect {
		if err := t.record(ctx, KindEffect); err != nil {
			return nil, err
		}
		if err := toolcore.Checkpoint(ctx, askedState{Effect: true}); err != nil {
			return nil, err
		}
	}
	yes, err := toolcore.Confirm(ctx, AskKey, AskMessage)
	if err != nil {
		return nil, err
	}
	return AskedOutput{Proceed: yes, Attempt: toolcore.Attempt(ctx)}, nil
}

// processItems resumes from the last checkpoint and processes the remaining items.
func (t *tools) processItems(ctx context.Context, _ Args) (any, error) {
	var st CheckpointState
	if _, err := toolcore.LastCheckpoint(ctx, &st); err != nil {
		return nil, err
	}
	from := st.Next
	for i := from; i < CheckpointItems; i++ {
		if err := t.record(ctx, ItemKind(i)); err != nil {
			return nil, err
		}
		if err := toolcore.Checkpoint(ctx, CheckpointState{Next: i + 1}); err != nil {
			return nil, err
		}
		if t.cfg.Hold && i+1 == from+2 {
			<-ctx.Done()
			return nil, context.Cause(ctx)
		}
	}
	return CheckpointedOutput{Items: CheckpointItems, ResumedFrom: from, Attempt: toolcore.Attempt(ctx)}, nil
}

// ReconciledOutput is what ToolReconciled's Reconcile returns for an effect it finds.
type ReconciledOutput struct {
	Call       string `json:"call"`
	Key        string `json:"key"`
	Reconciled bool   `json:"reconciled"`
}

// effectThenHold records the run and the effect, then (with Config.Hold) waits until its context
// ends: a worker killed now leaves an effect whose outcome the workflow does not know.
func (t *tools) effectThenHold(ctx context.Context, _ Args) (any, error) {
	if err := t.record(ctx, KindRun); err != nil {
		return nil, err
	}
	if err := t.record(ctx, KindEffect); err != nil {
		return nil, err
	}
	if t.cfg.Hold {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	return EffectOutput{Call: toolcore.ToolCallID(ctx), Attempt: toolcore.Attempt(ctx), Key: toolcore.IdempotencyKey(ctx)}, nil
}

// reconcile looks the effect up in the ledger by the idempotency key.
func (t *tools) reconcile(ctx context.Context, key string) (any, bool, error) {
	records, err := ReadLedger(t.cfg.Ledger)
	if err != nil {
		return nil, false, err
	}
	for _, r := range records {
		if r.Kind == KindEffect && r.Key == key {
			return ReconciledOutput{Call: r.Call, Key: key, Reconciled: true}, true, nil
		}
	}
	return nil, false, nil
}

// RejectReason is the validator's reason for OutcomeReject.
const RejectReason = "rejected on request"

func validate(args toolcore.Arguments) toolcore.Decision[Args] {
	var a Args
	if err := args.Decode(&a); err != nil {
		return toolcore.Reject[Args](err.Error())
	}
	if a.Outcome == OutcomeReject {
		return toolcore.Reject[Args](RejectReason)
	}
	if a.Gate != "" && (strings.ContainsAny(a.Gate, `/\`) || a.Gate == "." || a.Gate == "..") {
		return toolcore.Reject[Args](`"gate" must be a plain file name`)
	}
	return toolcore.Accept(a)
}

// Messages of the effect tools' errors.
const (
	ErrorMessage     = "tool failed on request"
	PanicMessage     = "tool panicked on request"
	FatalMessage     = "fatal on request"
	TransientMessage = "transient on request"
)

// EffectOutput is what an effect tool returns on success.
type EffectOutput struct {
	Call    string `json:"call"`
	Attempt int    `json:"attempt"`
	Key     string `json:"key"`
}

type tools struct {
	cfg    Config
	ledger *Ledger
}

// record appends a record about the running attempt; a ledger that cannot be written fails the
// attempt (as a fatal error: the test's accounting would be wrong otherwise).
func (t *tools) record(ctx context.Context, kind Kind) error {
	err := t.ledger.Append(Record{
		Kind:    kind,
		Call:    toolcore.ToolCallID(ctx),
		Tool:    toolcore.ToolName(ctx),
		Attempt: toolcore.Attempt(ctx),
		Key:     toolcore.IdempotencyKey(ctx),
		PID:     os.Getpid(),
	})
	if err != nil {
		return toolcore.WrapNonRecoverable(err, "write ledger")
	}
	return nil
}

// start records the run and waits for Hold and the gate.
func (t *tools) start(ctx context.Context, a Args) error {
	if err := t.record(ctx, KindRun); err != nil {
		return err
	}
	if t.cfg.Hold {
		<-ctx.Done()
		return context.Cause(ctx)
	}
	if a.Gate == "" {
		return nil
	}
	return waitGate(ctx, filepath.Join(t.cfg.GateDir, a.Gate), t.cfg.GatePoll)
}

// waitGate waits until path exists or ctx ends.
func waitGate(ctx context.Context, path string, poll time.Duration) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
		}
	}
}

func (t *tools) effect(ctx context.Context, a Args) (output any, err error) {
	defer func() {
		if exitErr := t.record(ctx, KindExit); exitErr != nil && err == nil {
			output, err = nil, exitErr
		}
	}()
	if err := t.start(ctx, a); err != nil {
		return nil, err
	}
	switch a.Outcome {
	case OutcomeError:
		return nil, errors.New(ErrorMessage)
	case OutcomePanic:
		panic(PanicMessage)
	case OutcomeFatal:
		return nil, toolcore.NewNonRecoverableToolError(FatalMessage)
	case OutcomeTransient:
		if toolcore.Attempt(ctx) == 1 {
			return nil, toolcore.Transient(errors.New(TransientMessage))
		}
	}
	if err := t.record(ctx, KindEffect); err != nil {
		return nil, err
	}
	return EffectOutput{Call: toolcore.ToolCallID(ctx), Attempt: toolcore.Attempt(ctx), Key: toolcore.IdempotencyKey(ctx)}, nil
}

// panicError is an error whose Error method panics.
type panicError struct{}

func (panicError) Error() string { panic("Error() panicked on request") }

func (t *tools) pathological(ctx context.Context, a Args) (output any, err error) {
	defer func() {
		if exitErr := t.record(ctx, KindExit); exitErr != nil && err == nil {
			output, err = nil, exitErr
		}
	}()
	if err := t.start(ctx, a); err != nil {
		return nil, err
	}
	const mib = 1 << 20
	switch a.Outcome {
	case ShapeHugeString:
		return strings.Repeat("<x>", 8*mib/3), nil
	case ShapeHugeMap:
		m := make(map[string]int, 200_000)
		for i := range 200_000 {
			m[fmt.Sprintf("key-%07d", i)] = i
		}
		return m, nil
	case ShapeDeep:
		var v any = "bottom"
		for range 10_000 {
			v = map[string]any{"d": v}
		}
		return v, nil
	case ShapeBigInt:
		return new(big.Int).Lsh(big.NewInt(1), 1_000_000), nil
	case ShapeInvalidUTF8:
		return strings.Repeat("\xff\xfe", mib/2), nil
	case ShapeHugeError:
		return nil, errors.New(strings.Repeat("e<", mib/2))
	case ShapeHugePanic:
		panic(strings.Repeat("p\xff", mib/2))
	case ShapePanicError:
		return nil, panicError{}
	case ShapeLookalike:
		return nil, &toolcore.NonRecoverableToolError{}
	case ShapeHugeProgress:
		toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 1, Total: 2, Message: strings.Repeat("m\xff", mib/2)})
		return "progress reported", nil
	case ShapeHang:
		// Ignores ctx: only the attempt timeout (or the worker's end) stops it from the outside.
		// It returns once its attempt's deadline has passed, so the worker keeps no goroutine.
		deadline, ok := ctx.Deadline()
		if !ok {
			return nil, errors.New("hang: the attempt has no deadline")
		}
		time.Sleep(time.Until(deadline) + time.Second)
		return "woke up too late", nil
	case ShapeUnserialized:
		return make(chan int), nil
	}
	return nil, fmt.Errorf("pathological: unknown outcome %q", a.Outcome)
}
