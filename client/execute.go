package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/internal/callerr"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

var (
	toolNameKey   = temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolName)
	toolCallIDKey = temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolCallID)
	principalKey  = temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolPrincipal)
	subjectKey    = temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolSubject)
)

// Execute runs call durably and waits for its outcome: it starts the call's workflow, or attaches
// to the execution that already has its ID (after checking it is the same call), and returns the
// recorded result. See the package documentation for the errors.
//
// When ctx ends first, Execute requests cancellation of the workflow (from a fresh context), waits
// until it is closed (at most Options.CancelWaitTimeout) and returns context.Cause(ctx), so
// errors.Is(err, context.DeadlineExceeded) holds after a deadline, joined with any error that kept
// it from confirming the close. When no worker polls the task queue, it does not wait and joins an
// ErrNoWorker error naming the queue; the recorded cancel request ends the call, unrun, once a
// worker polls. To learn of a missing worker while the call still waits, set Options.NoWorker.
func (c *Client) Execute(ctx context.Context, call toolcore.ToolCall) (result toolcore.Result, err error) {
	canonical, err := snapshot(call)
	if err != nil {
		return toolcore.Result{}, err
	}
	ctx, endSpan := c.startCallSpan(ctx, call) // tracing.go
	defer func() { endSpan(result, err) }()
	run, queue, err := c.start(ctx, call, canonical)
	if err != nil {
		if ctx.Err() != nil {
			// The start may have reached the server before ctx ended; cancel it if it did.
			return toolcore.Result{}, c.abandon(ctx, c.WorkflowID(call.ID()), canonical)
		}
		return toolcore.Result{}, err
	}
	stop := c.watchNoWorker(ctx, NoWorkerEvent{
		TaskQueue: queue, WorkflowID: run.GetID(), ToolCallID: call.ID(), ToolName: call.Name(),
	})
	progress := c.watchProgress(ctx, run, ProgressEvent{WorkflowID: run.GetID(), ToolCallID: call.ID(), ToolName: call.Name()})
	consent := c.watchConsent(ctx, run.GetID(), ConsentEvent{WorkflowID: run.GetID(), ToolCallID: call.ID(), ToolName: call.Name()})
	approval := c.watchApproval(ctx, run.GetID(), ApprovalEvent{WorkflowID: run.GetID(), ToolCallID: call.ID(), ToolName: call.Name()})
	input := c.watchInput(ctx, run.GetID(), InputEvent{WorkflowID: run.GetID(), ToolCallID: call.ID(), ToolName: call.Name()})
	result, err = c.wait(ctx, run)
	stop() // before cancelAndWait, which reports a missing worker itself
	consent.Stop()
	approval.Stop()
	input.Stop()
	if err != nil && ctx.Err() != nil {
		progress.Finish(ctx, false)
		return toolcore.Result{}, c.cancelAndWait(ctx, run.GetID(), run.GetRunID(), queue)
	}
	progress.Finish(ctx, err == nil) // a result (error results too): its last report, before it
	return result, err
}

// Start starts call durably (or attaches to the same call already started) and returns its
// workflow ID without waiting for the outcome; Result, Status, Progress and Cancel take it from
// there.
func (c *Client) Start(ctx context.Context, call toolcore.ToolCall) (workflowID string, err error) {
	workflowID, _, err = c.StartRun(ctx, call)
	return workflowID, err
}

// StartRun is Start that also returns the run ID of the call's execution, for ResultOfRun.
func (c *Client) StartRun(ctx context.Context, call toolcore.ToolCall) (workflowID, runID string, err error) {
	canonical, err := snapshot(call)
	if err != nil {
		return "", "", err
	}
	run, _, err := c.start(ctx, call, canonical)
	if err != nil {
		return "", "", err
	}
	return run.GetID(), run.GetRunID(), nil
}

// Result waits for the outcome of the call with callID (started by anyone) and returns it like
// Execute does. Unlike Execute, a ctx that ends only stops the wait: the call keeps running.
func (c *Client) Result(ctx context.Context, callID string) (toolcore.Result, error) {
	return c.ResultByWorkflowID(ctx, c.WorkflowID(callID))
}

// ResultByWorkflowID is Result for a workflow ID. It first asks the server for the current run
// of workflowID; ResultOfRun, for a run StartRun returned, saves that round trip.
func (c *Client) ResultByWorkflowID(ctx context.Context, workflowID string) (toolcore.Result, error) {
	return c.wait(ctx, c.sdk.GetWorkflow(ctx, workflowID, ""))
}

// ResultOfRun is ResultByWorkflowID for the run runID of workflowID (as StartRun returned it):
// it waits on that run directly.
func (c *Client) ResultOfRun(ctx context.Context, workflowID, runID string) (toolcore.Result, error) {
	return c.wait(ctx, c.sdk.GetWorkflow(ctx, workflowID, runID))
}

// snapshot returns the canonical wire JSON of call, re-snapshotted so that a zero or otherwise
// malformed call fails here, as a *toolcore.ContractError, before anything starts.
func snapshot(call toolcore.ToolCall) ([]byte, error) {
	if call.IsZero() {
		return nil, &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "tool call is the zero value"}
	}
	data, err := call.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode tool call %q: %w", call.ID(), err)
	}
	again, err := toolcore.ParseToolCall(data)
	if err != nil {
		return nil, err
	}
	return again.MarshalJSON()
}

// start starts the workflow of call, or returns the existing run with its ID after checking it
// holds the same call (wire.ErrCallConflict otherwise), and the task queue the run waits on: an
// existing run's own, reported to Options.OtherQueue when it is another than Options.TaskQueue.
func (c *Client) start(ctx context.Context, call toolcore.ToolCall, canonical []byte) (client.WorkflowRun, string, error) {
	id := c.WorkflowID(call.ID())
	priority := PriorityFrom(ctx)
	if err := priority.Check(); err != nil {
		return nil, "", fmt.Errorf("start call %q: %w", call.ID(), err)
	}
	principal, hasPrincipal := PrincipalFrom(ctx)
	if hasPrincipal {
		if err := principal.Check(); err != nil {
			return nil, "", fmt.Errorf("start call %q: %w", call.ID(), err)
		}
		if priority.FairnessKey == "" {
			priority.FairnessKey = PrincipalFairnessKey(principal)
		}
	}
	opts := client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: c.opts.TaskQueue,
		// A call ID names one execution: never run a closed call again...
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// ...and report a running one as an error naming its run instead of attaching silently
		// (USE_EXISTING): the error is how we learn that this request did not create the run,
		// so only then do we pay for the conflict check. We attach to that run ourselves.
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            safetext.CallSummary(call.Name(), call.ID()),
		EnableEagerStart:                         !c.opts.DisableEagerStart,
		Priority:                                 sdkPriority(priority),
	}
	if hasPrincipal {
		opts.Memo = map[string]any{wire.MemoPrincipal: principal}
	}
	withAttrs, withPrincipal, withSubject := c.detectAttributes(ctx)
	if withAttrs {
		updates := []temporal.SearchAttributeUpdate{
			toolNameKey.ValueSet(call.Name()),
			toolCallIDKey.ValueSet(call.ID()),
		}
		if withPrincipal && c.opts.Principal != "" {
			updates = append(updates, principalKey.ValueSet(c.opts.Principal))
		}
		if withSubject && hasPrincipal {
			updates = append(updates, subjectKey.ValueSet(principal.Subject))
		}
		opts.TypedSearchAttributes = temporal.NewSearchAttributes(updates...)
	}
	// The canonical bytes go into the payload as they are: the SDK's JSON converter would
	// re-escape '<', '>' and '&' as \u003c (6 bytes each), and the workflow, which snapshots its
	// input with ParseToolCall, would then refuse a call of far less than MaxCallBytes.
	input := converter.NewRawValue(&commonpb.Payload{
		Metadata: map[string][]byte{
			converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON),
			wire.MetadataOutcomeRule:   []byte(wire.OutcomeRuleOKUnset),
		},
		Data: canonical,
	})
	run, err := c.sdk.ExecuteWorkflow(ctx, opts, wire.ToolCallWorkflowName, input)
	if err != nil && withAttrs && isUndefinedSearchAttribute(err) {
		c.disableSearchAttributes()
		opts.TypedSearchAttributes = temporal.SearchAttributes{}
		run, err = c.sdk.ExecuteWorkflow(ctx, opts, wire.ToolCallWorkflowName, input)
	}
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		queue, err := c.sameCallQueue(ctx, id, started.RunId, canonical)
		if err != nil {
			return nil, "", err
		}
		c.reportOtherQueue(ctx, id, started.RunId, queue, call)
		return c.sdk.GetWorkflow(ctx, id, started.RunId), queue, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("start %s: %w", id, err)
	}
	return run, c.opts.TaskQueue, nil
}

// deadlineSlack: a deadline error of the result long poll this close to ctx's own deadline is
// ctx's deadline arriving (the server ends a long poll a moment before the caller's deadline,
// so ctx.Err() is still nil when the error arrives), not a transport failure.
const deadlineSlack = 3 * time.Second

// wait returns the outcome of run. When ctx ends (or its deadline is about to end the wait
// anyway), it returns context.Cause(ctx).
func (c *Client) wait(ctx context.Context, run client.WorkflowRun) (toolcore.Result, error) {
	var result toolcore.Result
	err := run.Get(ctx, &result)
	if err == nil {
		return result, nil
	}
	if ctx.Err() == nil && isDeadlineError(err) {
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < deadlineSlack {
			<-ctx.Done()
		}
	}
	if ctx.Err() != nil {
		return toolcore.Result{}, context.Cause(ctx)
	}
	return toolcore.Result{}, callerr.Map(run.GetID(), err)
}

// isDeadlineError reports whether err is a timeout or cancellation of the RPC itself, in any of
// the shapes the SDK returns: a context error, a gRPC status, or a serviceerror.
func isDeadlineError(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var deadline *serviceerror.DeadlineExceeded
	var canceled *serviceerror.Canceled
	if errors.As(err, &deadline) || errors.As(err, &canceled) {
		return true
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// cancelAndWait cancels the run, waits until it is closed and returns context.Cause(ctx), joined
// with what kept it from confirming the close: an ErrNoWorker error when no worker polls queue,
// the task queue the run waits on (then it does not wait). ctx has ended; the wait uses a
// detached context bounded by CancelWaitTimeout.
func (c *Client) cancelAndWait(ctx context.Context, workflowID, runID, queue string) error {
	cause := context.Cause(ctx)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.CancelWaitTimeout)
	defer cancel()
	if err := c.sdk.CancelWorkflow(wctx, workflowID, runID); err != nil && !isNotFound(err) {
		return errors.Join(cause, fmt.Errorf("cancel %s: %w", workflowID, err))
	}
	if err := c.checkPollers(wctx, queue); err != nil {
		// Nothing can close the workflow now. The cancel request is recorded: the worker that
		// finally polls sees it before anything else and ends the call canceled, running nothing.
		return errors.Join(cause, fmt.Errorf("%s: %w", workflowID, err))
	}
	err := c.sdk.GetWorkflow(wctx, workflowID, runID).Get(wctx, nil)
	var closed *temporal.WorkflowExecutionError
	if err != nil && !errors.As(err, &closed) {
		return errors.Join(cause, fmt.Errorf("wait for canceled %s to close: %w", workflowID, err))
	}
	return cause
}

// abandon handles a start cut short by ctx: if the ID's latest run holds this very call (our
// start got through, or an earlier submission of it runs), it is canceled and awaited; a run of a
// different call is left alone. It returns context.Cause(ctx), joined with what went wrong.
func (c *Client) abandon(ctx context.Context, workflowID string, canonical []byte) error {
	cause := context.Cause(ctx)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.CancelWaitTimeout)
	defer cancel()
	desc, err := c.sdk.DescribeWorkflowExecution(wctx, workflowID, "")
	if isNotFound(err) {
		return cause
	}
	if err != nil {
		return errors.Join(cause, fmt.Errorf("describe %s: %w", workflowID, err))
	}
	runID := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	queue, err := c.sameCallQueue(wctx, workflowID, runID, canonical)
	if err != nil {
		if errors.Is(err, wire.ErrCallConflict) {
			return cause
		}
		return errors.Join(cause, err)
	}
	return c.cancelAndWait(ctx, workflowID, runID, queue)
}

func isNotFound(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound)
}
