package conformancetools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// Texts the suite checks the fixtures' results against.
const (
	// SimpleText is test_simple_text's answer.
	SimpleText = "This is a simple text response for testing."
	// ErrorText is the error of test_error_handling.
	ErrorText = "This tool intentionally returns an error for testing"
)

// Defaults of Options.
const (
	// DefaultProgressGap spaces test_tool_with_progress's first two reports, as the suite's
	// reference fixture does.
	DefaultProgressGap = 50 * time.Millisecond
	// DefaultReconnection is how long test_reconnection runs.
	DefaultReconnection = 3 * time.Second
	// JobTime is how long failing_job and protocol_error_job run before they fail ("after ~1s"
	// in the suite's tasks-lifecycle).
	JobTime = time.Second
)

// Options tune the fixtures that take time. They work at their zero value.
type Options struct {
	// ProgressLastGap is how long test_tool_with_progress waits between its reports 50 and 100:
	// longer than the server's --sse-poll-after, so the call's stream is closed mid-call and
	// resumed. Optional: default DefaultProgressGap.
	ProgressLastGap time.Duration
	// Reconnection is how long test_reconnection runs: longer than the server's
	// --sse-poll-after. Optional: default DefaultReconnection.
	Reconnection time.Duration
}

// Fixtures registered with a task support other than the default (optional).
var (
	// TaskSupportForbidden are the fixtures the tasks scenarios expect answered inline.
	TaskSupportForbidden = []string{"greet"}
	// TaskSupportRequired are the fixtures the tasks scenarios expect only as tasks.
	TaskSupportRequired = []string{"failing_job", "test_tool_with_task"}
)

// noArgs is the arguments of a fixture that takes none.
type noArgs struct{}

// readOnly is the options of a fixture without effect.
var readOnly = toolcore.Options{SideEffect: toolcore.ReadOnly}

// Registry returns every fixture tool.
func Registry(opts Options) (*toolcore.Registry, error) {
	if opts.ProgressLastGap <= 0 {
		opts.ProgressLastGap = DefaultProgressGap
	}
	if opts.Reconnection <= 0 {
		opts.Reconnection = DefaultReconnection
	}
	var tools []toolcore.Tool
	for _, group := range [][]toolcore.Tool{toolsTools(opts), tasksTools(), inputTools(), contentTools(), loggingTools()} {
		tools = append(tools, group...)
	}
	return toolcore.NewRegistry(tools...)
}

// toolsTools are the fixtures of the tools-* and http-* scenarios and of json-schema-2020-12.
func toolsTools(opts Options) []toolcore.Tool {
	type regionArgs struct {
		Region string `json:"region"`
	}
	type address struct {
		Street string `json:"street,omitempty"`
		City   string `json:"city,omitempty"`
	}
	type contactArgs struct {
		Name          string   `json:"name,omitempty"`
		Address       *address `json:"address,omitempty"`
		ContactMethod string   `json:"contactMethod,omitempty"`
		Phone         string   `json:"phone,omitempty"`
		Email         string   `json:"email,omitempty"`
	}
	return []toolcore.Tool{
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_simple_text", Description: "Returns simple text.",
			Execute: func(context.Context, noArgs) (any, error) { return toolcore.Text(SimpleText), nil },
			Options: readOnly}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_error_handling", Description: "Always fails.",
			// The suite's text, capitalized as it writes it.
			Execute: func(context.Context, noArgs) (any, error) { return nil, fmt.Errorf("%s", ErrorText) },
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 1}}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				for i, gap := range []time.Duration{0, DefaultProgressGap, opts.ProgressLastGap} {
					if err := sleep(ctx, gap); err != nil {
						return nil, err
					}
					toolcore.ReportProgress(ctx, toolcore.Progress{Completed: int64(50 * i), Total: 100})
				}
				return toolcore.Text("Progress test completed"), nil
			},
			Options: readOnly}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_reconnection", Description: "Runs long enough for the server to close the call's stream.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				if err := sleep(ctx, opts.Reconnection); err != nil {
					return nil, err
				}
				return toolcore.Text("Reconnection test completed"), nil
			},
			Options: readOnly}),
		// A string argument bound to a header (SEP-2243) for http-custom-header-server-validation:
		// a 2026-07-28 client also sends it as Mcp-Param-Region, which must match.
		toolcore.MustDefine(toolcore.Definition[regionArgs]{Name: "test_custom_header",
			Description: "Echoes its region, which a 2026-07-28 client also sends as the Mcp-Param-Region header.",
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}, "required": ["region"]}`),
			Execute:     func(_ context.Context, a regionArgs) (any, error) { return toolcore.Text("region " + a.Region), nil },
			Options:     readOnly}),
		// 0.2.0-alpha.12's json-schema-2020-12 fixture (SEP-1613 and SEP-2106: $anchor,
		// allOf/anyOf, if/then/else), kept in tools/list as written.
		toolcore.MustDefine(toolcore.Definition[contactArgs]{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features",
			InputSchema: json.RawMessage(`{
				"$schema": "https://json-schema.org/draft/2020-12/schema",
				"type": "object",
				"$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
				"properties": {
					"name": {"type": "string"},
					"address": {"$ref": "#/$defs/address"},
					"contactMethod": {"type": "string", "enum": ["phone", "email"]},
					"phone": {"type": "string"},
					"email": {"type": "string"}
				},
				"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
				"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
				"then": {"required": ["phone"]},
				"else": {"required": ["email"]},
				"additionalProperties": false
			}`),
			Execute: func(context.Context, contactArgs) (any, error) { return toolcore.Text("ok"), nil },
			Options: readOnly}),
	}
}

// tasksTools are the fixtures of the tasks extension scenarios (tasks-*) that ask nothing.
func tasksTools() []toolcore.Tool {
	type greetArgs struct {
		Name string `json:"name"`
	}
	type computeArgs struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label,omitempty"`
	}
	type deleteArgs struct {
		Filename string `json:"filename"`
	}
	return []toolcore.Tool{
		toolcore.MustDefine(toolcore.Definition[greetArgs]{Name: "greet", Description: "Greets by name.",
			Execute: func(_ context.Context, a greetArgs) (any, error) { return toolcore.Text("Hello, " + a.Name + "!"), nil },
			Options: readOnly}),
		toolcore.MustDefine(toolcore.Definition[computeArgs]{Name: "slow_compute", Description: "Computes for the given seconds.",
			Execute: func(ctx context.Context, a computeArgs) (any, error) {
				if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
					return nil, err
				}
				return toolcore.Text(fmt.Sprintf("Computed %s after %gs", a.Label, a.Seconds)), nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly, Timeout: 2 * time.Minute}}),
		// The two jobs run JobTime, as the suite's reference fixtures do, so the server makes
		// them tasks (a call done within mcp.TaskInlineWindow is answered inline).
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "failing_job", Description: "Always ends with a tool execution error.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				if err := sleep(ctx, JobTime); err != nil {
					return nil, err
				}
				return nil, errors.New("the job failed, as it always does")
			},
			Options: toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 1}}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "protocol_error_job", Description: "Fails the protocol.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				if err := sleep(ctx, JobTime); err != nil {
					return nil, err
				}
				return nil, toolcore.NewNonRecoverableToolError("the job broke the protocol")
			}}),
		// The caller approves each call: a 2026-07-28 task shows it input_required with an
		// elicitation/create and takes the answer through tasks/update.
		toolcore.MustDefine(toolcore.Definition[deleteArgs]{Name: "confirm_delete", Description: "Deletes the file once the caller confirms.",
			Execute: func(_ context.Context, a deleteArgs) (any, error) { return toolcore.Text("Deleted " + a.Filename), nil },
			Options: toolcore.Options{RequireApproval: true, ApprovalByCaller: true}}),
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
