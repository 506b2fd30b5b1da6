package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
)

// Errors of Ready.
var (
	// ErrNotStarted: Start has not run, or did not start every SDK worker.
	ErrNotStarted = errors.New("worker not started")
	// ErrStopping: Stop has begun; the worker drains and takes no new tasks.
	ErrStopping = errors.New("worker stopping")
)

// readyTimeout bounds Ready's health RPC when ctx allows longer.
const readyTimeout = 5 * time.Second

// Ready reports whether the worker serves: nil once Start has started every SDK worker and while the
// Temporal frontend answers the client's health check (client.CheckHealth, one RPC bounded by
// ctx and 5 s); ErrNotStarted before Start; ErrStopping from the moment Stop begins, through
// the whole drain, without asking the frontend. Ready does not cache: a probe that runs often
// reuses its answers (toolgate's /readyz for 2 s).
func (w *Worker) Ready(ctx context.Context) error {
	if w.stopping.Load() {
		return ErrStopping
	}
	if !w.polling.Load() {
		return ErrNotStarted
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if _, err := w.client.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return fmt.Errorf("check Temporal frontend health: %w", err)
	}
	if w.stopping.Load() { // Stop began during the RPC
		return ErrStopping
	}
	return nil
}
