// Package workflows holds ToolCallWorkflow, the durable composition of toolcore's steps: one
// workflow execution per tool call, whose result is the linked tool-result message.
//
// # Wire contract
//
// Workflow type [wire.ToolCallWorkflowName] ("ToolCallWorkflow"), default task queue
// [wire.DefaultTaskQueue] ("toolgate"). Input: one payload (json/plain) holding the tool-call JSON
//
//	{"type":"toolCall","id":"call-add-1","name":"add","arguments":{"left":20,"right":22}}
//
// Output: the tool-result message JSON
//
//	{"id":"tool-result-call-add-1","role":"toolResult","toolCallId":"call-add-1","toolName":"add","content":"{\"sum\":42}","isError":false}
//
// A workflow that is not completed with a result ends in one of three ways: Canceled (the caller
// canceled it; no result), Failed with a non-retryable ApplicationError of type
// [wire.ErrTypeInvalidToolCall] (the input was not a tool call; message says why), or Failed with a
// non-retryable ApplicationError of type [wire.ErrTypeNonRecoverable] (a tool raised a genuine
// toolcore.NonRecoverableToolError; message is its text; the agent run must stop).
//
// # Steps
//
//  1. Snapshot: the payload is taken raw ([Input] is a converter.RawValue, which cannot fail to
//     decode) and parsed with toolcore.ParseToolCall; the workflow trusts no caller.
//  2. Look up in the registry snapshot of the worker: unknown is toolcore.NotFoundOnQueueResult
//     (naming the workflow's task queue and the registry's tools), and the workflow completes
//     without scheduling anything.
//  3. Validate in workflow code (toolcore.Tool.Validate recovers panics) under a wall-clock guard
//     ([Workflows.ValidateTimeout]); rejected, failed or timed-out validation completes the
//     workflow with the linked error result, scheduling nothing, so no effect can happen. A
//     worker with a policy ([Workflows.Policy]) then decides the validated call and records the
//     decision (policy.go): denied is toolcore.PolicyDeniedResult (POLICY_DENIED, nothing
//     scheduled); approve holds it for a reviewer as a tool with RequireApproval would.
//  4. Schedule wire.ExecuteToolName with the accepted value, the call ID and name, and the
//     workflow ID as idempotency key, on the tool's task queue, with StartToCloseTimeout = the
//     tool's Timeout, HeartbeatTimeout = its HeartbeatTimeout, WaitForCancellation, an activity
//     summary naming the tool, and a retry policy by side-effect class: Unsafe tools get one
//     attempt; ReadOnly and Idempotent tools up to MaxAttempts with backoff ([RetryInitialInterval],
//     [RetryBackoffCoefficient], [RetryMaximumInterval]).
//  5. Link the activity's bounded content with toolcore.LinkContent. An activity that ends
//     without a result (timeouts, lost worker, retries exhausted) becomes TOOL_EXECUTION_FAILED:
//     for Unsafe tools the message starts with [OutcomeUnknownMessage]; for retried tools it names
//     the attempts and what ended the last one.
//
// Cancellation is checked after the snapshot, after validation and when the activity ends;
// when it wins the workflow upserts the outcome and ends Canceled. Canceling the workflow cancels
// the activity and waits for the tool to stop (WaitForCancellation).
//
// # Determinism
//
// Everything the workflow decides depends on its input, the registry snapshot and history, with one
// documented exception: the validator guard reads the wall clock (see validate.go). Validators run
// on every replay, so changing a validator's verdict for calls that may be in flight needs
// workflow.GetVersion. Failure messages are built from the recorded failure and the tool's
// options, never from timestamps.
//
// # Budgets
//
// An agent run's ExecuteToolCall, ExecuteRound and Inline calls spend from the budget
// [WithBudget] puts in their context (budget.go): a call over a limit returns the linked
// BUDGET_EXCEEDED result and starts nothing, and the run answers the query wire.QueryBudget.
// Counts come from workflow code and times from workflow.Now, so replay charges the same calls.
//
// # Replay tests
//
// testdata/histories holds one recorded history per outcome kind, replayed by the tests of this
// package; `go run ./cmd/toolgate/internal/recordhistories` re-records them from the embedded server.
// The top-level files use only toolbox tools (so `toolgate replay testdata/histories/*.json`
// passes with the default toolbox); testdata/histories/fixtures need internal/fixtures.
// testdata/histories/rounds are parents, fixtures.RoundWorkflow running rounds with ExecuteRound
// (replayed here), and testdata/histories/agent the example agent workflow (replayed by
// examples/agent under its original workflow ID, which scopes its calls' IDs).
//
// # Panics and the worker's panic policy
//
// The workflow code does not panic on any input: decoding cannot fail, validators are recovered
// and guarded. What remains (a non-determinism error after an incompatible deploy, a bug) is
// governed by the worker's WorkflowPanicPolicy: BlockWorkflow (the SDK default) retries the task
// until a fixed worker arrives, so the caller waits; FailWorkflow ends the call with a failure.
//
// # Search attributes
//
// With [Workflows.SearchAttributes] set, the workflow upserts ToolOutcome ([wire.OutcomeOK], a result
// error code, [wire.OutcomeCanceled], [wire.OutcomeFatal], or [wire.OutcomeInvalidToolCall]) together with
// ToolName and ToolCallId once, just before it closes. A call started with
// [wire.OutcomeRuleOKUnset] (every call toolgate's clients start) records no ok outcome: ToolOutcome
// stays unset, and ToolName and ToolCallId are upserted only when its start lacked them. Names
// live in package wire.
package workflows
