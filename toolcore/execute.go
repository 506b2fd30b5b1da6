package toolcore

import (
	"context"
	"encoding/json"
	"sync"
)

// ExecuteOptions tune the in-process executor. They work at their zero value.
type ExecuteOptions struct {
	// OnProgress receives the tool's progress reports on a separate goroutine, latest report
	// wins: a slow OnProgress never blocks the tool, intermediate reports may be skipped, and the
	// last report is delivered, possibly after Execute returns. A panic in it is recovered.
	// Optional: default discards them.
	OnProgress func(Progress)
	// OnLog receives the tool's log messages (Log), bounded and redacted, synchronously on the
	// tool's goroutine: it must return promptly. A panic in it is recovered. Optional: default
	// discards them.
	OnLog func(LogMessage)
	// IdempotencyKey. Optional: default "toolcall-" + the call id.
	IdempotencyKey string
	// Approve decides calls that need approval (Tool.NeedsApproval), after validation and
	// before the tool runs. Optional: default nil, such calls are TOOL_APPROVAL_REJECTED
	// without running (nobody can approve them).
	Approve Approver
	// Secrets resolves the secrets the tool declares (Options.Secrets) before it runs; their
	// values are redacted from the result and progress as on the durable path. Optional:
	// default none (a tool that declares a secret ends TOOL_EXECUTION_FAILED naming it,
	// without running). A tool with Credentials needs the durable path.
	Secrets SecretSource
	// Input answers the questions the tool asks mid-run (Ask, Elicit, Sample, ListRoots) at
	// once, on the tool's goroutine. Optional: default none (a question fails the tool's Ask
	// with an error saying nobody can answer; Callback needs the durable path).
	Input func(ctx context.Context, key string, req InputRequest) (json.RawMessage, error)
}

// Execute runs call in process: snapshot check, look up, validate, run, serialize, link, with
// cancellation checked between every step and while the tool runs. When cancellation wins it
// returns context.Cause(ctx) and no result, even if the tool ignores ctx (its goroutine is left to
// finish and its result discarded).
func Execute(ctx context.Context, r *Registry, call ToolCall) (Result, error) {
	return ExecuteWith(ctx, r, call, ExecuteOptions{})
}

// ExecuteWith is Execute with options.
//
// Errors: the cancellation cause; a *ContractError with CodeInvalidToolCall for the zero ToolCall;
// a genuine *NonRecoverableToolError from the tool. Everything else is a Result. A nil registry
// is empty. The tool runs on its own goroutine with a context that carries ctx's cancellation and
// the Execution values (Attempt 1); that context is canceled when ExecuteWith returns.
func ExecuteWith(ctx context.Context, r *Registry, call ToolCall, opts ExecuteOptions) (Result, error) {
	return execute(ctx, r, call, opts, nil)
}

// checkpoint names a cancellation check of execute.
type checkpoint uint8

const (
	checkBeforeValidation checkpoint = iota + 1
	checkAfterValidation
	checkBeforeExecution
	checkAfterExecution
	checkAfterSerialization
)

// execute is ExecuteWith; hook, when not nil, runs just before each cancellation check (tests
// cancel there to prove each check).
func execute(ctx context.Context, r *Registry, call ToolCall, opts ExecuteOptions, hook func(checkpoint)) (Result, error) {
	canceled := func(at checkpoint) bool {
		if hook != nil {
			hook(at)
		}
		return ctx.Err() != nil
	}
	if canceled(checkBeforeValidation) {
		return Result{}, context.Cause(ctx)
	}
	if call.IsZero() {
		return Result{}, contractErrorf(CodeInvalidToolCall, "the zero ToolCall is not a call (build one with ParseToolCall or NewToolCall)")
	}
	t, ok := r.Get(call.Name())
	if !ok {
		return NotFoundResult(call), nil
	}
	accepted, rejected, ok := t.Validate(call)
	if canceled(checkAfterValidation) {
		return Result{}, context.Cause(ctx)
	}
	if !ok {
		return rejected, nil
	}
	if t.NeedsApproval(accepted) {
		if res, done, err := approveInProcess(ctx, opts.Approve, t, call); done {
			return res, err
		}
	}

	var sec *Secrets
	if names := t.Options().Secrets; len(names) > 0 {
		var err error
		if sec, err = ResolveSecrets(ctx, opts.Secrets, t.Name(), names); err != nil {
			return ErrorResult(call, CodeToolExecutionFailed, ErrorText(err)+"; the tool did not run"), nil
		}
	}
	if creds := t.Options().Credentials; len(creds) > 0 {
		return ErrorResult(call, CodeToolExecutionFailed, `credential "`+creds[0].Provider+`" needs the durable path (a worker with OAuth providers); the tool did not run`), nil
	}

	key := opts.IdempotencyKey
	if key == "" {
		key = "toolcall-" + call.ID()
	}
	deliver := opts.OnProgress
	if sec.Len() > 0 && deliver != nil {
		deliver = func(p Progress) { opts.OnProgress(sec.RedactProgress(p)) }
	}
	report, stopProgress := startProgress(deliver)
	defer stopProgress()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	runCtx = WithExecution(runCtx, Execution{
		ToolCallID:     call.ID(),
		ToolName:       call.Name(),
		Attempt:        1,
		IdempotencyKey: key,
		OnProgress:     report,
		OnLog:          opts.OnLog,
		Secrets:        sec,
		Input:          opts.Input,
		InputTimeout:   t.Options().InputWait(),
	})
	if canceled(checkBeforeExecution) {
		return Result{}, context.Cause(ctx)
	}
	done := t.Start(runCtx, accepted) // a discarded tool never blocks on sending
	var o Invocation
	select {
	case <-ctx.Done():
		return Result{}, context.Cause(ctx)
	case o = <-done:
	}
	if canceled(checkAfterExecution) {
		return Result{}, context.Cause(ctx)
	}
	res, err := Complete(call, o.Output, o.Err)
	if fatal, ok := err.(*NonRecoverableToolError); ok && sec.Len() > 0 {
		err = NewNonRecoverableToolError(sec.RedactErrorText(fatal))
	}
	res = sec.RedactResult(call, res)
	if canceled(checkAfterSerialization) {
		return Result{}, context.Cause(ctx)
	}
	return res, err
}

// startProgress returns the reporter a tool's Execution gets and a stop func. Reports go to
// deliver on one goroutine, latest wins; report never blocks.
func startProgress(deliver func(Progress)) (report func(Progress), stop func()) {
	if deliver == nil {
		return nil, func() {}
	}
	p := &progressPump{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go p.loop(deliver)
	var once sync.Once
	return p.report, func() { once.Do(func() { close(p.done) }) }
}

type progressPump struct {
	mu      sync.Mutex
	latest  Progress
	pending bool
	wake    chan struct{} // capacity 1: a pending wake-up
	done    chan struct{} // closed when the execution ends
}

func (p *progressPump) report(pr Progress) {
	p.mu.Lock()
	p.latest, p.pending = pr, true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *progressPump) loop(deliver func(Progress)) {
	for {
		select {
		case <-p.wake:
			p.deliver(deliver)
		case <-p.done:
			p.deliver(deliver)
			return
		}
	}
}

func (p *progressPump) deliver(deliver func(Progress)) {
	p.mu.Lock()
	pr, ok := p.latest, p.pending
	p.pending = false
	p.mu.Unlock()
	if !ok {
		return
	}
	defer func() { _ = recover() }()
	deliver(pr)
}
