package toolcore

import (
	"context"
	"encoding/json"
	"time"
)

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
	// Attempt counts from 1. Optional: default 1.
	Attempt int
	// IdempotencyKey is stable across attempts of one call.
	IdempotencyKey string
	// OnProgress receives progress reports, synchronously on the tool's goroutine; it must return
	// promptly (store the latest report, signal without blocking). A panic in it is recovered and
	// the report dropped. Optional: default discards them.
	OnProgress func(Progress)
	// OnCheckpoint receives each checkpoint the tool records (JSON, at most MaxCheckpointBytes),
	// synchronously on the tool's goroutine; like OnProgress it must return promptly. Optional:
	// default none, Checkpoint does nothing.
	OnCheckpoint func(json.RawMessage)
	// OnLog receives the tool's log messages (Log), bounded and redacted, synchronously on the
	// tool's goroutine; like OnProgress it must return promptly. Optional: default discards them.
	OnLog func(LogMessage)
	// LastCheckpoint is the last checkpoint an earlier attempt recorded (LastCheckpoint returns
	// it). Optional: default none.
	LastCheckpoint json.RawMessage
	// Principal is whom the call runs for (CallPrincipal returns a copy). Optional: default
	// none.
	Principal *Principal
	// Run names the agent run the call belongs to (CallRun returns it): calls with the same Run
	// share what a tool keeps per run, such as a sandbox workspace. Optional: default none.
	Run string
	// Secrets are the tool's secrets and access tokens the executor resolved for this attempt
	// (Secret and AccessToken return them; ResolveSecrets builds them). The executor redacts
	// them from what the attempt reports. Optional: default none.
	Secrets *Secrets
	// InputResponses are the answers of the call's earlier rounds of questions, by key (Ask
	// returns them). Optional: default none.
	InputResponses map[string]json.RawMessage
	// Input answers a question at once (the in-process executor's ExecuteOptions.Input).
	// Optional: default none; then Ask records the question in Asking.
	Input func(ctx context.Context, key string, req InputRequest) (json.RawMessage, error)
	// Asking collects the attempt's unanswered questions (the durable path). Optional: default
	// none; with neither Input nor Asking, Ask fails (nobody to ask).
	Asking *Asking
	// Callbacks mints callback URLs (Callback). Optional: default none (Callback fails).
	Callbacks CallbackMinter
	// InputTimeout is the tool's Options.InputWait: how long an answer may take, and a
	// callback URL lives.
	InputTimeout time.Duration

	logs *logCount // the messages Log passed on (set by WithExecution)
}

// executionKey is the context key of the *Execution of a running tool.
type executionKey struct{}

// WithExecution returns ctx carrying a copy of e; executors call it, tools read it through the
// accessors.
func WithExecution(ctx context.Context, e Execution) context.Context {
	if e.Attempt < 1 {
		e.Attempt = 1
	}
	e.logs = new(logCount) // each execution has its own MaxLogMessages
	return context.WithValue(ctx, executionKey{}, &e)
}

func executionFrom(ctx context.Context) *Execution {
	e, _ := ctx.Value(executionKey{}).(*Execution)
	return e
}

// ToolCallID returns the id of the call being executed, or "".
func ToolCallID(ctx context.Context) string {
	if e := executionFrom(ctx); e != nil {
		return e.ToolCallID
	}
	return ""
}

// ToolName returns the name of the tool being executed, or "".
func ToolName(ctx context.Context) string {
	if e := executionFrom(ctx); e != nil {
		return e.ToolName
	}
	return ""
}

// Attempt returns the attempt number (from 1), or 0 outside an execution.
func Attempt(ctx context.Context) int {
	if e := executionFrom(ctx); e != nil {
		return e.Attempt
	}
	return 0
}

// IdempotencyKey returns the key that is stable across attempts of this call, or "".
func IdempotencyKey(ctx context.Context) string {
	if e := executionFrom(ctx); e != nil {
		return e.IdempotencyKey
	}
	return ""
}

// ReportProgress reports p; it never blocks the tool (as long as the executor's OnProgress keeps
// its promise to return promptly; the in-process executor delivers to its caller asynchronously)
// and is a no-op outside an execution. A panicking OnProgress is recovered.
func ReportProgress(ctx context.Context, p Progress) {
	e := executionFrom(ctx)
	if e == nil || e.OnProgress == nil {
		return
	}
	defer func() { _ = recover() }()
	e.OnProgress(p)
}
