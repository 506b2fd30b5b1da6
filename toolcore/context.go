package toolcore

import "context"

// Progress is what a running tool reports. The durable path turns the latest report into the
// activity's heartbeat details.
type Progress struct {
	Completed int64  `json:"completed"`
	Total     int64  `json:"total,omitempty"`
	Message   string `json:"message,omitempty"`
}

// Execution is what an executor tells a running tool besides cancellation.
type Execution struct {
	ToolCallID string
	ToolName   string
	// Attempt counts from 1.
	Attempt int
	// IdempotencyKey is stable across attempts of one call.
	IdempotencyKey string
	// OnProgress receives progress reports. Optional: default discards them.
	OnProgress func(Progress)
}

// WithExecution returns ctx carrying e; executors call it, tools read it through the accessors.
func WithExecution(ctx context.Context, e Execution) context.Context { panic("TODO") }

// ToolCallID returns the id of the call being executed, or "".
func ToolCallID(ctx context.Context) string { panic("TODO") }

// Attempt returns the attempt number (from 1), or 0 outside an execution.
func Attempt(ctx context.Context) int { panic("TODO") }

// IdempotencyKey returns the key that is stable across attempts of this call, or "".
func IdempotencyKey(ctx context.Context) string { panic("TODO") }

// ReportProgress reports p; it never blocks the tool and is a no-op outside an execution.
func ReportProgress(ctx context.Context, p Progress) { panic("TODO") }
