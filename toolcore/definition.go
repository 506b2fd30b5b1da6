package toolcore

import (
	"context"
	"time"
)

// SideEffect says what a repeated execution costs. The zero value is Unsafe.
type SideEffect uint8

const (
	// Unsafe tools run at most once: a lost worker or a timeout ends the call with an
	// outcome-unknown TOOL_EXECUTION_FAILED, never a silent second run.
	Unsafe SideEffect = iota
	// Idempotent tools may repeat: the same idempotency key gives the same effect.
	Idempotent
	// ReadOnly tools have no effect.
	ReadOnly
)

// String returns "unsafe", "idempotent" or "readOnly".
func (s SideEffect) String() string { panic("TODO") }

// Options are the execution options the durable path uses. They work at their zero value.
type Options struct {
	// SideEffect. Optional: default Unsafe.
	SideEffect SideEffect
	// Timeout bounds one attempt (start to close). Optional: default 1 minute.
	Timeout time.Duration
	// HeartbeatTimeout bounds the silence of a running attempt; cancellation and worker loss are
	// noticed within it. Optional: default 10 seconds.
	HeartbeatTimeout time.Duration
	// MaxAttempts bounds attempts of ReadOnly and Idempotent tools. Optional: default 3. Unsafe
	// tools always have exactly one attempt.
	MaxAttempts int
	// TaskQueue runs the tool's activity on another queue. Optional: default the worker's queue.
	TaskQueue string
}

// Definition is what a tool author fills in. A is the validated argument type: it must survive a
// JSON round trip, because on the durable path it crosses from workflow to activity as JSON.
type Definition[A any] struct {
	// Name matches ^[A-Za-z0-9_-]{1,64}$.
	Name string
	// Description is non-blank text for the model.
	Description string
	// Validate is synchronous and pure: it runs in deterministic workflow code. It must not block,
	// start goroutines, do I/O or read the clock.
	Validate func(Arguments) Decision[A]
	// Execute runs the effect with the validated value. ctx carries cancellation and the
	// execution values (ToolCallID, Attempt, IdempotencyKey, ReportProgress).
	Execute func(ctx context.Context, args A) (any, error)
	// Options for the durable path.
	Options Options
}

// Tool is an immutable, defined tool. The zero value is invalid (a nil entry in a batch).
type Tool struct {
	d *tool
}

type tool struct{}

// Define copies d once into an immutable Tool, or returns a *ContractError with
// CodeInvalidToolDefinition.
func Define[A any](d Definition[A]) (Tool, error) { panic("TODO") }

// MustDefine is Define for package-level tool sets; it panics on an invalid definition.
func MustDefine[A any](d Definition[A]) Tool { panic("TODO") }

func (t Tool) Name() string        { panic("TODO") }
func (t Tool) Description() string { panic("TODO") }

// Options returns the tool's options with defaults applied.
func (t Tool) Options() Options { panic("TODO") }
