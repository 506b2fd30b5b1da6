package toolcore

import (
	"context"
	"errors"
)

// Compensation is what a tool's Compensate receives: the call whose effect it undoes, as it was
// recorded when the call completed.
type Compensation struct {
	// ToolCallID and ToolName name the original call.
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	// IdempotencyKey is the original call's idempotency key: the key Execute saw (and Reconcile
	// looks effects up by).
	IdempotencyKey string `json:"idempotencyKey"`
	// Key is the compensation's own idempotency key, stable across its attempts and replays:
	// CompensationKey(IdempotencyKey). A compensation is retried, so it must apply at most once
	// per Key (e.g. pass it to the downstream system as its idempotency key).
	Key string `json:"key"`
	// Output is the content of the result the model read for the original call (the tool's output
	// serialized as JSON text, or its text).
	Output string `json:"output"`
}

// CompensationKey is the idempotency key of the compensation of the call with idempotencyKey:
// idempotencyKey + "/undo".
func CompensationKey(idempotencyKey string) string { return idempotencyKey + "/undo" }

// HasCompensation reports whether the tool declares a Compensate.
func (t Tool) HasCompensation() bool { return t.d != nil && t.d.compensate != nil }

// Compensate runs the tool's Compensate with ctx and c, recovering panics (returned as a
// *PanicError). Without a Compensate it returns an error. Like Invoke, it neither adds the
// execution values to ctx nor checks cancellation.
func (t Tool) Compensate(ctx context.Context, c Compensation) (err error) {
	if t.d == nil {
		return errors.New("compensate tool: " + msgToolNotDefined)
	}
	if t.d.compensate == nil {
		return errors.New("compensate tool: tool " + quoteShort(t.d.name) + " declares no Compensate")
	}
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(v, "compensate panicked")
		}
	}()
	return t.d.compensate(ctx, c)
}
