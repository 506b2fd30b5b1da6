package toolcore

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TenFields is the 10-field argument type of the schema benchmarks, internal and external
// (exported from this test file for schema_bench_test.go).
type TenFields struct {
	Query    string      `json:"query" jsonschema:"description=Search text,minLength=1"`
	Limit    int64       `json:"limit" jsonschema:"description=Most results,minimum=1,maximum=100"`
	Offset   int64       `json:"offset,omitempty" jsonschema:"minimum=0"`
	Sort     string      `json:"sort" jsonschema:"enum=relevance,enum=date,enum=title"`
	Lang     string      `json:"lang,omitempty" jsonschema:"pattern=^[a-z]{2}$"`
	Exact    bool        `json:"exact"`
	Score    json.Number `json:"score" jsonschema:"description=Minimum score"`
	Tags     []string    `json:"tags,omitempty" jsonschema:"maxItems=10"`
	Owner    string      `json:"owner,omitempty"`
	Archived bool        `json:"archived,omitempty"`
}

// BenchmarkSchemaCheck is the schema check alone (no decode into the argument type, no round
// trip) on a 10-field schema: the cost the schema adds to a call's validation.
func BenchmarkSchemaCheck(b *testing.B) {
	raw, err := generateSchema(reflect.TypeFor[TenFields]())
	if err != nil {
		b.Fatal(err)
	}
	s, err := compileSchema(raw, "input schema")
	if err != nil {
		b.Fatal(err)
	}
	var args Arguments
	if err := args.UnmarshalJSON([]byte(`{"query":"durable tools","limit":20,"offset":40,"sort":"date","lang":"en","exact":false,"score":0.5,"tags":["go","temporal"],"owner":"ops","archived":true}`)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if reason := s.check(args); reason != "" {
			b.Fatal(reason)
		}
	}
}
