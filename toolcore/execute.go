package toolcore

import "context"

// ExecuteOptions tune the in-process executor. They work at their zero value.
type ExecuteOptions struct {
	// OnProgress receives the tool's progress reports. Optional: default discards them.
	OnProgress func(Progress)
	// IdempotencyKey. Optional: default "toolcall-" + the call id.
	IdempotencyKey string
}

// Execute runs call in process: snapshot check, look up, validate, run, serialize, link, with
// cancellation checked between every step and while the tool runs. When cancellation wins it
// returns context.Cause(ctx) and no result, even if the tool ignores ctx (its goroutine is left to
// finish and its result discarded).
func Execute(ctx context.Context, r *Registry, call ToolCall) (Result, error) {
	return ExecuteWith(ctx, r, call, ExecuteOptions{})
}

// ExecuteWith is Execute with options.
func ExecuteWith(ctx context.Context, r *Registry, call ToolCall, opts ExecuteOptions) (Result, error) {
	panic("TODO")
}
