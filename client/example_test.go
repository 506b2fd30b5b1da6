package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// An agent runs one tool call its model emitted, durably, on the task queue a worker with that
// tool polls. Error results (TOOL_ARGUMENTS_INVALID, TOOL_EXECUTION_FAILED, ...) are results for
// the model; Go errors are for the agent. It needs a Temporal server and a worker, so it is
// compiled, not run.
func Example() {
	ctx := context.Background()
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tg := client.New(c, client.Options{TaskQueue: "weather-agents"})

	call, err := toolcore.ParseToolCall([]byte(`{"type":"toolCall","id":"call-1","name":"weather","arguments":{"city":"Oslo"}}`))
	if err != nil {
		log.Fatal(err) // INVALID_TOOL_CALL: nothing was started
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	result, err := tg.Execute(ctx, call) // a resubmission after a crash returns the recorded result
	var fatal *toolcore.NonRecoverableToolError
	switch {
	case errors.As(err, &fatal):
		log.Fatal(fatal) // stop the agent run
	case errors.Is(err, wire.ErrCallConflict):
		log.Fatal(err) // this call ID was used for another call
	case err != nil:
		log.Fatal(err) // the deadline (the call is canceled), ErrNoWorker, transport
	}
	message, err := result.MarshalJSON()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(message)) // success or error result: both go to the model's transcript
}

// A model turn with several tool calls runs as a round: one outcome per call, in the calls'
// order, whatever order they finished in. It needs a Temporal server, so it is compiled, not
// run.
func ExampleClient_ExecuteRound() {
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	// A scope per agent run keeps call IDs that repeat across runs apart.
	tg := client.New(c, client.Options{TaskQueue: "weather-agents", Scope: "run-42"})

	var calls []toolcore.ToolCall
	for i, city := range []string{"Oslo", "Lima"} {
		call, err := toolcore.NewToolCall(fmt.Sprintf("call-%d", i+1), "weather", []byte(`{"city":"`+city+`"}`))
		if err != nil {
			log.Fatal(err)
		}
		calls = append(calls, call)
	}
	outcomes, err := tg.ExecuteRound(context.Background(), calls, toolcore.RoundOptions{})
	for _, o := range outcomes {
		if o.Kind == toolcore.OutcomeResult {
			fmt.Println(o.CallID, o.Result.Content())
			continue
		}
		fmt.Println(o.CallID, o.Kind, o.Err)
	}
	if err != nil {
		log.Fatal(err) // a NonRecoverableToolError or the round's cancellation
	}
}

// Each call is the workflow "toolcall-<call ID>", escaped into printable ASCII, under the
// client's scope when it has one: what an operator looks up in the Web UI or with toolgate.
func ExampleWorkflowID() {
	fmt.Println(wire.WorkflowID("", "call-add-1"))
	fmt.Println(wire.WorkflowID("run-42", "call-add-1"))
	fmt.Println(wire.WorkflowID("", "ts-é 1"))
	// Output:
	// toolcall-call-add-1
	// run-42/toolcall-call-add-1
	// toolcall-ts-%C3%A9%201
}
