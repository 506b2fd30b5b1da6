package toolcore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/toolcore"
)

// addArgs is what the add tool accepts once validated.
type addArgs struct {
	Left  float64 `json:"left"`
	Right float64 `json:"right"`
}

// How to write a tool: define it (a pure synchronous validator and an effect that gets only the
// validated value), register it, and execute model tool calls against the registry.
func Example() {
	add := toolcore.MustDefine(toolcore.Definition[addArgs]{
		Name:        "add",
		Description: "Add two numbers.",
		// Validate decides, without effects: no I/O, no goroutines, no clock.
		Validate: func(args toolcore.Arguments) toolcore.Decision[addArgs] {
			left, err := args.Float64("left")
			if err != nil {
				return toolcore.Reject[addArgs]("left must be a number")
			}
			right, err := args.Float64("right")
			if err != nil {
				return toolcore.Reject[addArgs]("right must be a number")
			}
			return toolcore.Accept(addArgs{Left: left, Right: right})
		},
		// Execute runs the effect; ctx carries cancellation and the call's ID.
		Execute: func(ctx context.Context, a addArgs) (any, error) {
			return map[string]any{"sum": a.Left + a.Right}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	registry, err := toolcore.NewRegistry(add)
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, raw := range []string{
		`{"type":"toolCall","id":"call-add-1","name":"add","arguments":{"left":20,"right":22}}`,
		`{"type":"toolCall","id":"call-add-2","name":"add","arguments":{"left":"twenty","right":22}}`,
	} {
		call, err := toolcore.ParseToolCall([]byte(raw))
		if err != nil { // INVALID_TOOL_CALL
			fmt.Println(err)
			return
		}
		result, err := toolcore.Execute(context.Background(), registry, call)
		if err != nil { // canceled, or a NonRecoverableToolError: stop the agent run
			fmt.Println(err)
			return
		}
		wire, _ := json.Marshal(result)
		fmt.Println(string(wire))
	}
	// Output:
	// {"id":"tool-result-call-add-1","role":"toolResult","toolCallId":"call-add-1","toolName":"add","content":"{\"sum\":42}","isError":false}
	// {"id":"tool-result-call-add-2","role":"toolResult","toolCallId":"call-add-2","toolName":"add","content":"{\"error\":{\"code\":\"TOOL_ARGUMENTS_INVALID\",\"message\":\"left must be a number\"}}","isError":true}
}

// A tool stops the agent run only with an error minted by NewNonRecoverableToolError; every other
// error is a result the model reads.
func ExampleNewNonRecoverableToolError() {
	transfer := toolcore.MustDefine(toolcore.Definition[struct{}]{
		Name:        "transfer",
		Description: "Move money.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[struct{}] { return toolcore.Accept(struct{}{}) },
		Execute: func(context.Context, struct{}) (any, error) {
			return nil, fmt.Errorf("check ledger: %w", toolcore.NewNonRecoverableToolError("ledger out of balance"))
		},
	})
	registry, _ := toolcore.NewRegistry(transfer)
	call, _ := toolcore.NewToolCall("call-1", "transfer", []byte(`{}`))

	result, err := toolcore.Execute(context.Background(), registry, call)

	var fatal *toolcore.NonRecoverableToolError
	fmt.Println(errors.As(err, &fatal), fatal, result.IsZero())
	// Output: true ledger out of balance true
}

// An unknown tool is a result, not an error, so the model can correct itself.
func ExampleNotFoundResult() {
	call, _ := toolcore.NewToolCall("call-9", "subtract", []byte(`{}`))

	result := toolcore.NotFoundResult(call)

	fmt.Println(result.ErrorCode(), result.Content())
	// Output: TOOL_NOT_FOUND {"error":{"code":"TOOL_NOT_FOUND","message":"Unknown Tool \"subtract\""}}
}

// searchArgs has no validator of its own: Define generates the input schema from its fields and
// tags, and the schema checks the arguments before they decode strictly into searchArgs.
type searchArgs struct {
	Query string `json:"query" jsonschema:"description=What to look for,minLength=1"`
	Limit int64  `json:"limit,omitempty" jsonschema:"description=Most results,minimum=1,maximum=100"`
}

// A tool whose input schema validates its arguments: no Validate, the schema generated from the
// argument type (a field without omitempty is required), and the reason the model reads.
func ExampleDefine() {
	search, err := toolcore.Define(toolcore.Definition[searchArgs]{
		Name:        "search",
		Description: "Search the notes.",
		Execute: func(ctx context.Context, a searchArgs) (any, error) {
			return map[string]any{"query": a.Query, "hits": []string{}}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	if err != nil { // INVALID_TOOL_DEFINITION
		fmt.Println(err)
		return
	}
	var schema struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(search.InputSchema(), &schema)
	fmt.Println("required:", schema.Required)

	for _, args := range []string{`{"query":"toolgate","limit":5}`, `{"query":"toolgate","limit":"5"}`, `{"limit":5}`} {
		call, _ := toolcore.NewToolCall("call-1", "search", []byte(args))
		if _, rejected, ok := search.Validate(call); !ok {
			fmt.Println(rejected.Content())
			continue
		}
		fmt.Println("accepted", args)
	}
	// Output:
	// required: [query]
	// accepted {"query":"toolgate","limit":5}
	// {"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"\"limit\": expected integer, got string"}}
	// {"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"\"query\" is required"}}
}

// A registry is an immutable-once-served set of tools by name; Infos is what clients and models
// are shown (render it with package tooldefs).
func ExampleRegistry() {
	echo := toolcore.MustDefine(toolcore.Definition[struct {
		Text string `json:"text"`
	}]{
		Name:        "echo",
		Description: "Echo the text.",
		Execute: func(_ context.Context, a struct {
			Text string `json:"text"`
		}) (any, error) {
			return a, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	registry, err := toolcore.NewRegistry(echo)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, found := registry.Get("echo")
	fmt.Println(registry.Names(), found)
	for _, info := range registry.Infos() {
		fmt.Println(info.Name, info.SideEffect, info.Description)
	}
	// Output:
	// [echo] true
	// echo readOnly Echo the text.
}

// In process, a call that needs approval asks ExecuteOptions.Approve after validation and before
// the tool runs; a rejection is a result the model reads, and the tool never ran.
func ExampleExecuteWith() {
	ran := 0
	write := toolcore.MustDefine(toolcore.Definition[struct {
		Path string `json:"path"`
	}]{
		Name:        "write",
		Description: "Write a file.",
		Execute: func(context.Context, struct {
			Path string `json:"path"`
		}) (any, error) {
			ran++
			return "written", nil
		},
		Options: toolcore.Options{RequireApproval: true},
	})
	registry, _ := toolcore.NewRegistry(write)
	call, _ := toolcore.NewToolCall("call-1", "write", []byte(`{"path":"/etc/passwd"}`))

	result, err := toolcore.ExecuteWith(context.Background(), registry, call, toolcore.ExecuteOptions{
		Approve: func(_ context.Context, req toolcore.ApprovalRequest) toolcore.ApprovalDecision {
			return toolcore.ApprovalDecision{Approved: false, Reviewer: "alice", Reason: "not that file"}
		},
	})
	fmt.Println(err, result.ErrorCode(), ran)
	// Output: <nil> TOOL_APPROVAL_REJECTED 0
}
