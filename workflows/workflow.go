package workflows

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Workflows holds what ToolCallWorkflow needs from the worker that runs it. The zero value is not
// usable: Registry is required.
type Workflows struct {
	// Registry is the tool set calls are looked up and validated in. Pass a Snapshot: a durable
	// run must see the tool set the worker was built with. Required.
	Registry *toolcore.Registry
	// SearchAttributes enables the final upsert of ToolName, ToolCallId and ToolOutcome. Set it
	// only when the namespace has them registered: upserting a missing attribute fails the
	// workflow task and wedges the call. Optional: default false (no upsert).
	SearchAttributes bool
	// TaskQueue is where ExecuteTool runs for tools without Options.TaskQueue. Optional: default
	// the workflow's own task queue.
	TaskQueue string
	// ValidateTimeout bounds the wall-clock time of a call's validator and approval rule
	// together, which run in workflow code: a validator that has not returned by then is a
	// TOOL_VALIDATION_FAILED result, an approval rule that has not returned holds the call for a
	// reviewer. Values above MaxValidateTimeout are lowered to it. Optional: default
	// DefaultValidateTimeout.
	ValidateTimeout time.Duration
	// inline is set on the Workflows an Inline runs its calls with: no search attributes, no
	// current details (the agent workflow's own), approval-gated calls as children.
	inline bool
	// Attempts is the set of ExecuteTool attempts running in this process (the activities'
	// Attempts): a canceled call hurries its attempt's heartbeats, so the cancellation reaches
	// the tool within a fraction of a second. Optional: default none (the attempt hears the
	// cancellation at its idle heartbeat cadence).
	Attempts *activities.Attempts
	// Policy is the worker's policy set (package policy): each call is decided after validation
	// and before approval or scheduling, and the decision recorded (workflows/policy.go).
	// Optional: default none (every call allowed, nothing recorded).
	Policy *policy.Source
	// DataConverter decodes a principal memo (wire.MemoPrincipal) that is not plain JSON: set it
	// to the Temporal client's converter when that one encrypts payloads. Optional: default
	// none (plain JSON only; an encrypted principal fails the call as INVALID_TOOL_CALL).
	DataConverter converter.DataConverter
}

// Bounds of the validator guard. The SDK's deadlock detector fails a workflow task whose code runs
// for 1 s without yielding; the guard must fire well before it.
const (
	DefaultValidateTimeout = 500 * time.Millisecond
	MaxValidateTimeout     = 800 * time.Millisecond
)

// Register registers ToolCallWorkflow under wire.ToolCallWorkflowName.
func (w *Workflows) Register(r worker.WorkflowRegistry) {
	// Pinned (used only by a versioned worker): a call completes on the deployment version that
	// validated it, an undo on the version whose tools it compensates, a catalog on the version
	// whose tools it lists. A promotion never replays them on another build.
	pinned := workflow.VersioningBehaviorPinned
	r.RegisterWorkflowWithOptions(w.ToolCallWorkflow, workflow.RegisterOptions{Name: wire.ToolCallWorkflowName, VersioningBehavior: pinned})
	r.RegisterWorkflowWithOptions(w.ToolCatalogWorkflow, workflow.RegisterOptions{Name: wire.ToolCatalogWorkflowName, VersioningBehavior: pinned})
	r.RegisterWorkflowWithOptions(w.UndoWorkflow, workflow.RegisterOptions{Name: wire.UndoWorkflowName, VersioningBehavior: pinned})
}

// ToolCallWorkflow turns one untrusted tool call into one outcome: a linked result (its return
// value), a cancellation (ends Canceled, no result), or a failure (INVALID_TOOL_CALL input or a
// NonRecoverableToolError). See the package documentation for the steps.
func (w *Workflows) ToolCallWorkflow(ctx workflow.Context, input Input) (toolcore.Result, error) {
	ctx = withOutcomeRule(ctx, input)
	call, err := decodeCall(input)
	if err == nil {
		err = checkWorkflowID(workflow.GetInfo(ctx).WorkflowExecution.ID)
	}
	var principal *toolcore.Principal
	if err == nil {
		if principal, err = w.startPrincipal(ctx); err != nil {
			err = invalidCall(err.Error())
		}
	}
	if err != nil {
		w.upsertOutcome(ctx, toolcore.ToolCall{}, wire.OutcomeInvalidToolCall)
		return toolcore.Result{}, err
	}
	if ctx.Err() != nil {
		return w.canceled(ctx, call)
	}
	return w.execute(withPrincipal(ctx, principal), call, workflow.GetInfo(ctx).WorkflowExecution.ID)
}

// execute runs the steps after the snapshot (look up, validate, approval, ExecuteTool, link) for
// call with idempotency key key: in the call's own ToolCallWorkflow, or inline in an agent
// workflow (see Inline).
func (w *Workflows) execute(ctx workflow.Context, call toolcore.ToolCall, key string) (toolcore.Result, error) {
	tool, found := w.Registry.Get(call.Name())
	if !found {
		// The result names the queue and this worker's tools: a call started on the wrong
		// queue is diagnosable from it alone. Both are fixed for the worker: deterministic.
		return w.complete(ctx, call, toolcore.NotFoundOnQueueResult(call, workflow.GetInfo(ctx).TaskQueueName, w.Registry.Names()))
	}
	guardBudget := newBudget(w.validateTimeout())
	accepted, rejected, ok := validate(tool, call, guardBudget)
	if !ok {
		w.countRejection(ctx, call, rejected)
		return w.complete(ctx, call, rejected)
	}
	if ctx.Err() != nil {
		return w.canceled(ctx, call)
	}
	decision := w.decidePolicy(ctx, call, tool, accepted)
	if decision.Enforced() == wire.PolicyDeny {
		return w.complete(ctx, call, toolcore.PolicyDeniedResult(call, decision.PolicyID, decision.Reason))
	}
	if decision.Enforced() == wire.PolicyApprove || needsApproval(tool, accepted, guardBudget) {
		if w.inline {
			// The approval's update handlers live on the call's own workflow.
			return ExecuteToolCall(ctx, call)
		}
		var asked *wire.PolicyDecision
		if decision.Enforced() == wire.PolicyApprove {
			asked = &decision
		}
		approved, ed, res, err := w.awaitApproval(ctx, call, tool, asked)
		if !approved {
			return res, err
		}
		if ed != nil {
			// The tool runs once, with the reviewer's arguments; the result says so.
			res, err := w.run(ctx, ed.call, tool, ed.accepted, key)
			if err != nil || res.IsZero() {
				return res, err
			}
			return toolcore.ReviewerEditedResult(call, res, ed.reviewer, ed.call.Arguments().Raw()), nil
		}
	}
	if w.inline && (len(tool.Options().Credentials) > 0 || tool.Options().Interactive) {
		// A wait for consent or for answers is held by the call's own workflow.
		return ExecuteToolCall(ctx, call)
	}
	return w.run(ctx, call, tool, accepted, key)
}

// run runs the validated call's tool (ExecuteTool) and ends the call with its result.
func (w *Workflows) run(ctx workflow.Context, call toolcore.ToolCall, tool toolcore.Tool, accepted json.RawMessage, key string) (toolcore.Result, error) {

	opts := tool.Options()
	w.setDetails(ctx, runningDetails(call, opts, tool.DefinitionHash()))
	in := activities.ExecuteToolInput{
		ToolCallID:     call.ID(),
		ToolName:       call.Name(),
		Accepted:       accepted,
		IdempotencyKey: key,
		MaxAttempts:    int(retryPolicy(opts).MaximumAttempts),
		DefinitionHash: tool.DefinitionHash(),
		Principal:      principalFrom(ctx),
		Run:            w.callRun(ctx),
	}
	var out activities.ExecuteToolOutput
	var err error
	ao := w.activityOptions(call, opts, w.activityPriority(ctx))
	if opts.Local {
		// The fast path: the attempt runs in this workflow task; its result is recorded as a
		// marker when the task completes. A canceled ctx cancels it at once.
		err = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localActivityOptions(call, opts)),
			wire.ExecuteToolName, in).Get(ctx, &out)
	} else {
		err = w.executeTool(ctx, ao, in, &out)
		// An attempt that found no token of the principal for a credential did nothing: wait
		// for the consent, then schedule the call again (the rounds are bounded).
		var consent consentWait
		var asked inputWait
		drains := 0
		for err != nil && ctx.Err() == nil {
			// A tool that asked mid-run ended its attempt: wait for the answers, then run it
			// again with them (the rounds are bounded).
			if req, ok := inputRequired(err); ok {
				if w.inline {
					// The agent workflow holds no wait: only a call workflow answers questions.
					return w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed,
						"the tool asked for input ("+strings.Join(toolcore.InputKeys(req.Requests), ", ")+") in an agent's inline call; declare it Interactive so inline calls of it run as call workflows"))
				}
				if goOn, res, err := w.awaitInput(ctx, call, opts, &asked, req, &in); !goOn {
					return res, err
				}
				w.setDetails(ctx, runningDetails(call, opts, tool.DefinitionHash()))
				err = w.executeTool(ctx, ao, in, &out)
				continue
			}
			if req, ok := consentRequired(err); ok {
				if goOn, res, err := w.awaitConsent(ctx, call, opts, &consent, req); !goOn {
					return res, err
				}
				w.setDetails(ctx, runningDetails(call, opts, tool.DefinitionHash()))
				err = w.executeTool(ctx, ao, in, &out)
				continue
			}
			// A drained attempt (its worker stopped gracefully) did not count: schedule the
			// call again at once, with the attempts left, on whichever worker takes it.
			drained, ok := drainedAttempt(err)
			if !ok || drains >= wire.MaxDrainResumes || workflow.GetVersion(ctx, wire.ChangeDrainResume, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
				break
			}
			workflow.GetLogger(ctx).Info("ExecuteTool attempt drained by a stopping worker; scheduling it again",
				"toolCallId", call.ID(), "toolName", call.Name(), "attemptsSpent", drained.Attempts)
			in.Resume = &drained
			err = w.executeTool(ctx, resumeOptions(ao, drained), in, &out)
			drains++
		}
	}
	// Cancellation wins, even over a result that arrived in the same workflow task: "canceled"
	// means the caller asked to stop and the tool has stopped (WaitForCancellation).
	if ctx.Err() != nil {
		return w.canceled(ctx, call)
	}
	if err != nil {
		if handled, res, err := w.reconcileLost(ctx, call, tool, in, ao, err); handled {
			return res, err
		}
		return w.activityFailed(ctx, call, opts, err)
	}
	return w.complete(ctx, call, toolcore.LinkResult(call, out.Content, out.IsError, out.Parts))
}

// executeTool schedules ExecuteTool with ao and waits for it into out.
func (w *Workflows) executeTool(ctx workflow.Context, ao workflow.ActivityOptions, in activities.ExecuteToolInput, out *activities.ExecuteToolOutput) error {
	actx := workflow.WithActivityOptions(ctx, ao)
	running := workflow.ExecuteActivity(actx, wire.ExecuteToolName, in)
	w.hurryOnCancel(ctx, running)
	return running.Get(actx, out)
}

// hurryOnCancel waits until the activity ends or ctx is canceled; on a cancellation it hurries the
// attempt's heartbeats if the attempt runs in this process. It adds no command: the SDK requests
// the activity's cancellation itself when ctx is canceled, and the hint is not replayed.
func (w *Workflows) hurryOnCancel(ctx workflow.Context, running workflow.Future) {
	if w.Attempts == nil {
		return
	}
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(running, func(workflow.Future) {})
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
		if !workflow.IsReplaying(ctx) {
			// A hint to this process's heartbeat loop (a non-blocking channel send): no command,
			// no state the workflow reads back, so it cannot change what the workflow decides.
			//workflowcheck:ignore
			w.Attempts.Hurry(workflow.GetInfo(ctx).WorkflowExecution.ID)
		}
	})
	sel.Select(ctx)
}

// complete ends the workflow with result.
func (w *Workflows) complete(ctx workflow.Context, call toolcore.ToolCall, result toolcore.Result) (toolcore.Result, error) {
	outcome := wire.OutcomeOK
	if code := result.ErrorCode(); code != 0 {
		outcome = code.String()
	}
	w.setDetails(ctx, "completed: "+outcome)
	w.upsertOutcome(ctx, call, outcome)
	return result, nil
}

// canceled ends the workflow as canceled. The outcome is upserted from a disconnected context:
// the workflow context is already canceled.
func (w *Workflows) canceled(ctx workflow.Context, call toolcore.ToolCall) (toolcore.Result, error) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	w.upsertOutcome(dctx, call, wire.OutcomeCanceled)
	return toolcore.Result{}, temporal.NewCanceledError()
}

// activityFailed maps a failed ExecuteTool (it returned an error, timed out, or its worker was
// lost, after its retries) to the call's outcome.
func (w *Workflows) activityFailed(ctx workflow.Context, call toolcore.ToolCall, opts toolcore.Options, err error) (toolcore.Result, error) {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == wire.ErrTypeNonRecoverable {
		w.setDetails(ctx, "failed: "+wire.OutcomeFatal)
		w.upsertOutcome(ctx, call, wire.OutcomeFatal)
		return toolcore.Result{}, temporal.NewNonRetryableApplicationError(appErr.Message(), wire.ErrTypeNonRecoverable, nil)
	}
	w.countActivityFailure(ctx, call, err)
	message := failureMessage(opts, err)
	workflow.GetLogger(ctx).Warn("ExecuteTool failed", "toolCallId", call.ID(), "toolName", call.Name(), "error", err)
	return w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed, message))
}

func (w *Workflows) validateTimeout() time.Duration {
	switch {
	case w.ValidateTimeout <= 0:
		return DefaultValidateTimeout
	case w.ValidateTimeout > MaxValidateTimeout:
		return MaxValidateTimeout
	default:
		return w.ValidateTimeout
	}
}
