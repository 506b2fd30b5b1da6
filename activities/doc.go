// Package activities holds ExecuteTool, the activity that runs one attempt of a validated tool call
// and returns only bounded content.
//
// # Contract
//
// Activity type [wire.ExecuteToolName] ("ExecuteTool"); input [ExecuteToolInput] (call ID, tool name,
// the validator's accepted value as JSON, idempotency key); output [ExecuteToolOutput] (content
// capped at toolcore.MaxContentCodePoints code points, isError, and the attempt's last progress
// report, so the final report reaches history). Heartbeat details: the latest toolcore.Progress
// the tool reported (JSON), or none.
//
// # Steps
//
//  1. Look the tool up in [Activities.Registry] (missing: a non-retryable
//     [wire.ErrTypeToolNotRegistered]; the tool did not run).
//  2. Start the heartbeat loop: every half of the HeartbeatTimeout and at once on a progress
//     report, carrying the progress window (progress.go); with [Activities.Heartbeats] a late beat is sent again
//     instead of ending the attempt (see heartbeat.go). Cancellation and worker loss reach the activity only
//     through heartbeats.
//  3. Run toolcore.Tool.Invoke (panics recovered) with a context that carries cancellation and
//     toolcore.Execution: call ID, tool name, attempt (from the activity info), the idempotency
//     key, and the progress reporter.
//  4. Map the outcome, cancellation first (see below), then serialize with toolcore.Complete inside
//     the activity, so an unbounded output never reaches history (payload limits would otherwise
//     turn it into a retryable failure that retries forever).
//
// # Errors
//
//   - Cancellation requested by the server is returned as cancellation (the SDK then records the
//     activity as canceled), never as a failure, even if the tool returned an error or a result.
//   - The worker stopping the attempt (shutdown, pause) while the tool has not returned a result is
//     a retryable ApplicationError of type [wire.ErrTypeInterrupted]; but a graceful stop
//     ([Drain], or the SDK's stop timeout) of a ReadOnly or Idempotent tool, or of an attempt that
//     had not started its tool, is [wire.ErrTypeDrained] with [DrainedAttempt] details, which
//     the workflow schedules again without counting the attempt.
//   - A genuine toolcore.NonRecoverableToolError is a non-retryable ApplicationError of type
//     [wire.ErrTypeNonRecoverable] whose message is toolcore.ErrorText of it, returned unwrapped (the
//     failure converter reads only the top-level error).
//   - An error marked with toolcore.Transient, from a ReadOnly or Idempotent tool, on an attempt
//     that is not the last under the retry policy, is a retryable ApplicationError of type
//     [wire.ErrTypeTransient]; on the last attempt it is the final result, as in toolcore.Execute.
//   - Everything else (ordinary errors, panics, look-alikes of the fatal type, contract errors
//     returned by tools) is the final TOOL_EXECUTION_FAILED result built by toolcore.Complete.
//
// ApplicationError messages are toolcore.ErrorText, so they are bounded like result messages.
package activities
