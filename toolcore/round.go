package toolcore

import (
	"errors"
	"fmt"
)

// OutcomeKind says how one call of a round ended. The zero value is invalid.
type OutcomeKind uint8

const (
	_ OutcomeKind = iota
	// OutcomeResult: the call completed with a linked Result (success or error result); give it
	// to the model.
	OutcomeResult
	// OutcomeCanceled: the call was canceled (the round's context, or someone else) and its tool
	// has stopped; no result.
	OutcomeCanceled
	// OutcomeFatal: the tool raised a genuine NonRecoverableToolError (Outcome.Err); the agent
	// run must stop.
	OutcomeFatal
	// OutcomeContractError: the call is not a valid tool call (INVALID_TOOL_CALL, Outcome.Err is
	// a *ContractError); nothing was started for it.
	OutcomeContractError
	// OutcomeFailed: the call has no outcome of the kinds above: its ID is used by a different
	// call, it was terminated or timed out, or the server could not be reached (Outcome.Err).
	OutcomeFailed
	// OutcomeNotStarted: the round stopped (a fatal error, or its context ended) before this
	// call started; nothing ran, so running it again is safe.
	OutcomeNotStarted
)

var outcomeKindNames = [...]string{
	OutcomeResult:        "result",
	OutcomeCanceled:      "canceled",
	OutcomeFatal:         "fatal",
	OutcomeContractError: "contractError",
	OutcomeFailed:        "failed",
	OutcomeNotStarted:    "notStarted",
}

// String returns "result", "canceled", "fatal", "contractError", "failed" or "notStarted"; an
// invalid kind is "OutcomeKind(<n>)".
func (k OutcomeKind) String() string {
	if int(k) < len(outcomeKindNames) && outcomeKindNames[k] != "" {
		return outcomeKindNames[k]
	}
	return fmt.Sprintf("OutcomeKind(%d)", uint8(k))
}

// ErrRoundStopped is the Err of an OutcomeNotStarted outcome, wrapped with the reason.
var ErrRoundStopped = errors.New("round stopped before the call started")

// Outcome is how one call of a round ended, linked to the call by Index and CallID.
type Outcome struct {
	// Index is the call's position in the round.
	Index int
	// CallID and ToolName are the call's ("" for a call that is the zero ToolCall).
	CallID   string
	ToolName string
	// Kind says which of Result and Err holds the outcome.
	Kind OutcomeKind
	// Result is the linked result when Kind is OutcomeResult, zero otherwise.
	Result Result
	// Err is nil for OutcomeResult; otherwise: the cancellation cause (OutcomeCanceled), the
	// *NonRecoverableToolError (OutcomeFatal), the *ContractError (OutcomeContractError), the
	// error (OutcomeFailed), or ErrRoundStopped wrapped with why (OutcomeNotStarted).
	Err error
}

// RoundPlan is the order in which a round runs its calls: Steps run one after the other, the
// calls of one step (indices into the round) in parallel. Invalid calls are in no step: their
// outcome is already in Invalid.
type RoundPlan struct {
	Steps   [][]int
	Invalid []Outcome
}

// RoundOptions configure one round of calls, run by client.(*Client).ExecuteRound or, from
// workflow code, workflows.ExecuteRound and (*workflows.Inline).ExecuteRound. They work at their
// zero value.
type RoundOptions struct {
	// Sequential runs every call of the round alone, one after the other in source order.
	// Optional: default false (parallel, except calls of tools whose Options.Sequential is set).
	Sequential bool
	// Tools is the tool set the worker runs; the round reads only each tool's
	// Options.Sequential from it. From workflow code it must be the same on every replay (a
	// change that reorders a round is a non-determinism error): pin it like the worker's
	// registry. Optional: default nil (no tool requires sequential execution).
	Tools *Registry
}

// PlanRound orders a round of calls. A call is invalid (OutcomeContractError, INVALID_TOOL_CALL)
// when it is the zero ToolCall or repeats the ID of an earlier call of the round (one call ID
// names one execution). A call is sequential when sequential is true or its tool (looked up in
// tools, which may be nil) has Options.Sequential; a sequential call is a step of its own, and
// the calls between two sequential calls form one step. Unknown tools are not sequential: their
// calls end TOOL_NOT_FOUND without running anything.
func PlanRound(calls []ToolCall, tools *Registry, sequential bool) RoundPlan {
	var plan RoundPlan
	seen := make(map[string]int, len(calls))
	var batch []int
	flush := func() {
		if len(batch) > 0 {
			plan.Steps = append(plan.Steps, batch)
			batch = nil
		}
	}
	for i, call := range calls {
		if call.IsZero() {
			plan.Invalid = append(plan.Invalid, InvalidOutcome(i, call,
				contractErrorf(CodeInvalidToolCall, "call %d of the round is the zero tool call", i)))
			continue
		}
		if first, dup := seen[call.ID()]; dup {
			plan.Invalid = append(plan.Invalid, InvalidOutcome(i, call,
				contractErrorf(CodeInvalidToolCall, "call %d of the round repeats the ID %s of call %d", i, quoteShort(call.ID()), first)))
			continue
		}
		seen[call.ID()] = i
		tool, _ := tools.Get(call.Name())
		if sequential || tool.Options().Sequential {
			flush()
			plan.Steps = append(plan.Steps, []int{i})
			continue
		}
		batch = append(batch, i)
	}
	flush()
	return plan
}

// InvalidOutcome is the OutcomeContractError outcome of call i.
func InvalidOutcome(i int, call ToolCall, err *ContractError) Outcome {
	return Outcome{Index: i, CallID: call.ID(), ToolName: call.Name(), Kind: OutcomeContractError, Err: err}
}

// NotStartedOutcome is the OutcomeNotStarted outcome of call i; why says what stopped the round.
func NotStartedOutcome(i int, call ToolCall, why error) Outcome {
	return Outcome{Index: i, CallID: call.ID(), ToolName: call.Name(), Kind: OutcomeNotStarted,
		Err: fmt.Errorf("%w: %w", ErrRoundStopped, why)}
}

// RoundError returns what a round returns beside its outcomes: the first fatal error in source
// order (a genuine *NonRecoverableToolError: the agent run must stop), joined with stopped (the
// round context's cause, or nil).
func RoundError(outcomes []Outcome, stopped error) error {
	for _, o := range outcomes {
		if o.Kind != OutcomeFatal {
			continue
		}
		if stopped == nil {
			return o.Err // the genuine error itself, as Execute returns it
		}
		return errors.Join(o.Err, stopped)
	}
	return stopped
}

// FatalStop returns why a round stops after a step with these outcomes: "call <i> (<callId>)
// raised a fatal error" for the first fatal outcome in source order, or nil. It does not wrap
// the fatal error, so AsNonRecoverable finds it only in the fatal call's own outcome.
func FatalStop(outcomes []Outcome) error {
	for _, o := range outcomes {
		if o.Kind == OutcomeFatal {
			return fmt.Errorf("call %d (%s) raised a fatal error", o.Index, quoteShort(o.CallID))
		}
	}
	return nil
}
