package faults

import (
	"context"
	"fmt"
	"path/filepath"

	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// ToolBooked is Unsafe and books a slot (records run and effect like ToolUnsafe); its Compensate
// cancels the booking: it records KindUndoRun, then KindUndo unless the ledger already holds a
// KindUndo under the compensation's key (a compensation applies once per key), then waits for
// the gate file UndoGate(call ID) before it returns: a worker killed there has undone the booking
// without reporting it.
const ToolBooked = "effect_booked"

// Ledger kinds of ToolBooked's compensation. Their Key is the compensation's key.
const (
	KindUndoRun Kind = "undo-run"
	KindUndo    Kind = "undo"
)

// UndoGate is the gate file the compensation of call waits for.
func UndoGate(call string) string { return "undo-" + call }

// BookingAgentName is the workflow type of BookingAgent, which faultworker registers.
const BookingAgentName = "faults.BookingAgent"

// BookingInput is BookingAgent's input.
type BookingInput struct {
	// Bookings are the call IDs of the ToolBooked calls, run one after the other.
	Bookings []string `json:"bookings"`
	// Failing is the call ID of a ToolUnsafe call that fails (OutcomeError) after them.
	Failing string `json:"failing"`
	// TaskQueue of the calls and compensations.
	TaskQueue string `json:"taskQueue"`
}

// BookingAgent is an agent run that books, fails and undoes: it runs the bookings as child calls,
// recording their effects, then a call that ends with an error result, and then undoes every
// effect it recorded (workflows.Effects.Undo) and returns the undo's result.
func BookingAgent(ctx workflow.Context, in BookingInput) (wire.UndoResult, error) {
	effects := &workflows.Effects{}
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: in.TaskQueue, Effects: effects})
	for _, id := range in.Bookings {
		call, err := toolcore.NewToolCall(id, ToolBooked, []byte(`{}`))
		if err != nil {
			return wire.UndoResult{}, err
		}
		if _, err := workflows.ExecuteToolCall(ctx, call); err != nil {
			return wire.UndoResult{}, err
		}
	}
	failing, err := toolcore.NewToolCall(in.Failing, ToolUnsafe, []byte(`{"outcome":"error"}`))
	if err != nil {
		return wire.UndoResult{}, err
	}
	res, err := workflows.ExecuteToolCall(ctx, failing)
	if err != nil {
		return wire.UndoResult{}, err
	}
	if !res.IsError() {
		return wire.UndoResult{}, fmt.Errorf("call %s succeeded; the agent wanted it to fail", in.Failing)
	}
	return effects.Undo(ctx, workflows.UndoOptions{TaskQueue: in.TaskQueue, HeartbeatTimeout: HeartbeatTimeout, Timeout: AttemptTimeout})
}

// compensate cancels a booking once per compensation key (see ToolBooked).
func (t *tools) compensate(ctx context.Context, c toolcore.Compensation) error {
	if err := t.record(ctx, KindUndoRun); err != nil {
		return err
	}
	records, err := ReadLedger(t.cfg.Ledger)
	if err != nil {
		return err
	}
	done := false
	for _, r := range records {
		done = done || (r.Kind == KindUndo && r.Key == c.Key)
	}
	if !done {
		if err := t.record(ctx, KindUndo); err != nil {
			return err
		}
	}
	return waitGate(ctx, filepath.Join(t.cfg.GateDir, UndoGate(c.ToolCallID)), t.cfg.GatePoll)
}

// booked defines ToolBooked.
func (t *tools) booked() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[Args]{
		Name:        ToolBooked,
		Description: "Books a slot (a ledger effect); its compensation cancels the booking.",
		Validate:    validate,
		Execute:     t.effect,
		Compensate:  t.compensate,
		Options:     toolcore.Options{SideEffect: toolcore.Unsafe, HeartbeatTimeout: HeartbeatTimeout, Timeout: AttemptTimeout},
	})
}
