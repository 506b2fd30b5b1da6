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

// validate runs the tool's validator (Tool.Validate recovers its panics) under a wall-clock guard.
//
// Validators must be synchronous and pure, but one that blocks or loops would otherwise hold the
// workflow task until the SDK's deadlock detector panics it after 1 s, and under the default
// WorkflowPanicPolicy (BlockWorkflow) the call would be retried and wedged forever. The guard runs
// the validator on its own goroutine and, if it has not returned within timeout, completes the call
// with TOOL_VALIDATION_FAILED. The goroutine is left behind (Go cannot stop it): a validator that
// blocks forever leaks one goroutine per attempt, and is a bug the result names.
//
// The guard reads the wall clock, so it is not deterministic: a validator whose running time
// straddles the timeout could get a different verdict on replay (a non-determinism error for the
// replaying task, which is retried). Validators that obey the contract finish in microseconds,
// three orders of magnitude inside the guard.
func validate(tool toolcore.Tool, call toolcore.ToolCall, timeout time.Duration) (json.RawMessage, toolcore.Result, bool) {
	done := make(chan validation, 1)
	// The wall-clock guard is the workflow's one deliberate non-determinism (see above).
	//workflowcheck:ignore
	go func() {
		accepted, rejected, ok := tool.Validate(call)
		done <- validation{accepted: accepted, rejected: rejected, ok: ok}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	//workflowcheck:ignore
	select {
	case v := <-done:
		return v.accepted, v.rejected, v.ok
	case <-timer.C:
		// Both may be ready after a stall of the whole process; the verdict wins then.
		select {
		case v := <-done:
			return v.accepted, v.rejected, v.ok
		default:
		}
		msg := "validator did not return within " + timeout.String() + "; validators must be synchronous and must not block"
		return nil, toolcore.ErrorResult(call, toolcore.CodeToolValidationFailed, msg), false
	}
}
