package client

import (
	"context"

	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/wire"
)

type priorityKey struct{}

// WithPriority returns a context whose Execute, Start, StartRun and ExecuteRound start their calls
// with p: the priority (1 first .. 5 last) and fairness key the server's matching dispatches the
// call's workflow task and its tool's activity by (docs/flow-control.md). It is recorded in the
// call's history (the start event) and shown by Status and `toolgate status`. A call that attaches
// to an existing run keeps that run's priority.
func WithPriority(ctx context.Context, p wire.Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFrom returns the priority WithPriority put on ctx, or the zero Priority.
func PriorityFrom(ctx context.Context) wire.Priority {
	p, _ := ctx.Value(priorityKey{}).(wire.Priority)
	return p
}

// sdkPriority converts p to the SDK's Priority.
func sdkPriority(p wire.Priority) temporal.Priority {
	return temporal.Priority{PriorityKey: p.Level, FairnessKey: p.FairnessKey, FairnessWeight: p.FairnessWeight}
}
