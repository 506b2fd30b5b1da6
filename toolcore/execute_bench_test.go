package toolcore_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/toolcore"
)

// benchArgs are the validated arguments of the benchmarked tool.
type benchArgs struct {
	Left  int64 `json:"left"`
	Right int64 `json:"right"`
}

// benchAdd is the tool's function, also called directly as the baseline.
func benchAdd(_ context.Context, a benchArgs) (any, error) {
	return map[string]any{"sum": a.Left + a.Right}, nil
}

// BenchmarkExecute measures the in-process boundary around a trivial tool: "direct" calls the
// tool's function, "steps" runs Validate, Invoke and Complete on the caller's goroutine (what the
// durable path composes), "Execute" is the full executor (its own goroutine, cancellation checks).
//
//	go test -run '^$' -bench BenchmarkExecute -benchmem -count 6 ./toolcore
func BenchmarkExecute(b *testing.B) {
	tool := toolcore.MustDefine(toolcore.Definition[benchArgs]{
		Name:        "add",
		Description: "Add two integers.",
		Validate: func(args toolcore.Arguments) toolcore.Decision[benchArgs] {
			left, err := args.Int64("left")
			if err != nil {
				return toolcore.Reject[benchArgs]("left must be an integer")
			}
			right, err := args.Int64("right")
			if err != nil {
				return toolcore.Reject[benchArgs]("right must be an integer")
			}
			return toolcore.Accept(benchArgs{Left: left, Right: right})
		},
		Execute: benchAdd,
	})
	registry, err := toolcore.NewRegistry(tool)
	if err != nil {
		b.Fatal(err)
	}
	call, err := toolcore.NewToolCall("call-add-1", "add", []byte(`{"left":20,"right":22}`))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = benchAdd(ctx, benchArgs{Left: 20, Right: 22}) // b.Loop keeps the call alive
		}
	})
	b.Run("steps", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			accepted, rejected, ok := tool.Validate(call)
			if !ok {
				b.Fatal(rejected.Content())
			}
			out, err := tool.Invoke(ctx, accepted)
			if res, err := toolcore.Complete(call, out, err); err != nil || res.IsError() {
				b.Fatal(err, res.Content())
			}
		}
	})
	b.Run("Execute", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, err := toolcore.Execute(ctx, registry, call); err != nil || res.IsError() {
				b.Fatal(err, res.Content())
			}
		}
	})
}
