package toolcore_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/toolcore"
)

// tenFields is the 10-field argument type of the schema validation benchmark.
type tenFields = toolcore.TenFields

const tenFieldsArgs = `{"query":"durable tools","limit":20,"offset":40,"sort":"date","lang":"en","exact":false,"score":0.5,"tags":["go","temporal"],"owner":"ops","archived":true}`

func benchValidate(b *testing.B, tool toolcore.Tool, args string, wantOK bool) {
	call, err := toolcore.NewToolCall("bench-1", tool.Name(), []byte(args))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, res, ok := tool.Validate(call)
		if ok != wantOK {
			b.Fatalf("ok=%v: %s", ok, res.Content())
		}
	}
}

func tenFieldsTool(b *testing.B, validate func(toolcore.Arguments) toolcore.Decision[tenFields]) toolcore.Tool {
	tool, err := toolcore.Define(toolcore.Definition[tenFields]{
		Name: "search", Description: "Search.", Validate: validate,
		Execute: func(context.Context, tenFields) (any, error) { return nil, nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	return tool
}

// BenchmarkSchemaValidate is the schema validator (nil Validate) on a 10-field schema: schema
// check, strict decode into the argument type, and the accepted value's JSON round trip.
func BenchmarkSchemaValidate(b *testing.B) {
	b.Run("accepted", func(b *testing.B) { benchValidate(b, tenFieldsTool(b, nil), tenFieldsArgs, true) })
	b.Run("rejected", func(b *testing.B) {
		benchValidate(b, tenFieldsTool(b, nil), `{"query":"","limit":"20","sort":"size","exact":1,"score":"x","zz":1}`, false)
	})
	// The same type decoded by a hand-written validator (Arguments.Decode, no schema): the baseline.
	b.Run("decode-only", func(b *testing.B) {
		benchValidate(b, tenFieldsTool(b, func(a toolcore.Arguments) toolcore.Decision[tenFields] {
			var v tenFields
			if err := a.Decode(&v); err != nil {
				return toolcore.Reject[tenFields](err.Error())
			}
			return toolcore.Accept(v)
		}), tenFieldsArgs, true)
	})
}

// BenchmarkDefineWithSchema is Define with a generated, compiled 10-field schema (once per tool
// per worker start).
func BenchmarkDefineWithSchema(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		tenFieldsTool(b, nil)
	}
}
