package worker_test

import (
	"context"
	"log"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

type weatherArgs struct {
	City string `json:"city"`
}

// agentWorkflow is a user's own agent workflow: it runs its tool call as a durable child.
func agentWorkflow(ctx workflow.Context, raw string) (toolcore.Result, error) {
	// The tools are on this worker's own queue, not toolgate's default one: say so.
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: "weather-agents"})
	call, err := toolcore.ParseToolCall([]byte(raw))
	if err != nil {
		return toolcore.Result{}, err
	}
	return workflows.ExecuteToolCall(ctx, call)
}

// An own tool, a worker on an own task queue hosting an own agent workflow beside the tool, and
// the await activity, all in one process. It needs a Temporal server, so it is compiled, not run.
func Example() {
	weather := toolcore.MustDefine(toolcore.Definition[weatherArgs]{
		Name:        "weather",
		Description: "Today's weather in a city.",
		Validate: func(args toolcore.Arguments) toolcore.Decision[weatherArgs] {
			city, err := args.String("city")
			if err != nil || city == "" {
				return toolcore.Reject[weatherArgs]("city must be a non-empty string")
			}
			return toolcore.Accept(weatherArgs{City: city})
		},
		Execute: func(ctx context.Context, a weatherArgs) (any, error) {
			return map[string]any{"city": a.City, "sky": "clear"}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	reg, err := toolcore.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	sdk, err := sdkclient.Dial(sdkclient.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer sdk.Close()

	w, err := worker.New(sdk, "default", reg, worker.Options{TaskQueue: "weather-agents"})
	if err != nil {
		log.Fatal(err)
	}
	// Own workflows and activities register on w before Start, on its main task queue.
	w.RegisterWorkflow(agentWorkflow)
	client.New(sdk, client.Options{TaskQueue: "weather-agents"}).RegisterAwaitToolCall(w)
	if err := w.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// A versioned worker: it joins build ID "2026-12-06.1" of the worker deployment "weather". Its
// tool calls stay on this build until they end; new calls reach it once the build is promoted
// (toolgate deploy promote, or the SDK's client.WorkerDeploymentClient). The agent workflow is
// registered Pinned, so a run never moves to another build. It needs a Temporal server, so it
// is compiled, not run.
func ExampleOptions_deployment() {
	reg, err := toolcore.NewRegistry()
	if err != nil {
		log.Fatal(err)
	}
	sdk, err := sdkclient.Dial(sdkclient.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer sdk.Close()

	w, err := worker.New(sdk, "default", reg, worker.Options{
		TaskQueue:  "weather-agents",
		Deployment: worker.Deployment{Name: "weather", BuildID: "2026-12-06.1"},
	})
	if err != nil {
		log.Fatal(err)
	}
	w.RegisterWorkflowWithOptions(agentWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorPinned})
	if err := w.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
}
