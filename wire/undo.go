package wire

import (
	"strconv"
	"time"
)

// Wire names of undoing an agent run's effects: the compensation of completed calls of Unsafe
// tools that declare a Compensate, in reverse order of completion (docs/contract.md, Undo).
const (
	// CompensateToolName is the activity type that undoes one effect: it runs the tool's
	// Compensate (after its Reconcile when the call's outcome is unknown). It is heartbeat-linked
	// like ExecuteTool and retried with backoff, at most CompensateMaxAttempts times.
	CompensateToolName = "CompensateTool"
	// UndoWorkflowName is the workflow type that undoes a list of effects (`toolgate undo`).
	// Every toolgate worker registers it.
	UndoWorkflowName = "UndoWorkflow"
	// UndoWorkflowIDPrefix starts the IDs of the UndoWorkflows of a run (UndoWorkflowID).
	UndoWorkflowIDPrefix = "undo/"
	// UndoAttemptInfix separates a run's workflow ID from the number of a later undo attempt
	// (UndoWorkflowID).
	UndoAttemptInfix = "/attempt-"
	// ErrTypeCompensateFailed is the retryable ApplicationError type of a Compensate that
	// returned an error (other than a NonRecoverableToolError, which fails for good with
	// ErrTypeNonRecoverable) or panicked.
	ErrTypeCompensateFailed = "CompensateFailed"
	// CompensateMaxAttempts bounds the attempts of one CompensateTool; past it the compensation
	// has failed for good.
	CompensateMaxAttempts = 5
)

// UndoWorkflowID is the workflow ID of undo attempt n (from 1) of the run runID:
// UndoWorkflowIDPrefix + runID for the first, then UndoWorkflowIDPrefix + runID +
// UndoAttemptInfix + n. Each attempt undoes what the earlier ones left (client.Undo): attempt
// n+1 starts only once attempt n has closed, and a second start of the same attempt attaches to
// it, so no effect is compensated twice.
func UndoWorkflowID(runID string, n int) string {
	if n <= 1 {
		return UndoWorkflowIDPrefix + runID
	}
	return UndoWorkflowIDPrefix + runID + UndoAttemptInfix + strconv.Itoa(n)
}

// UndoStatus says what undoing one effect did. The zero value is invalid.
type UndoStatus string

// The values of UndoStatus.
const (
	// UndoCompensated: the tool's Compensate succeeded.
	UndoCompensated UndoStatus = "compensated"
	// UndoSkipped: the tool declares no Compensate (or is not Unsafe); its effect stays.
	UndoSkipped UndoStatus = "skipped"
	// UndoNotFound: the call's outcome was unknown and the tool's Reconcile found no effect:
	// nothing to undo.
	UndoNotFound UndoStatus = "notFound"
	// UndoUnresolved: the call's outcome was unknown and the tool has no Reconcile to tell: it
	// is not compensated, and its effect may remain.
	UndoUnresolved UndoStatus = "unresolved"
	// UndoFailed: the compensation failed for good (a NonRecoverableToolError, its attempts
	// exhausted, or no worker has the tool); the undo stopped here.
	UndoFailed UndoStatus = "failed"
	// UndoRemaining: not attempted, because a compensation before it failed for good.
	UndoRemaining UndoStatus = "remaining"
)

// UndoEffect is one completed call whose effect an undo may compensate.
type UndoEffect struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	// IdempotencyKey is the call's idempotency key: its workflow ID, or for a call run inline
	// "<agent workflow ID>/call/<call ID>".
	IdempotencyKey string `json:"idempotencyKey"`
	// Output is the content of the result the model read.
	Output string `json:"output,omitempty"`
	// OutcomeUnknown marks a call of an Unsafe tool whose only attempt ended without a verdict:
	// the tool's Reconcile is asked first and the effect is compensated only when found (with
	// the reconciled output).
	OutcomeUnknown bool `json:"outcomeUnknown,omitempty"`
	// TaskQueue is where the effect's compensation runs: the queue the call's tool ran on as the
	// run recorded it (an inline call's ExecuteTool activity queue, a child or attached call's
	// ToolCallWorkflow queue, whose worker serves every tool of its set). Optional: default the
	// undo's own queue (workflows.UndoOptions.TaskQueue, UndoWorkflow's).
	TaskQueue string `json:"taskQueue,omitempty"`
}

// CompensateToolInput is the input of the CompensateTool activity.
type CompensateToolInput struct {
	Effect UndoEffect `json:"effect"`
	// Key is the compensation's idempotency key: toolcore.CompensationKey(Effect.IdempotencyKey).
	Key string `json:"key"`
}

// CompensateToolOutput is CompensateTool's result: UndoCompensated, UndoSkipped, UndoNotFound or
// UndoUnresolved. A compensation that fails is an error, never a result.
type CompensateToolOutput struct {
	Status UndoStatus `json:"status"`
}

// UndoWorkflowInput is the input of UndoWorkflow.
type UndoWorkflowInput struct {
	// RunID is the workflow ID of the run whose effects these are (client.Undo checks it when it
	// reads earlier attempts).
	RunID string `json:"runId"`
	// Effects in the order the calls completed; they are undone in reverse.
	Effects []UndoEffect `json:"effects"`
	// HeartbeatTimeout of each CompensateTool. Optional: default toolcore.DefaultHeartbeatTimeout (1 minute).
	HeartbeatTimeout time.Duration `json:"heartbeatTimeout,omitempty"`
	// Timeout bounds one CompensateTool attempt. Optional: default 1 minute.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// UndoStep is what happened to one effect.
type UndoStep struct {
	Effect UndoEffect `json:"effect"`
	Status UndoStatus `json:"status"`
	// Message says why a compensation failed. Optional.
	Message string `json:"message,omitempty"`
}

// UndoResult is the result of an undo (UndoWorkflow's, and workflows.Undo's): one step per
// effect, in the order they were undone (reverse completion order).
type UndoResult struct {
	Steps []UndoStep `json:"steps"`
}

// Remaining returns the effects that may still be in place although they should have been undone:
// the failed one, those after it and unresolved ones, in undo order.
func (r UndoResult) Remaining() []UndoEffect {
	var out []UndoEffect
	for _, s := range r.Steps {
		switch s.Status {
		case UndoFailed, UndoRemaining, UndoUnresolved:
			out = append(out, s.Effect)
		}
	}
	return out
}

// Count returns how many steps have status s.
func (r UndoResult) Count(s UndoStatus) int {
	n := 0
	for _, st := range r.Steps {
		if st.Status == s {
			n++
		}
	}
	return n
}
