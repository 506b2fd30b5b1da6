// Package client is the agent-facing Go API of toolgate: it runs tool calls durably on Temporal,
// one ToolCallWorkflow per call, and maps each outcome back to toolcore values and errors.
//
// # Calls and workflow IDs
//
// A call runs as workflow `toolcall-<callId>`, or `<scope>/toolcall-<callId>` when
// [Options.Scope] is set (use a scope per agent run or tenant when call IDs are not globally
// unique), with call ID and scope escaped by [wire.EscapeID] into printable ASCII: bytes '!'..'~'
// except '%' stay, every other byte of the UTF-8 (space, '%', non-ASCII) becomes %XX with upper-case
// hex ("ts-é-1" is `toolcall-ts-%C3%A9-1`). Temporal SDKs send the workflow ID in a gRPC header,
// which must be printable ASCII; the worker fails a workflow whose ID is not with
// INVALID_TOOL_CALL. [WorkflowID] computes it; the *ByWorkflowID methods take one directly, for operators
// and the CLI. The ID reuse policy is reject-duplicate: a call ID names one execution for as long
// as the namespace retains it (its retention period after the call closes). After that the ID is
// free again and a resubmission runs the tool anew.
//
// # Idempotent submission
//
// [Client.Execute] and [Client.Start] start the workflow, or attach to the execution that
// already has the ID, running or closed. Submitting the same call again (a crashed agent
// resubmitting) therefore runs nothing twice and returns the recorded outcome. The same ID with a
// different name or arguments is refused with [wire.ErrCallConflict], never answered with the other
// call's result.
//
// How the conflict is detected, and what it costs: the start uses conflict policy FAIL with
// WorkflowExecutionErrorWhenAlreadyStarted, so the server says whether this request created the
// execution (success) or found one (an already-started error naming the run; we then attach to
// that run, which is what policy USE_EXISTING would have done). Only in the second case does the
// client read the existing run's history (one GetWorkflowExecutionHistory call, one page of a
// short history) and compare the canonical call JSON of its input with the submitted call's
// (toolcore.ParseToolCall then MarshalJSON on both sides, so key order and spacing do not
// matter). A first submission costs no extra round trip. An input that cannot be read or parsed
// counts as a conflict: refusing is the safe answer.
//
// # Outcomes
//
//   - Completed: the linked toolcore.Result, success or error result (TOOL_NOT_FOUND,
//     TOOL_ARGUMENTS_INVALID, TOOL_EXECUTION_FAILED, ...). Error results are results, not errors.
//   - Failed by a NonRecoverableToolError: a genuine *toolcore.NonRecoverableToolError (minted
//     with toolcore.NewNonRecoverableToolError) carrying the message; stop the agent run.
//   - Failed with INVALID_TOOL_CALL (a malformed input started by another client): a
//     *toolcore.ContractError with toolcore.CodeInvalidToolCall.
//   - Canceled by someone else (toolgate cancel, the UI, another client): [wire.ErrCallCanceled].
//   - Terminated or timed out: [wire.ErrCallTerminated], [wire.ErrCallTimedOut].
//   - No execution with that ID: [wire.ErrNotFound].
//
// The client snapshots the call itself before starting (toolcore.ParseToolCall on its canonical
// JSON), so a malformed call fails fast with *toolcore.ContractError and starts nothing.
//
// # Cancellation
//
// When Execute's ctx ends before the outcome, Execute requests cancellation of the workflow, waits
// (at most [Options.CancelWaitTimeout]) until it is closed, so the tool has stopped, and returns
// context.Cause(ctx). A workflow that completed first keeps its result, which [Client.Result]
// still returns. [Client.Cancel] requests cancellation without waiting.
//
// # No worker
//
// A call on a task queue no worker polls waits until one does. Execute waits in silence unless
// [Options.NoWorker] is set: that hook hears of it [Options.NoWorkerDelay] (3 s) after the start,
// once, while the call keeps waiting. When ctx ends with no worker polling, Execute does not wait
// for the close and joins an [ErrNoWorker] error naming the queue.
//
// A call ID names one execution: a submission that attaches to a running call started on another
// queue waits on that queue. [Options.OtherQueue] hears of it at once ([ErrOtherQueue], naming
// the queue), and the no-worker watch and the check on cancel look at that queue.
//
// # Search attributes
//
// When the namespace has the Keyword search attributes ToolName and ToolCallId (detected once per
// Client with the OperatorService, or forced with [Options.SearchAttributes]), the client sets them
// at start, so `ToolName = "add"` finds calls in the UI and with ListWorkflow. Arguments are never
// put in search attributes (they are not encrypted by a payload codec). Every start also carries
// the static summary `<name> · <callId>`.
//
// # Progress and status
//
// [Client.Progress] returns the latest progress the running tool reported (the pending activity's
// heartbeat details, read with DescribeWorkflowExecution), and [Client.FinalProgress] the last
// report of a closed call (from history). With [Options.OnProgress] set, Execute delivers a call's
// reports as it waits: every report once, in order, and the tool's last report before the result. [Client.Status] adds the state, the
// attempt, and the result or error of a closed call; it also reads the first history event to name
// the call (two to three round trips: for operators, not for hot loops).
package client
