package workflows

import (
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/callerr"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// CallOptions configure the tool calls a parent workflow starts with ExecuteToolCall and
// ExecuteRound. They work at their zero value; set them with WithCallOptions.
type CallOptions struct {
	// TaskQueue the ToolCallWorkflow children start on; a toolgate worker must poll it.
	// Optional: default wire.DefaultTaskQueue ("toolgate"), like client.Options.TaskQueue.
	TaskQueue string
	// Scope prefixes the children's workflow IDs ("<scope>/toolcall-<callId>"), exactly like
	// client.Options.Scope. Optional: default none.
	Scope string
	// SearchAttributes sets ToolName and ToolCallId on the children at start, as the client does.
	// Set it only when the namespace has them: a child with an undefined attribute fails to
	// start. Optional: default false.
	SearchAttributes bool
	// AwaitTimeout bounds the AwaitToolCall activity that waits for a call started by someone
	// else (start to close). Optional: default DefaultAwaitTimeout.
	AwaitTimeout time.Duration
	// Priority of the children (docs/flow-control.md): level, fairness key and weight. A level or
	// weight left unset is the parent's own (the server merges them). Optional: default the
	// parent's fairness key if it has one, else FairnessKeyOf(the parent's workflow ID), so each
	// agent run gets its fair share of the tool fleet.
	Priority wire.Priority
	// Effects records the calls that completed (and the Unsafe ones whose outcome is unknown), in
	// completion order, so the run can undo them (Effects.Undo). Optional: default nil, nothing
	// is recorded.
	Effects *Effects
	// Principal is whom the calls run for. Optional: default the agent run's own principal (its
	// start's memo wire.MemoPrincipal), if it has one. Either way the calls name the run as
	// the actor unless the principal names one.
	Principal *toolcore.Principal
}

// Defaults of CallOptions and the AwaitToolCall activity.
const (
	DefaultAwaitTimeout = 24 * time.Hour
	// AwaitHeartbeatTimeout is the heartbeat timeout of AwaitToolCall: a lost worker is noticed
	// within it and the wait resumes on another one.
	AwaitHeartbeatTimeout = 10 * time.Second
)

type callOptionsKey struct{}

// WithCallOptions returns a context whose ExecuteToolCall and ExecuteRound use opts.
func WithCallOptions(ctx workflow.Context, opts CallOptions) workflow.Context {
	return workflow.WithValue(ctx, callOptionsKey{}, opts)
}

func callOptions(ctx workflow.Context) CallOptions {
	opts, _ := ctx.Value(callOptionsKey{}).(CallOptions)
	if opts.TaskQueue == "" {
		opts.TaskQueue = wire.DefaultTaskQueue
	}
	if opts.AwaitTimeout <= 0 {
		opts.AwaitTimeout = DefaultAwaitTimeout
	}
	return opts
}

// ExecuteToolCall runs call from workflow code as a child ToolCallWorkflow and returns its
// outcome the way client.Execute does: the linked result (error results included), or a genuine
// *toolcore.NonRecoverableToolError (stop the agent run; returned inside a non-retryable
// ApplicationError, see FatalErrorMessage), a *toolcore.ContractError
// (INVALID_TOOL_CALL), wire.ErrCallCanceled / wire.ErrCallTerminated / wire.ErrCallTimedOut / wire.ErrCallConflict,
// or the parent's own cancellation (a *temporal.CanceledError when ctx is canceled).
//
// The child has the client's workflow ID (wire.WorkflowID with CallOptions.Scope), ID reuse policy
// reject-duplicate, parent-close policy request-cancel (the tool is canceled when the parent
// closes: completed, failed, canceled, terminated or timed out), and waits for its cancellation
// to complete, so a canceled call has stopped its tool.
//
// When a workflow with that ID already exists (a client or an earlier parent started the same
// call, running or closed), the server refuses the child start (the SDK reports
// temporal.ChildWorkflowExecutionAlreadyStartedError) and ExecuteToolCall attaches instead: it
// runs the AwaitToolCall activity, which checks that the existing run holds the same call
// (wire.ErrCallConflict otherwise) and waits for its outcome, heartbeating. Both the refused start and
// the activity are in the parent's history, so replay takes the same path. An attached call is not
// a child: canceling the parent cancels the activity, which cancels the call and waits for it to
// close, like client.Execute; a parent that is terminated leaves it running.
func ExecuteToolCall(ctx workflow.Context, call toolcore.ToolCall) (toolcore.Result, error) {
	if call.IsZero() {
		return toolcore.Result{}, &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "tool call is the zero value"}
	}
	canonical, err := call.MarshalJSON()
	if err != nil {
		return toolcore.Result{}, err
	}
	opts := callOptions(ctx)
	principal, err := agentPrincipal(ctx)
	if err != nil {
		return toolcore.Result{}, err
	}
	if _, refused, over := spendBudget(ctx, call, nil); over { // WithBudget: nothing starts
		return refused, nil
	}
	id := wire.WorkflowID(opts.Scope, call.ID())
	cwo := workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		TaskQueue:             opts.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation:   true,
		StaticSummary:         safetext.CallSummary(call.Name(), call.ID()),
		Priority:              childPriority(ctx, opts.Priority),
		Memo:                  principalMemo(principal),
	}
	if opts.SearchAttributes {
		attrs := []temporal.SearchAttributeUpdate{toolNameKey().ValueSet(call.Name()), toolCallIDKey().ValueSet(call.ID())}
		if principal != nil {
			attrs = append(attrs, toolSubjectKey().ValueSet(principal.Subject))
		}
		cwo.TypedSearchAttributes = temporal.NewSearchAttributes(attrs...)
	}
	// The canonical bytes go into the payload as they are (see client: the JSON converter would
	// re-escape <, > and &).
	input := converter.NewRawValue(&commonpb.Payload{
		Metadata: map[string][]byte{
			converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON),
			wire.MetadataOutcomeRule:   []byte(wire.OutcomeRuleOKUnset),
		},
		Data: canonical,
	})
	child := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, cwo), wire.ToolCallWorkflowName, input)
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		// The server reports a ChildWorkflowExecutionAlreadyStartedError, the test environment a
		// WorkflowExecutionAlreadyStarted; this checks for both.
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			result, err := awaitExisting(ctx, opts, id, string(canonical))
			if err == nil {
				recordChild(ctx, opts, call, id, result)
			}
			return result, err
		}
		if ctx.Err() != nil {
			return toolcore.Result{}, err
		}
		return toolcore.Result{}, fatalError(callerr.Map(id, err))
	}
	var result toolcore.Result
	if err := child.Get(ctx, &result); err != nil {
		if ctx.Err() != nil {
			return toolcore.Result{}, err
		}
		return toolcore.Result{}, fatalError(callerr.Map(id, err))
	}
	recordChild(ctx, opts, call, id, result)
	return result, nil
}

// awaitExisting waits, through the AwaitToolCall activity, for the call that already has the
// workflow ID.
func awaitExisting(ctx workflow.Context, opts CallOptions, workflowID, canonical string) (toolcore.Result, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: opts.AwaitTimeout,
		HeartbeatTimeout:    AwaitHeartbeatTimeout,
		WaitForCancellation: true,
		Summary:             "await " + workflowID,
		// Waiting is read-only: retry RPC failures and lost workers without limit; the outcome
		// kinds are non-retryable ApplicationErrors.
		RetryPolicy: &temporal.RetryPolicy{MaximumInterval: 10 * time.Second},
	})
	var result toolcore.Result
	err := workflow.ExecuteActivity(actx, wire.AwaitToolCallName, wire.AwaitToolCallInput{WorkflowID: workflowID, Call: canonical}).Get(actx, &result)
	if err != nil {
		if ctx.Err() != nil {
			return toolcore.Result{}, err
		}
		return toolcore.Result{}, fatalError(callerr.Map(workflowID, err))
	}
	return result, nil
}

// childPriority is the Priority of a child call: p, its fairness key defaulted to the parent's
// key or, without one, to the parent's workflow ID.
func childPriority(ctx workflow.Context, p wire.Priority) temporal.Priority {
	if p.FairnessKey == "" {
		info := workflow.GetInfo(ctx)
		p.FairnessKey = info.Priority.FairnessKey
		if p.FairnessKey == "" {
			p.FairnessKey = wire.FairnessKeyOf(info.WorkflowExecution.ID)
		}
	}
	return temporal.Priority{PriorityKey: p.Level, FairnessKey: p.FairnessKey, FairnessWeight: p.FairnessWeight}
}
