package workflows

import (
	"encoding/json"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// validation is what Tool.Validate returned.
type validation struct {
	accepted json.RawMessage
	rejected toolcore.Result
	ok       bool
}

// budget is the wall-clock time the validator and the approval rule of one call share: together
// they stay under the SDK's deadlock detector.
type budget struct {
	timeout  time.Duration
	deadline time.Time
}

func newBudget(timeout time.Duration) budget {
	//workflowcheck:ignore
	return budget{timeout: timeout, deadline: time.Now().Add(timeout)}
}

// validate runs the tool's validator (Tool.Validate recovers its panics) under the wall-clock
// guard; a validator that does not return within the budget rejects the call with
// TOOL_VALIDATION_FAILED.
func validate(tool toolcore.Tool, call toolcore.ToolCall, b budget) (json.RawMessage, toolcore.Result, bool) {
	timeout := b.timeout
	v := guard(b.deadline, func() validation {
		accepted, rejected, ok := tool.Validate(call)
		return validation{accepted: accepted, rejected: rejected, ok: ok}
	}, func() validation {
		msg := "validator did not return within " + timeout.String() + "; validators must be synchronous and must not block"
		return validation{rejected: toolcore.ErrorResult(call, toolcore.CodeToolValidationFailed, msg)}
	})
	return v.accepted, v.rejected, v.ok
}

// needsApproval runs the tool's approval rule (Tool.NeedsApproval recovers its panics) under the
// wall-clock guard; a rule that does not return within what is left of the budget fails safe:
// the call waits for a reviewer.
func needsApproval(tool toolcore.Tool, accepted json.RawMessage, b budget) bool {
	return guard(b.deadline, func() bool { return tool.NeedsApproval(accepted) }, func() bool { return true })
}

// guard runs f, user code that runs in workflow code (a validator, an approval rule), on its own
// goroutine and returns its value, or late() if f has not returned by deadline.
//
// Such code must be synchronous and pure, but code that blocks or loops would otherwise hold the
// workflow task until the SDK's deadlock detector panics it after 1 s, and under the default
// WorkflowPanicPolicy (BlockWorkflow) the call would be retried and wedged forever. The goroutine
// is left behind (Go cannot stop it): code that blocks forever leaks one goroutine per attempt,
// and is a bug the result names.
//
// The guard reads the wall clock, so it is not deterministic: code whose running time straddles
// the timeout could get a different verdict on replay (a non-determinism error for the replaying
// task, which is retried). Code that obeys the contract finishes in microseconds, three orders of
// magnitude inside the guard.
func guard[T any](deadline time.Time, f func() T, late func() T) T {
	done := make(chan T, 1)
	// The wall-clock guard is the workflow's one deliberate non-determinism (see above).
	//workflowcheck:ignore
	go func() { done <- f() }()
	//workflowcheck:ignore
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	//workflowcheck:ignore
	select {
	case v := <-done:
		return v
	case <-timer.C:
		// Both may be ready after a stall of the whole process; the verdict wins then.
		select {
		case v := <-done:
			return v
		default:
		}
		return late()
	}
}
