package workflows

import (
	"errors"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Inline runs tool calls inside an agent workflow, without a workflow of their own: the steps of
// ToolCallWorkflow (snapshot, look up, validate under the wall-clock guard, schedule the
// heartbeat-linked ExecuteTool activity with the side-effect class's retry policy and an
// idempotency key, reconcile a lost Unsafe attempt, map NonRecoverableToolError, link and bound
// the result) run in the agent's workflow code, and the one billable action of a short call is
// its ExecuteTool attempt. The result is byte-identical to ExecuteToolCall's
// (TestDifferentialInlineAndChild).
//
// Validation runs in the agent's workflow code, so the agent's worker process needs the tool
// definitions: give Inline the registry (a Snapshot) of the tools the toolgate worker runs, and
// keep it the same on every replay, like the toolgate worker's. The simplest setup hosts the
// agent workflow on the toolgate worker itself (worker.Worker.RegisterWorkflow) with that
// worker's registry; the ExecuteTool activities run on TaskQueue:
//
//	agent := &Agent{Tools: &workflows.Inline{Registry: reg}} // Agent.Run calls agent.Tools.ExecuteToolCall
//	w.RegisterWorkflow(agent.Run)
//
// That setup is also the cheapest: the ExecuteTool activities are on the agent's own task queue,
// so the SDK and the server dispatch them eagerly (the workflow task's completion hands them to
// the worker, without a round trip through matching), as they do an agent's plain activities. An
// agent on another queue pays that round trip per call: a round of 8 inline calls took 1.28x the
// wall time and 1.32x the CPU of 8 plain eager activities that way, and 1.0x on the agent's own
// queue (docs/BENCHMARKS.md, "Inline calls at the price of plain activities").
//
// What an inline call gives up, against ExecuteToolCall (docs/contract.md):
//   - no workflow of its own: it is not listed or searchable by ToolName/ToolCallId/ToolOutcome,
//     nor described, awaited or canceled by call ID; it shows in the UI as an activity of the
//     agent workflow (summary: the tool name);
//   - it is canceled with the agent workflow (or the context it runs in), not on its own;
//   - no deduplication of a call ID across agent runs or callers: the idempotency key is
//     "<agent workflow ID>/call/<call ID>", and a second ExecuteToolCall of the same call runs
//     the tool again under the same key (Idempotent tools see the same key);
//   - approval-gated calls (the tool's approval rule says so) are not inline: Inline runs them
//     as a child ToolCallWorkflow with ExecuteToolCall (the ctx's CallOptions), because the
//     reviewer's updates go to the call's own workflow.
//
// An inline call's ExecuteTool activity has the priority its child would have: the ctx's
// CallOptions.Priority, its fairness key defaulting to the agent's own key, else
// wire.FairnessKeyOf(the agent's workflow ID) (docs/flow-control.md). Other CallOptions fields
// apply only to the calls Inline runs as children.
//
// The zero value is not usable: Registry is required.
type Inline struct {
	// Registry is the tool set calls are looked up and validated in. Required.
	Registry *toolcore.Registry
	// TaskQueue is where ExecuteTool runs for tools without Options.TaskQueue. Optional: default
	// wire.DefaultTaskQueue, where toolgate workers poll.
	TaskQueue string
	// ValidateTimeout bounds a call's validator and approval rule together, as
	// Workflows.ValidateTimeout does. Optional: default DefaultValidateTimeout.
	ValidateTimeout time.Duration
	// Policy decides each call after validation, as Workflows.Policy does for a ToolCallWorkflow,
	// and the decision is recorded in the agent run's history: give it the worker's Source
	// (worker.Options.Policy). Optional: default the Source WithPolicy put on the ctx, else none.
	Policy *policy.Source
}

// InlineKey is the idempotency key of call id run inline by the agent workflow agentWorkflowID:
// unique among the agent's calls and stable across retries, worker restarts and replays.
func InlineKey(agentWorkflowID, callID string) string {
	return agentWorkflowID + "/call/" + callID
}

type callStartKey struct{}

// callStart is when the call began: the workflow's start, or an inline call's own start.
func callStart(ctx workflow.Context) time.Time {
	if start, ok := ctx.Value(callStartKey{}).(time.Time); ok {
		return start
	}
	return workflow.GetInfo(ctx).WorkflowStartTime
}

func (in *Inline) workflows() *Workflows {
	queue := in.TaskQueue
	if queue == "" {
		queue = wire.DefaultTaskQueue
	}
	return &Workflows{Registry: in.Registry, TaskQueue: queue, ValidateTimeout: in.ValidateTimeout, Policy: in.Policy, inline: true}
}

// ExecuteToolCall runs call in the agent workflow and returns what workflows.ExecuteToolCall
// would: the linked result (error results included), a genuine *toolcore.NonRecoverableToolError
// (inside a non-retryable ApplicationError, see FatalErrorMessage),
// a *toolcore.ContractError (INVALID_TOOL_CALL), or a *temporal.CanceledError when ctx is
// canceled (the tool has stopped: the activity waits for its cancellation).
func (in *Inline) ExecuteToolCall(ctx workflow.Context, call toolcore.ToolCall) (toolcore.Result, error) {
	if call.IsZero() {
		return toolcore.Result{}, &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "tool call is the zero value"}
	}
	canonical, err := call.MarshalJSON()
	if err != nil {
		return toolcore.Result{}, err
	}
	// The snapshot the child would take: the canonical bytes parsed again.
	snapshot, err := decodeCall(converter.NewRawValue(&commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)},
		Data:     canonical,
	}))
	if err != nil {
		return toolcore.Result{}, inlineError(err)
	}
	principal, err := agentPrincipal(ctx)
	if err != nil {
		return toolcore.Result{}, err
	}
	ctx, refused, over := spendBudget(ctx, snapshot, in.Registry) // WithBudget: nothing runs
	if over {
		return refused, nil
	}
	w := in.workflows()
	ctx = withPrincipal(workflow.WithValue(ctx, callStartKey{}, workflow.Now(ctx)), principal)
	if ctx.Err() != nil {
		return w.canceled(ctx, snapshot)
	}
	key := InlineKey(workflow.GetInfo(ctx).WorkflowExecution.ID, snapshot.ID())
	childKey := new(string) // set when the call runs as a child (approval-gated)
	res, err := w.execute(workflow.WithValue(ctx, childKeySlot{}, childKey), snapshot, key)
	if *childKey != "" {
		key = *childKey
	}
	if tool, ok := in.Registry.Get(snapshot.Name()); err == nil && ok && tool.HasCompensation() {
		opts := callOptions(ctx)
		queue := ActivityTaskQueue(w.TaskQueue, snapshot.Name(), tool.Options())
		if *childKey != "" {
			queue = opts.TaskQueue // run as a child on the call options' queue
		}
		opts.Effects.record(snapshot, key, queue, res)
	}
	return res, inlineError(err)
}

// ExecuteRound runs the calls of one model turn like workflows.ExecuteRound, each call inline.
// opts.Tools defaults to the Inline's Registry.
func (in *Inline) ExecuteRound(ctx workflow.Context, calls []toolcore.ToolCall, opts toolcore.RoundOptions) ([]toolcore.Outcome, error) {
	if opts.Tools == nil {
		opts.Tools = in.Registry
	}
	return executeRound(ctx, calls, opts, in.ExecuteToolCall)
}

// inlineError maps the workflow-level errors of execute to what ExecuteToolCall returns for them.
func inlineError(err error) error {
	if _, ok := toolcore.AsNonRecoverable(err); ok { // a call run as a child (approval-gated)
		return fatalError(err)
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case wire.ErrTypeNonRecoverable:
			return fatalError(toolcore.NewNonRecoverableToolError(appErr.Message()))
		case wire.ErrTypeInvalidToolCall:
			return &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: appErr.Message()}
		}
	}
	return err
}

// activityPriority is the priority of a call's ExecuteTool activity: in the call's own
// ToolCallWorkflow, the workflow's (its start options); inline, what the call's child workflow
// would have had (childPriority with the ctx's CallOptions.Priority), so an agent's inline calls
// default to its fairness key like its ExecuteToolCall calls. A level or weight left unset is
// the agent's own: the server merges an activity's priority with its workflow's.
func (w *Workflows) activityPriority(ctx workflow.Context) temporal.Priority {
	if w.inline {
		return childPriority(ctx, callOptions(ctx).Priority)
	}
	return workflow.GetInfo(ctx).Priority
}

// setDetails sets the workflow's current details, unless the call runs inline: the agent
// workflow's details are its own.
func (w *Workflows) setDetails(ctx workflow.Context, details string) {
	if !w.inline {
		workflow.SetCurrentDetails(ctx, details)
	}
}
