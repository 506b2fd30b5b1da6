package activities

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// ErrDrained is the cause of an attempt's context canceled by Drain.Interrupt: its worker is
// stopping gracefully and the stop timeout has passed.
var ErrDrained = errors.New("the worker is stopping (drain) and its stop timeout has passed")

// Drain interrupts the attempts still running when a worker's graceful stop times out, so each
// is reported to the server at once (while the worker still answers) instead of being left
// started until its heartbeat timeout. The zero value is not usable: use NewDrain.
type Drain struct {
	mu          sync.Mutex
	interrupted bool
	next        uint64
	running     map[uint64]context.CancelCauseFunc
}

// NewDrain returns a Drain with nothing running.
func NewDrain() *Drain { return &Drain{running: make(map[uint64]context.CancelCauseFunc)} }

// Interrupt cancels every running attempt's context with ErrDrained and every attempt that
// starts afterwards at once. It returns how many attempts were running.
func (d *Drain) Interrupt() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.interrupted = true
	for _, cancel := range d.running {
		cancel(ErrDrained)
	}
	return len(d.running)
}

// Running returns how many attempts are running (for the worker's stop log).
func (d *Drain) Running() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.running)
}

// track derives an attempt's context that Interrupt cancels; end must be called when the attempt
// returns. A nil Drain tracks nothing.
func (d *Drain) track(ctx context.Context) (context.Context, func()) {
	if d == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.interrupted {
		cancel(ErrDrained)
		return ctx, func() {}
	}
	id := d.next
	d.next++
	d.running[id] = cancel
	return ctx, func() {
		d.mu.Lock()
		delete(d.running, id)
		d.mu.Unlock()
		cancel(nil)
	}
}

// DrainedAttempt is the details of an ErrTypeDrained failure: what the workflow needs to
// schedule the call again as if the attempt had not happened.
type DrainedAttempt struct {
	// Attempts is how many attempts of the call had ended before the drained one (across every
	// ExecuteTool the call scheduled): the next schedule continues from there.
	Attempts int `json:"attempts"`
	// Checkpoint is the drained attempt's last checkpoint, handed to the next attempt.
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
	// ProgressSeq is the drained attempt's last progress sequence number, so a reader's numbers
	// keep growing across the schedules.
	ProgressSeq int64 `json:"progressSeq,omitempty"`
}

// gracefulStop reports whether cause ends an attempt because its worker stops gracefully: a
// Drain interrupted it, or the SDK's own stop timeout passed (sdk worker.ErrWorkerShutdown).
func gracefulStop(cause error) bool {
	return errors.Is(cause, ErrDrained) || errors.Is(cause, sdkworker.ErrWorkerShutdown)
}

// drainedOr returns the ErrTypeDrained error of the attempt whose context ended, when a graceful
// stop ended it and it may run again (runAgain); otherwise err. The details carry what the next
// ExecuteTool continues from: the attempts spent before this one (spent before this ExecuteTool
// plus this one's earlier attempts), the checkpoint cp and the progress number seq. Benign: a
// drain is an operation, not a fault of the tool or the worker.
func drainedOr(ctx context.Context, err error, runAgain bool, spent int, cp json.RawMessage, seq int64) error {
	cause := context.Cause(ctx)
	if !runAgain || !gracefulStop(cause) {
		return err
	}
	d := DrainedAttempt{Attempts: spent + int(activity.GetInfo(ctx).Attempt) - 1, Checkpoint: cp, ProgressSeq: seq}
	return temporal.NewApplicationErrorWithOptions("the worker stopped gracefully and interrupted the attempt ("+toolcore.ErrorText(cause)+"); it runs again on another worker",
		wire.ErrTypeDrained, temporal.ApplicationErrorOptions{Details: []any{d}, Category: temporal.ApplicationErrorCategoryBenign})
}

// spent is the number of the call's attempts before the ExecuteTool that carries r (0 for none).
func (r *DrainedAttempt) spent() int {
	if r == nil {
		return 0
	}
	return max(r.Attempts, 0)
}

// progressSeq is the drained attempt's progress sequence number (0 for none).
func (r *DrainedAttempt) progressSeq() int64 {
	if r == nil {
		return 0
	}
	return r.ProgressSeq
}
