package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// GoalSchemaCheckUs is the highest acceptable CPU cost of the schema check of one call's
// arguments against a 10-field schema, in microseconds.
const GoalSchemaCheckUs = 20

// Schema is the schema phase: Tool.Validate of one call of a tool with a 10-field argument type,
// in process. Its schema is generated from the type (descriptions, an enum, bounds, a pattern,
// an array, a json.Number).
type Schema struct {
	// Accepted is the schema validator (Definition.Validate nil) accepting the call: schema
	// check, strict decode into the type, the accepted value's round trip.
	Accepted Op `json:"accepted"`
	// Rejected is the schema validator refusing a call with six errors, reasons rendered.
	Rejected Op `json:"rejected"`
	// DecodeOnly is the baseline: a hand-written validator decoding the same arguments into the
	// same type (Arguments.Decode), no schema.
	DecodeOnly Op `json:"decodeOnly"`
	// CPU time per call in microseconds of each (the validating thread's, so other load on the
	// machine does not count), 0 when it cannot be read.
	AcceptedCPUUs   float64 `json:"acceptedCpuUs"`
	RejectedCPUUs   float64 `json:"rejectedCpuUs"`
	DecodeOnlyCPUUs float64 `json:"decodeOnlyCpuUs"`
	// CheckUs is what the schema check adds to a call in microseconds: Accepted - DecodeOnly, in
	// CPU time when known, else in wall time.
	CheckUs float64 `json:"checkUs"`
}

// schemaArgs is the 10-field argument type of the schema phase.
type schemaArgs struct {
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

// Arguments of the schema phase: every field valid, and six errors.
const (
	schemaValidArgs   = `{"query":"durable tools","limit":20,"offset":40,"sort":"date","lang":"en","exact":false,"score":0.5,"tags":["go","temporal"],"owner":"ops","archived":true}`
	schemaInvalidArgs = `{"query":"","limit":"20","sort":"size","exact":1,"score":"x","zz":1}`
)

// SchemaFuncs returns the three validations the schema phase times, each validating one call
// and failing on an unexpected verdict.
func SchemaFuncs() (accepted, rejected, decodeOnly func() error, err error) {
	define := func(validate func(toolcore.Arguments) toolcore.Decision[schemaArgs]) (toolcore.Tool, error) {
		return toolcore.Define(toolcore.Definition[schemaArgs]{
			Name: "search", Description: "Search (bench).", Validate: validate,
			Execute: func(context.Context, schemaArgs) (any, error) { return nil, nil },
		})
	}
	validation := func(tool toolcore.Tool, args string, wantOK bool) (func() error, error) {
		call, err := toolcore.NewToolCall("bench-schema-1", tool.Name(), []byte(args))
		if err != nil {
			return nil, err
		}
		return func() error {
			if _, res, ok := tool.Validate(call); ok != wantOK {
				return fmt.Errorf("schema: validation of %s: ok=%v: %s", args, ok, res.Content())
			}
			return nil
		}, nil
	}
	schema, err := define(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	decoding, err := define(func(a toolcore.Arguments) toolcore.Decision[schemaArgs] {
		var v schemaArgs
		if err := a.Decode(&v); err != nil {
			return toolcore.Reject[schemaArgs](err.Error())
		}
		return toolcore.Accept(v)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if accepted, err = validation(schema, schemaValidArgs, true); err != nil {
		return nil, nil, nil, err
	}
	if rejected, err = validation(schema, schemaInvalidArgs, false); err != nil {
		return nil, nil, nil, err
	}
	if decodeOnly, err = validation(decoding, schemaValidArgs, true); err != nil {
		return nil, nil, nil, err
	}
	return accepted, rejected, decodeOnly, nil
}

// schemaPhase times the three validations for about d each, then runs each as many times on one
// locked thread for its CPU time.
func schemaPhase(d time.Duration) (Schema, error) {
	accepted, rejected, decodeOnly, err := SchemaFuncs()
	if err != nil {
		return Schema{}, err
	}
	var s Schema
	for _, v := range []struct {
		fn  func() error
		op  *Op
		cpu *float64
	}{{decodeOnly, &s.DecodeOnly, &s.DecodeOnlyCPUUs}, {accepted, &s.Accepted, &s.AcceptedCPUUs}, {rejected, &s.Rejected, &s.RejectedCPUUs}} {
		if *v.op, err = measure(v.fn, d); err != nil {
			return Schema{}, err
		}
		n := v.op.Iterations
		used, ok, err := onThreadCPU(func() error {
			for range n {
				if err := v.fn(); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return Schema{}, err
		}
		if ok {
			*v.cpu = round(float64(used.Nanoseconds())/float64(n)/1000, 2)
		}
	}
	s.CheckUs = round((s.Accepted.NsPerCall-s.DecodeOnly.NsPerCall)/1000, 2)
	if s.AcceptedCPUUs > 0 && s.DecodeOnlyCPUUs > 0 {
		s.CheckUs = round(s.AcceptedCPUUs-s.DecodeOnlyCPUUs, 2)
	}
	return s, nil
}

// writeSchema prints the schema phase.
func (r Report) writeSchema(b *strings.Builder) {
	s := r.Schema
	fmt.Fprintf(b, "\nSchema validation in process: one call of a tool with a 10-field schema\n")
	t := table(b)
	fmt.Fprintln(t, "\twall us/call\tCPU us/call\tallocs/call\tbytes/call\t")
	for _, row := range []struct {
		name string
		op   Op
		cpu  float64
	}{{"schema validator, accepted", s.Accepted, s.AcceptedCPUUs}, {"schema validator, rejected (6 errors)", s.Rejected, s.RejectedCPUUs},
		{"hand-written decode, no schema", s.DecodeOnly, s.DecodeOnlyCPUUs}} {
		fmt.Fprintf(t, "%s\t%.1f\t%.1f\t%.0f\t%.0f\t\n", row.name, row.op.NsPerCall/1000, row.cpu, row.op.AllocsPerCall, row.op.BytesPerCall)
	}
	t.Flush()
	fmt.Fprintf(b, "the schema check adds %.1f us per call (goal < %d us: %s)\n", s.CheckUs, GoalSchemaCheckUs, verdict(s.CheckUs < GoalSchemaCheckUs))
}

// checkSchema reports what is missing from the schema phase.
func (r Report) checkSchema() error {
	s := r.Schema
	if s.Accepted.Iterations <= 0 || s.Rejected.Iterations <= 0 || s.DecodeOnly.Iterations <= 0 ||
		s.Accepted.NsPerCall <= 0 || s.Rejected.NsPerCall <= 0 || s.DecodeOnly.NsPerCall <= 0 {
		return fmt.Errorf("schema: incomplete %+v", s)
	}
	return nil
}
