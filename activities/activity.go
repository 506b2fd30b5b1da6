package activities

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Activities runs validated tool calls. The zero value is not usable: Registry is required.
type Activities struct {
	// Registry is where ExecuteTool finds the tool by name. It must hold every tool the workflows
	// on this activity's task queue accept (normally the same registry). Required.
	Registry *toolcore.Registry
	// Parts keeps the parts of Rich outputs out of history (package blobs; sealed with the codec
	// keyring when there is one): the result records their claims. Optional: default none (a
	// Rich output with parts to store ends TOOL_EXECUTION_FAILED, naming the missing store).
	Parts blobs.Store
	// Attempts receives the running attempts, so the workflow worker of this process can hurry
	// the heartbeats of a canceled call (see Attempts). Optional: default none (a cancellation
	// is heard at the idle heartbeat cadence).
	Attempts *Attempts
	// Heartbeats sends the attempts' heartbeats by task token with the bound described in
	// heartbeat.go, so a late heartbeat on a loaded server does not end the attempt. Workers pass
	// their client. Optional: default none (SDK heartbeats, bounded by 1 s each).
	Heartbeats Recorder
	// Drain interrupts the attempts still running when the worker's graceful stop times out
	// (worker.Worker.Stop): each ends at once, as wire.ErrTypeDrained for a ReadOnly or
	// Idempotent tool (the workflow runs it again elsewhere, not counting the attempt) or
	// wire.ErrTypeInterrupted for an Unsafe one, and the stopping worker reports it to the
	// server. Optional: default none (the SDK's stop timeout cancels the attempts and the same
	// errors result, but the SDK may not wait for their reports).
	Drain *Drain
	// CancellationPushed says the namespace pushes an activity's cancellation to this worker
	// through worker commands (docs/operations.md), so a cancellation reaches the tool without a
	// heartbeat and an idle attempt beats only for liveness, at its tool's IdleHeartbeat (30 s by
	// default). Workers set it from the namespace's capabilities. Optional: default false (an
	// idle attempt beats every half of its HeartbeatTimeout, at most every 5 s, to hear a
	// cancellation in the heartbeat response).
	CancellationPushed bool
	// Secrets resolves the secrets a tool declares (toolcore.Options.Secrets) before each of its
	// attempts; every resolved value is redacted from what the attempt reports (result, errors,
	// progress, checkpoints, log lines). Optional: default none (a tool that declares a secret
	// fails its calls with a TOOL_EXECUTION_FAILED naming it, without running).
	Secrets toolcore.SecretSource
	// Credentials obtains the calling principal's access tokens for the tools that declare
	// toolcore.Options.Credentials, before each attempt; a principal without one makes the
	// attempt end wire.ErrTypeConsentRequired without running the tool. Optional: default none
	// (such a tool fails its calls, naming the provider).
	Credentials toolcore.CredentialSource
	// Callbacks mints the callback URLs tools hand out (toolcore.Callback), served by the
	// worker's callback endpoint (package callbacks). Optional: default none (Callback fails the
	// tool's call, saying no callbacks are served).
	Callbacks CallbackURLs

	inFlight   inFlight
	pushWarned atomic.Bool // a missed push was logged (see pushMissed)
}

// Register registers ExecuteTool under wire.ExecuteToolName.
func (a *Activities) Register(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: wire.ExecuteToolName})
	r.RegisterActivityWithOptions(a.ReconcileTool, activity.RegisterOptions{Name: wire.ReconcileToolName})
	r.RegisterActivityWithOptions(a.CompensateTool, activity.RegisterOptions{Name: wire.CompensateToolName})
}

// ExecuteTool runs one attempt of a validated call and returns its bounded result content.
//
// Errors: a cancellation requested by the server is returned as cancellation; a genuine
// NonRecoverableToolError as a non-retryable ApplicationError of type wire.ErrTypeNonRecoverable; a
// transient error of a ReadOnly or Idempotent tool, before the last attempt, as a retryable
// ApplicationError of type wire.ErrTypeTransient (a toolcore.RetryAfter delay as its NextRetryDelay); an attempt cut off by the worker (shutdown) as a
// retryable wire.ErrTypeInterrupted. Every other outcome, including ordinary tool errors, panics and
// look-alike fatal errors, is a final result, never an error.
func (a *Activities) ExecuteTool(ctx context.Context, in ExecuteToolInput) (ExecuteToolOutput, error) {
	info := activity.GetInfo(ctx)
	spent := in.Resume.spent() // attempts of the call that ended before this ExecuteTool
	last := lastCheckpoint(ctx)
	if last == nil && in.Resume != nil {
		last = in.Resume.Checkpoint
	}
	if last == nil && in.Input != nil {
		last = in.Input.Checkpoint
	}
	ctx, endDrain := a.Drain.track(ctx)
	defer endDrain()
	if err := stopped(ctx, false); err != nil {
		// The tool has not started: whatever its class, the attempt did nothing.
		return ExecuteToolOutput{}, drainedOr(ctx, err, !info.IsLocalActivity, spent, last, in.Resume.progressSeq())
	}
	call, err := toolcore.NewToolCall(in.ToolCallID, in.ToolName, []byte("{}"))
	if err != nil {
		return ExecuteToolOutput{}, temporal.NewNonRetryableApplicationError(
			"invalid ExecuteTool input: "+toolcore.ErrorText(err), wire.ErrTypeInvalidInput, nil)
	}
	tool, ok := a.Registry.Get(in.ToolName)
	if !ok {
		return ExecuteToolOutput{}, temporal.NewNonRetryableApplicationError(
			"tool "+quote(in.ToolName)+" is not registered on the worker of this task queue; it did not run",
			wire.ErrTypeToolNotRegistered, nil)
	}
	if in.DefinitionHash != "" && in.DefinitionHash != tool.DefinitionHash() {
		// Workflow and activity workers run different builds of the tool: run it (the workflow
		// accepted the value), but say so where operators look.
		activity.GetLogger(ctx).Warn("Tool definition differs from the one the call was validated with",
			"toolCallId", in.ToolCallID, "toolName", in.ToolName,
			"validatedDefinition", in.DefinitionHash, "workerDefinition", tool.DefinitionHash())
	}

	// Secrets and credentials first: an attempt without them does nothing.
	sec, err := a.attemptSecrets(ctx, tool, in.Principal, info.WorkflowExecution.ID, true)
	if err != nil {
		return secretsUnavailable(ctx, call, err)
	}

	endAttempt := a.inFlight.start(ctx, in.ToolName)
	// A local activity has no heartbeats (the SDK drops them), so its progress and checkpoints
	// reach no one; its cancellation comes from the workflow task it runs in.
	report, checkpoint, stopBeats := func(toolcore.Progress) {}, func(json.RawMessage) {}, func() {}
	saved := func() json.RawMessage { return nil }
	lastReport := func() *wire.ProgressWindow { return nil }
	lastLogs, logWindow := func() *wire.LogWindow { return nil }, func(toolcore.LogMessage) {}
	if !info.IsLocalActivity {
		hb := a.startHeartbeats(ctx, info, tool.Options().IdleHeartbeat)
		// The previous attempt's checkpoint goes on with this attempt's heartbeats until the
		// tool records a newer one: a second loss must not erase it.
		if last != nil {
			hb.saveCheckpoint(last)
		}
		hb.continueProgress(max(lastProgressSeq(ctx), in.Resume.progressSeq())) // a reader's numbers only grow
		remove := a.Attempts.add(info.WorkflowExecution.ID, hb)
		report, checkpoint, lastReport, saved = hb.report, hb.saveCheckpoint, hb.latest, hb.savedCheckpoint
		logWindow, lastLogs = hb.log, hb.latestLogs
		stopBeats = func() { remove(); hb.stop() }
	}
	if sec.Len() > 0 {
		// What the tool reports leaves the attempt (heartbeats, history) redacted.
		report, checkpoint = redactedReports(ctx, sec, report, checkpoint)
	}
	asking := a.asking(info)
	output, toolErr := invoke(toolcore.WithExecution(ctx, toolcore.Execution{
		ToolCallID:     in.ToolCallID,
		ToolName:       in.ToolName,
		Attempt:        spent + int(info.Attempt),
		IdempotencyKey: in.IdempotencyKey,
		OnProgress:     report,
		OnCheckpoint:   checkpoint,
		OnLog:          toolLogs(ctx, in.ToolCallID, in.ToolName, logWindow),
		LastCheckpoint: last,
		Principal:      in.Principal,
		Run:            runOf(info, in.Run),
		Secrets:        sec,
		InputResponses: in.Input.responses(),
		Asking:         asking,
		Callbacks:      a.callbacks(info),
		InputTimeout:   tool.Options().InputWait(),
	}), tool, in.Accepted)
	stopBeats()
	endAttempt()
	// A type assertion, not errors.As: Invoke returns the *PanicError itself, and walking a
	// tool's error chain with errors.As would run its Unwrap and As methods unguarded (a cyclic
	// chain spins forever, a panicking method crashes the attempt).
	if panicErr, ok := toolErr.(*toolcore.PanicError); ok {
		// The result carries the panic value's text only; the stack is for operators.
		activity.GetLogger(ctx).Error("Tool panicked", "toolCallId", in.ToolCallID, "toolName", in.ToolName,
			"panic", sec.Redact(panicErr.Error()), "stack", string(panicErr.Stack()))
	}

	// Cancellation first: a tool that returns an error because its context was canceled must be
	// recorded as canceled (or interrupted), never as a failure of the tool.
	if err := stopped(ctx, toolErr == nil); err != nil {
		seq := in.Resume.progressSeq()
		if w := lastReport(); w != nil {
			seq = max(seq, w.Seq)
		}
		// A retried tool's attempt cut off by a graceful stop runs again elsewhere at once, and
		// does not count; an Unsafe tool's stays interrupted (its effect may have happened).
		err = drainedOr(ctx, interruptedWithCheckpoint(err, saved()),
			tool.Options().SideEffect != toolcore.Unsafe && !info.IsLocalActivity, spent, saved(), seq)
		activity.GetLogger(ctx).Info("Tool stopped", "toolCallId", in.ToolCallID, "toolName", in.ToolName, "reason", err.Error())
		return ExecuteToolOutput{}, err
	}
	if asked := asking.Requests(); len(asked) > 0 && toolcore.IsInputRequired(toolErr) {
		return ExecuteToolOutput{}, inputRequired(ctx, call, sec, asked, saved())
	}
	output, parts, toolErr := a.keepParts(ctx, sec, output, toolErr) // parts.go
	if _, fatal := toolcore.AsNonRecoverable(toolErr); !fatal && toolcore.IsTransient(toolErr) &&
		tool.Options().SideEffect != toolcore.Unsafe && !lastAttempt(info, in.MaxAttempts, spent) {
		return ExecuteToolOutput{}, transientFailure(toolErr, sec)
	}
	result, err := toolcore.Complete(call, output, toolErr)
	result = sec.RedactResult(call, result)
	if err != nil {
		// Complete lets only a genuine NonRecoverableToolError escape. Returned unwrapped: the
		// failure converter reads only the top-level error's retryability.
		// Benign: a tool's fatal verdict is an outcome, not a worker problem, so the SDK logs it
		// at Debug instead of ERROR with a stack; this line says it once, with the call.
		text := sec.RedactErrorText(err)
		activity.GetLogger(ctx).Info("Tool raised a NonRecoverableToolError", "toolCallId", in.ToolCallID, "toolName", in.ToolName, "error", text)
		return ExecuteToolOutput{}, temporal.NewApplicationErrorWithOptions(text, wire.ErrTypeNonRecoverable,
			temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign})
	}
	if err := stopped(ctx, true); err != nil {
		return ExecuteToolOutput{}, err
	}
	return ExecuteToolOutput{Content: result.Content(), IsError: result.IsError(), Progress: lastReport(), Logs: lastLogs(),
		Parts: a.linkedParts(ctx, parts, result.IsError())}, nil
}

// transientFailure is the retryable ApplicationError of a transient tool error; a toolcore.RetryAfter
// delay becomes the SDK's NextRetryDelay, so the server schedules the next attempt after it
// instead of the retry policy's backoff.
func transientFailure(toolErr error, sec *toolcore.Secrets) error {
	var opts temporal.ApplicationErrorOptions
	if delay, ok := toolcore.RetryDelay(toolErr); ok {
		opts.NextRetryDelay = delay
	}
	return temporal.NewApplicationErrorWithOptions(sec.RedactErrorText(toolErr), wire.ErrTypeTransient, opts)
}

// invoke runs the tool with toolcore's Tool.Start, so that a tool calling runtime.Goexit ends as
// an error (the same as in process) instead of silently ending the SDK's task goroutine (no
// response: a timeout). It waits for the tool even after cancellation: with WaitForCancellation,
// "canceled" means the tool stopped.
func invoke(ctx context.Context, tool toolcore.Tool, accepted []byte) (output any, err error) {
	o := <-tool.Start(ctx, accepted)
	return o.Output, o.Err
}

// stopped returns the error that ends an attempt whose context is done, or nil to go on.
//
//   - The server asked to cancel (the cause is a temporal CanceledError, set by the SDK when a
//     heartbeat response says so): the cancellation, so the SDK reports the activity canceled,
//     even if the tool succeeded (cancellation wins, as in toolcore.Execute).
//   - The attempt's own deadline passed: ctx.Err(); the server has already timed the attempt out
//     and the SDK drops any response.
//   - Any other cause (worker shutdown, pause, reset, the activity gone on the server): a tool that
//     finished successfully keeps its result; otherwise a retryable wire.ErrTypeInterrupted, which
//     the retry policy retries for ReadOnly and Idempotent tools and the workflow reports as
//     outcome unknown for Unsafe ones.
func stopped(ctx context.Context, toolSucceeded bool) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	var canceled *temporal.CanceledError
	switch {
	case errors.As(cause, &canceled):
		return cause
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ctx.Err()
	case toolSucceeded:
		return nil
	default:
		return temporal.NewApplicationError("the worker stopped the attempt ("+toolcore.ErrorText(cause)+")", wire.ErrTypeInterrupted)
	}
}

// lastAttempt reports whether no further attempt will follow this one, so a transient error must
// become the final result here (as in toolcore.Execute) rather than a bare exhausted retry. The
// workflow's MaxAttempts wins; the activity info's retry policy is the fallback (the server sends
// it; the SDK test environment does not); knowing neither, it never asks for a retry.
// spent counts the attempts of the call before this ExecuteTool (scheduled again after drains).
func lastAttempt(info activity.Info, maxAttempts, spent int) bool {
	limit := int32(maxAttempts)
	if limit <= 0 && info.RetryPolicy != nil {
		limit = info.RetryPolicy.MaximumAttempts + int32(spent)
		if info.RetryPolicy.MaximumAttempts == 0 {
			return false // unlimited
		}
	}
	return limit <= 0 || int32(spent)+info.Attempt >= limit
}
