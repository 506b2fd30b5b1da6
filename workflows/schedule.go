package workflows

import (
	"errors"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Retry backoff of ReadOnly and Idempotent tools: 1 s, 2 s, 4 s, ... capped at 30 s. With the
// default 3 attempts a call waits at most 3 s in backoff.
const (
	RetryInitialInterval    = time.Second
	RetryBackoffCoefficient = 2.0
	RetryMaximumInterval    = 30 * time.Second
)

// activityOptions schedules ExecuteTool with the tool's options: its queue, one attempt's timeout,
// the heartbeat timeout that bounds how late cancellation and worker loss are noticed, and a retry
// policy by side-effect class.
func (w *Workflows) activityOptions(call toolcore.ToolCall, opts toolcore.Options, priority temporal.Priority) workflow.ActivityOptions {
	queue := ActivityTaskQueue(w.TaskQueue, call.Name(), opts)
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: opts.Timeout,
		HeartbeatTimeout:    opts.HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         drainAware(retryPolicy(opts)),
		Summary:             call.Name(),
		// The call's own priority and fairness key (its start options), recorded on the
		// activity's scheduled event; not compared on replay (the SDK matches activity ID and
		// type), so histories recorded without it replay unchanged.
		Priority: priority,
	}
}

// localActivityOptions runs a Local tool with the same per-attempt timeout and retry policy.
// ScheduleToCloseTimeout, which the SDK would default to one attempt's timeout (no retry after a
// timeout), covers every attempt and the backoffs between them, as the server does for an
// activity without one.
func localActivityOptions(call toolcore.ToolCall, opts toolcore.Options) workflow.LocalActivityOptions {
	policy := retryPolicy(opts)
	total := time.Duration(policy.MaximumAttempts) * opts.Timeout
	backoff := RetryInitialInterval
	for range policy.MaximumAttempts - 1 {
		total += backoff
		backoff = min(time.Duration(float64(backoff)*RetryBackoffCoefficient), RetryMaximumInterval)
	}
	return workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: total,
		StartToCloseTimeout:    opts.Timeout,
		RetryPolicy:            policy,
		// The marker records no input: client.Status reads an agent run's inline Local calls
		// from its summary.
		Summary: safetext.CallSummary(call.Name(), call.ID()),
	}
}

// retryPolicy: Unsafe tools get exactly one attempt. ReadOnly and Idempotent tools are retried on
// timeouts, worker loss and transient errors, up to MaxAttempts. Errors that end the call are never
// retried, whatever the class.
func retryPolicy(opts toolcore.Options) *temporal.RetryPolicy {
	attempts := int32(1)
	if opts.SideEffect != toolcore.Unsafe {
		attempts = int32(max(opts.MaxAttempts, 1))
	}
	return &temporal.RetryPolicy{
		InitialInterval:    RetryInitialInterval,
		BackoffCoefficient: RetryBackoffCoefficient,
		MaximumInterval:    RetryMaximumInterval,
		MaximumAttempts:    attempts,
		NonRetryableErrorTypes: []string{
			wire.ErrTypeNonRecoverable,
			wire.ErrTypeToolNotRegistered,
			wire.ErrTypeInvalidInput,
		},
	}
}

// drainAware adds wire.ErrTypeDrained to policy's non-retryable types: a drained attempt goes
// to the workflow at once, which schedules the call again without counting it (run). Local
// activities run inside the workflow task and are never drained.
func drainAware(policy *temporal.RetryPolicy) *temporal.RetryPolicy {
	policy.NonRetryableErrorTypes = append(policy.NonRetryableErrorTypes, wire.ErrTypeDrained)
	return policy
}

// resumeOptions are ao for the ExecuteTool scheduled again after drained: its retry policy allows
// the attempts the call has left (at least one: a drained attempt never was the last).
func resumeOptions(ao workflow.ActivityOptions, drained activities.DrainedAttempt) workflow.ActivityOptions {
	policy := *ao.RetryPolicy
	policy.MaximumAttempts = max(policy.MaximumAttempts-int32(drained.Attempts), 1)
	ao.RetryPolicy = &policy
	return ao
}

// drainedAttempt returns the details of an ExecuteTool failure of type wire.ErrTypeDrained.
func drainedAttempt(err error) (activities.DrainedAttempt, bool) {
	var appErr *temporal.ApplicationError
	var d activities.DrainedAttempt
	if !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeDrained || !appErr.HasDetails() || appErr.Details(&d) != nil {
		return activities.DrainedAttempt{}, false
	}
	return d, true
}

// runningDetails is the workflow's current details while the tool runs (shown in the UI).
func runningDetails(call toolcore.ToolCall, opts toolcore.Options, definitionHash string) string {
	attempts := "1 attempt"
	if opts.SideEffect != toolcore.Unsafe && opts.MaxAttempts > 1 {
		attempts = "up to " + strconv.Itoa(opts.MaxAttempts) + " attempts"
	}
	return "running " + call.Name() + " (" + opts.SideEffect.String() + ", " + attempts + ", timeout " + opts.Timeout.String() + ", definition " + definitionHash + ")"
}

// ActivityTaskQueue is the task queue of tool's ExecuteTool activity on a worker whose main
// queue is mainQueue: the tool's Options.TaskQueue; else, for a tool with a rate limit or a
// concurrency limit (Options.RateLimit, FairnessKeyRateLimit, MaxConcurrent), a queue of its own,
// wire.ToolTaskQueue(mainQueue, tool), since the server limits a queue's rate and a worker bounds
// a queue's slots; else mainQueue. The worker polls every queue it returns.
func ActivityTaskQueue(mainQueue, tool string, opts toolcore.Options) string {
	switch {
	case opts.TaskQueue != "":
		return opts.TaskQueue
	case opts.FlowControlled():
		return wire.ToolTaskQueue(mainQueue, tool)
	default:
		return mainQueue
	}
}
