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

// EffectFailed is what a Reconcile returns as its error when it found that the lost attempt ran
// and ended in err (a remote job that failed): the call's result is then what Execute returning
// err would have made of it (Complete(call, nil, err): an error result, a genuine
// NonRecoverableToolError fails the call), whatever found says. Any other error of Reconcile
// means it could not tell, and is retried. A nil err is returned as nil.
func EffectFailed(err error) error {
	if err == nil {
		return nil
	}
	return &effectFailedError{err: err}
}

// EffectFailure returns the err a Reconcile wrapped with EffectFailed, and whether recErr is such
// an error. It is a type assertion on recErr itself, not a walk of its chain (a tool's Unwrap
// and As methods never run unguarded).
func EffectFailure(recErr error) (err error, ok bool) {
	e, ok := recErr.(*effectFailedError)
	if !ok {
		return nil, false
	}
	return e.err, true
}

// effectFailedError marks the outcome a Reconcile found: the effect ended in err.
type effectFailedError struct{ err error }

func (e *effectFailedError) Error() string {
	return "the lost attempt's effect failed: " + ErrorText(e.err)
}
func (e *effectFailedError) Unwrap() error { return e.err }
