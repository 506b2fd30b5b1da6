package toolcore

import (
	"context"
	"errors"
)

// CanReconcile reports whether the tool declares a Reconcile.
func (t Tool) CanReconcile() bool { return t.d != nil && t.d.reconcile != nil }

// Reconcile runs the tool's Reconcile with ctx and idempotencyKey, recovering panics (returned
// as a *PanicError). Without a Reconcile it reports not found. Like Invoke, it neither adds the
// execution values to ctx nor checks cancellation.
func (t Tool) Reconcile(ctx context.Context, idempotencyKey string) (output any, found bool, err error) {
	if t.d == nil {
		return nil, false, errors.New("reconcile tool: " + msgToolNotDefined)
	}
	if t.d.reconcile == nil {
		return nil, false, nil
	}
	defer func() {
		if v := recover(); v != nil {
			output, found, err = nil, false, newPanicError(v, "reconcile panicked")
		}
	}()
	return t.d.reconcile(ctx, idempotencyKey)
}
