// Package wire holds every wire name of toolgate: the names and shapes that callers in any
// language, running workers and recorded histories depend on. Changing a value here breaks running
// callers and replay of recorded histories; add names, never rename them.
//
// # Sections
//
// One file per part of the contract:
//
//   - workflow.go: the workflow type [ToolCallWorkflowName], the default task queue
//     [DefaultTaskQueue] and the ApplicationError types a ToolCallWorkflow fails with.
//   - activity.go: the activity type [ExecuteToolName] and the ApplicationError types the
//     activity returns.
//   - errors.go: the sentinel errors of a call's outcome ([ErrCallConflict], [ErrCallCanceled],
//     ...), shared by client and workflows so errors.Is matches either side.
//   - workflowid.go: [WorkflowIDPrefix] of a call's workflow ID and [ToolSetIdentityMarker] of a
//     worker's identity.
//   - searchattr.go: the custom search attribute names and the values of ToolOutcome.
//   - progress.go: [ProgressWindow], the numbered reports a running tool's heartbeat details carry,
//     and [FinalProgress], the window in the activity's result.
//   - checkpoint.go: [CheckpointDetailsIndex], where a tool's checkpoint travels in them.
//   - log.go: [LogWindow], the numbered log messages (toolcore.Log) heartbeat details and the
//     activity's result carry, ordered among the progress reports, at [LogDetailsIndex].
//   - approval.go: the approval updates and query, [ApprovalDecision], [ApprovalRecord] and
//     [ApprovalState].
//   - budget.go: [QueryBudget], the query of an agent run's budget, the scopes a
//     BUDGET_EXCEEDED message names, and [MCPBudgetMeta], the budget on MCP results.
//   - reconcile.go: the ReconcileTool activity of an Unsafe call whose attempt was lost.
//   - drain.go: [ErrTypeDrained], an attempt a gracefully stopping worker interrupted, and the
//     workflow's bound and change ID for scheduling it again.
//   - undo.go: undoing a run's effects: the CompensateTool activity, [UndoWorkflowName], their
//     inputs and [UndoResult].
//   - round.go: calls started from workflow code: the AwaitToolCall activity and its errors.
//   - principal.go: the memo key of a call's principal and the ToolSubject search attribute.
//   - consent.go: a call's wait for its principal's OAuth consent: [ErrTypeConsentRequired],
//     [ConsentRequest], the consent signal and query, [ConsentState].
//   - input.go: a call's wait for answers to its tool's questions: [ErrTypeInputRequired],
//     [InputRequired], the [UpdateInput] update and query, [InputAnswer], [InputState].
//   - policy.go: the policy step's change ID and its recorded [PolicyDecision].
//   - flow.go: a call's [Priority] (level, fairness key and weight) and a tool's own task queue.
//   - catalog.go: the tool catalog workflow [ToolCatalogWorkflowName] and its ID prefix.
//   - mcp.go: the _meta keys, task methods and task statuses toolgate uses on MCP.
//   - mcptasks.go: the names of MCP 2026-07-28's tasks extension (tasks/update, input_required,
//     resultType, -32021).
//
// TestDocListsEveryFile keeps this list equal to the package's files.
//
// Features that add wire names (updates, queries, error codes) add them in a file of their own
// here, each name documented where it is declared and in docs/contract.md.
//
// # Imports
//
// wire imports nothing but the standard library, so every package (toolcore, workflows,
// activities, worker, client, commands and tests) can share the names without importing each
// other: a client reads an activity's progress without importing the activity package.
package wire
