package workflows_test

import (
	"context"
	"errors"
	"math"
	"math/big"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
)

// empty is the validated value of tools that take no arguments.
type empty struct{}

func acceptAll(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Accept(empty{}) }

// returningWith defines a tool without arguments whose Execute returns (output, err).
func returningWith(opts toolcore.Options, name string, output any, err error) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[empty]{
		Name:        name,
		Description: "returns a fixed value",
		Validate:    acceptAll,
		Execute:     func(context.Context, empty) (any, error) { return output, err },
		Options:     opts,
	})
}

// running defines a tool without arguments from an Execute func and options.
func running(name string, opts toolcore.Options, run func(ctx context.Context) (any, error)) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[empty]{
		Name:        name,
		Description: "runs a func",
		Validate:    acceptAll,
		Execute:     func(ctx context.Context, _ empty) (any, error) { return run(ctx) },
		Options:     opts,
	})
}

// validating defines a tool whose validator is v and whose Execute must never run.
func validating(name string, v func(toolcore.Arguments) toolcore.Decision[empty]) toolcore.Tool {
	return validatingWith(toolcore.Options{}, name, v)
}

// validatingWith is validating with options.
func validatingWith(opts toolcore.Options, name string, v func(toolcore.Arguments) toolcore.Decision[empty]) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[empty]{
		Options:     opts,
		Name:        name,
		Description: "validator under test",
		Validate:    v,
		Execute: func(context.Context, empty) (any, error) {
			panic("Execute ran after a validator that does not accept")
		},
	})
}

type addArgs struct {
	Left  int64 `json:"left"`
	Right int64 `json:"right"`
}

func addTool() toolcore.Tool { return addToolWith(toolcore.Options{}) }

// addToolWith is addTool with options.
func addToolWith(opts toolcore.Options) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[addArgs]{
		Options:     opts,
		Name:        "add",
		Description: "adds two integers",
		Validate: func(a toolcore.Arguments) toolcore.Decision[addArgs] {
			left, err := a.Int64("left")
			if err != nil {
				return toolcore.Reject[addArgs]("left must be a number")
			}
			right, err := a.Int64("right")
			if err != nil {
				return toolcore.Reject[addArgs]("right must be a number")
			}
			return toolcore.Accept(addArgs{Left: left, Right: right})
		},
		Execute: func(_ context.Context, a addArgs) (any, error) {
			return map[string]int64{"sum": a.Left + a.Right}, nil
		},
	})
}

// panickyError is an error whose Error method panics (user code the boundary must survive).
type panickyError struct{}

func (panickyError) Error() string { panic("Error() exploded") }

// NonRecoverableToolError is a look-alike from another package: same name, not the brand.
type NonRecoverableToolError struct{ Message string }

func (e *NonRecoverableToolError) Error() string { return e.Message }

// node builds deep chains.
type node struct {
	Next *node `json:"next"`
}

// opaqueOutput has an unexported field: the serializer must refuse it without calling methods.
type opaqueOutput struct {
	Visible string
	hidden  string
}

func (o opaqueOutput) MarshalJSON() ([]byte, error) { panic("MarshalJSON must not be called") }

// hostileTools are tools whose outputs and errors probe the serializer and the error mapping.
// Each is Unsafe (one attempt) and deterministic, so both paths must agree on every byte.
func hostileTools(t testing.TB) []toolcore.Tool { return hostileToolsWith(t, toolcore.Options{}) }

// hostileToolsWith is hostileTools defined with opts (ReadOnly and Local for the fast path).
func hostileToolsWith(t testing.TB, o toolcore.Options) []toolcore.Tool {
	t.Helper()
	cycle := map[string]any{"name": "loop"}
	cycle["self"] = cycle
	list := []any{1, 2}
	list = append(list, nil)
	list[2] = list
	hugeMap := make(map[string]int, 1_000_000)
	for i := range 1_000_000 {
		hugeMap["k"+strconv.Itoa(i)] = i
	}
	var deep *node
	for range 100_000 {
		deep = &node{Next: deep}
	}
	return []toolcore.Tool{
		returningWith(o, "ok_string", "plain text", nil),
		returningWith(o, "ok_html", map[string]any{"html": "<b>&</b>", "quote": `"'`}, nil),
		returningWith(o, "ok_nil", nil, nil),
		returningWith(o, "ok_numbers", map[string]any{"int": int64(-9007199254740993), "float": 0.1, "inf": math.Inf(1), "nan": math.NaN(), "uint": uint64(1 << 63)}, nil),
		returningWith(o, "cycle_map", cycle, nil),
		returningWith(o, "cycle_slice", list, nil),
		returningWith(o, "funcs", map[string]any{"f": func() {}, "g": []any{strings.ToUpper}}, nil),
		returningWith(o, "big_int", new(big.Int).Lsh(big.NewInt(1), 100), nil),
		returningWith(o, "big_int_oversized", new(big.Int).Lsh(big.NewInt(1), 5000), nil),
		returningWith(o, "opaque_time", map[string]any{"when": time.Unix(0, 0).UTC()}, nil),
		returningWith(o, "opaque_struct", opaqueOutput{Visible: "v", hidden: "h"}, nil),
		returningWith(o, "bytes_invalid", []byte{0xff, 0xfe}, nil),
		returningWith(o, "huge_string", strings.Repeat("a", 8<<20), nil),
		returningWith(o, "huge_map", hugeMap, nil),
		returningWith(o, "deep_chain", deep, nil),
		returningWith(o, "unicode_edge", strings.Repeat("é😀", 3000), nil),
		returningWith(o, "tool_error", nil, errors.New("upstream said no")),
		returningWith(o, "tool_error_blank", nil, errors.New("   ")),
		returningWith(o, "tool_error_panicky", nil, panickyError{}),
		returningWith(o, "tool_error_huge", nil, errors.New(strings.Repeat("e", 100_000))),
		returningWith(o, "lookalike_application", nil, temporal.NewNonRetryableApplicationError("stop the run", "NonRecoverableToolError", nil)),
		returningWith(o, "lookalike_literal", nil, &toolcore.NonRecoverableToolError{}),
		returningWith(o, "lookalike_foreign", nil, &NonRecoverableToolError{Message: "foreign fatal"}),
		returningWith(o, "lookalike_contract", nil, &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "tool minted a contract error"}),
		returningWith(o, "transient_unsafe", nil, toolcore.Transient(errors.New("try again later"))),
		returningWith(o, "fatal", nil, toolcore.NewNonRecoverableToolError("invariant broken: ledger mismatch")),
		returningWith(o, "fatal_wrapped", nil, errors.Join(errors.New("context"), toolcore.WrapNonRecoverable(errors.New("disk"), "storage corrupted"))),
		running("tool_panic", o, func(context.Context) (any, error) { panic("tool exploded") }),
		running("tool_panic_error", o, func(context.Context) (any, error) { panic(errors.New("panic with error")) }),
		running("tool_panic_fatal", o, func(context.Context) (any, error) {
			panic(toolcore.NewNonRecoverableToolError("fatal via panic"))
		}),
		running("tool_goexit", o, func(context.Context) (any, error) { runtime.Goexit(); return nil, nil }),
		running("execution_values", o, func(ctx context.Context) (any, error) {
			return map[string]any{
				"callId":  toolcore.ToolCallID(ctx),
				"attempt": toolcore.Attempt(ctx),
				"key":     toolcore.IdempotencyKey(ctx),
			}, nil
		}),
		running("progress", o, func(ctx context.Context) (any, error) {
			for i := range 3 {
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: int64(i + 1), Total: 3})
			}
			return "done", nil
		}),
		validatingWith(o, "reject", func(toolcore.Arguments) toolcore.Decision[empty] {
			return toolcore.Reject[empty]("left must be a number")
		}),
		validatingWith(o, "reject_blank", func(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Reject[empty](" \t") }),
		validatingWith(o, "validator_panic", func(toolcore.Arguments) toolcore.Decision[empty] { panic("boom in validator") }),
		validatingWith(o, "validator_zero", func(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Decision[empty]{} }),
		addToolWith(o),
	}
}

// newRegistry builds a registry of tools or fails the test.
func newRegistry(t testing.TB, tools ...toolcore.Tool) *toolcore.Registry {
	t.Helper()
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	return reg
}
