package workflows_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

// weatherArgs needs no Validate: the input schema generated from it checks the arguments.
type weatherArgs struct {
	City string `json:"city" jsonschema:"description=The city,minLength=1"`
}

var weather = toolcore.MustDefine(toolcore.Definition[weatherArgs]{
	Name:        "weather",
	Description: "Today's weather in a city.",
	Execute: func(_ context.Context, a weatherArgs) (any, error) {
		return map[string]string{"city": a.City, "sky": "clear"}, nil
	},
	Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
})

// agentWorkflow is a user's agent workflow: it runs the tool call its model emitted as a durable
// ToolCallWorkflow child and hands the tool-result message back for the transcript.
func agentWorkflow(ctx workflow.Context, modelOutput string) (string, error) {
	// The tools' worker polls its own queue, not toolgate's default one: say so.
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: "weather-agents"})
	call, err := toolcore.ParseToolCall([]byte(modelOutput))
	if err != nil {
		return "", err // INVALID_TOOL_CALL: nothing was started
	}
	result, err := workflows.ExecuteToolCall(ctx, call)
	if err != nil {
		return "", err // a NonRecoverableToolError (stop the run), a cancellation, ...
	}
	message, err := result.MarshalJSON() // error results too: they are for the model
	return string(message), err
}

// The agent workflow is hosted beside its tools on the toolgate worker of their queue, with the
// AwaitToolCall activity ExecuteToolCall uses to attach to a call someone else started. It needs
// a Temporal server, so it is compiled, not run.
func ExampleExecuteToolCall() {
	registry, err := toolcore.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	w, err := worker.New(c, "default", registry, worker.Options{TaskQueue: "weather-agents"})
	if err != nil {
		log.Fatal(err)
	}
	w.RegisterWorkflow(agentWorkflow)
	client.New(c, client.Options{TaskQueue: "weather-agents"}).RegisterAwaitToolCall(w)
	if err := w.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// The same agent workflow in the SDK's test environment, with toolgate's workflow and activity
// registered on it: a unit test of the agent that runs its tools without a server.
func ExampleExecuteToolCall_testEnvironment() {
	registry, err := toolcore.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	run := func(modelOutput string) string {
		env := suite.NewTestWorkflowEnvironment()
		env.RegisterWorkflow(agentWorkflow)
		(&workflows.Workflows{Registry: registry}).Register(env)
		(&activities.Activities{Registry: registry}).Register(env)
		env.ExecuteWorkflow(agentWorkflow, modelOutput)
		var message string
		if err := env.GetWorkflowResult(&message); err != nil {
			log.Fatal(err)
		}
		return message
	}

	fmt.Println(run(`{"type":"toolCall","id":"call-1","name":"weather","arguments":{"city":"Oslo"}}`))
	fmt.Println(run(`{"type":"toolCall","id":"call-2","name":"weather","arguments":{"city":""}}`))
	// Output:
	// {"id":"tool-result-call-1","role":"toolResult","toolCallId":"call-1","toolName":"weather","content":"{\"city\":\"Oslo\",\"sky\":\"clear\"}","isError":false}
	// {"id":"tool-result-call-2","role":"toolResult","toolCallId":"call-2","toolName":"weather","content":"{\"error\":{\"code\":\"TOOL_ARGUMENTS_INVALID\",\"message\":\"\\\"city\\\": must have at least 1 characters, got 0\"}}","isError":true}
}

// agentRound is a user's agent workflow for a model turn with several calls: a round of
// children, in parallel (except tools marked Sequential), one outcome per call in the calls'
// order.
func agentRound(ctx workflow.Context, calls []toolcore.ToolCall) ([]string, error) {
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{
		TaskQueue: "weather-agents",
		Scope:     workflow.GetInfo(ctx).WorkflowExecution.ID, // call IDs repeat across runs
	})
	outcomes, err := workflows.ExecuteRound(ctx, calls, toolcore.RoundOptions{})
	messages := make([]string, len(outcomes))
	for i, o := range outcomes {
		if o.Kind != toolcore.OutcomeResult { // canceled, not started, a contract error...
			messages[i] = fmt.Sprintf("%s %s: %v", o.CallID, o.Kind, o.Err)
			continue
		}
		messages[i] = o.CallID + ": " + o.Result.Content()
	}
	return messages, err // err: a NonRecoverableToolError or the run's cancellation
}

// A round in the SDK's test environment; on a server, register agentRound like agentWorkflow
// (see ExampleExecuteToolCall).
func ExampleExecuteRound() {
	registry, err := toolcore.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(agentRound)
	(&workflows.Workflows{Registry: registry}).Register(env)
	(&activities.Activities{Registry: registry}).Register(env)

	var calls []toolcore.ToolCall
	for i, city := range []string{"Oslo", "Lima"} {
		call, err := toolcore.NewToolCall(fmt.Sprintf("call-%d", i+1), "weather", []byte(`{"city":"`+city+`"}`))
		if err != nil {
			log.Fatal(err)
		}
		calls = append(calls, call)
	}
	env.ExecuteWorkflow(agentRound, calls)
	var messages []string
	if err := env.GetWorkflowResult(&messages); err != nil {
		log.Fatal(err)
	}
	for _, m := range messages {
		fmt.Println(m)
	}
	// Output:
	// call-1: {"city":"Oslo","sky":"clear"}
	// call-2: {"city":"Lima","sky":"clear"}
}
