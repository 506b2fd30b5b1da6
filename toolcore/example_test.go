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
