package main

import (
	"context"
	"fmt"
	"os"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/client"
)

// TaskQueue is the agent worker's task queue (the tools run on the toolgate worker's).
const TaskQueue = "toolgate-agent"

func main() {
	address := "127.0.0.1:7233"
	if a := os.Getenv("TEMPORAL_ADDRESS"); a != "" {
		address = a
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	result, err := run(ctx, address, "What is 20 + 22?")
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	fmt.Printf("answer after %d turns: %s\n", result.Turns, result.Answer)
}

// run dials address, starts the agent worker and runs one agent workflow with the scripted model.
func run(ctx context.Context, address, prompt string) (AgentResult, error) {
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: address})
	if err != nil {
		return AgentResult{}, fmt.Errorf("dial %s (is `make dev` running?): %w", address, err)
	}
	defer c.Close()
	w := NewWorker(c, TaskQueue, ArithmeticModel())
	if err := w.Start(); err != nil {
		return AgentResult{}, fmt.Errorf("start agent worker: %w", err)
	}
	defer w.Stop()
	id := fmt.Sprintf("agent-%d", time.Now().UnixNano())
	wr, err := c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: TaskQueue}, AgentWorkflowName, AgentInput{Prompt: prompt})
	if err != nil {
		return AgentResult{}, fmt.Errorf("start %s: %w", id, err)
	}
	var result AgentResult
	if err := wr.Get(ctx, &result); err != nil {
		return AgentResult{}, fmt.Errorf("agent %s: %w", id, err)
	}
	return result, nil
}

// NewWorker returns a worker for the agent on queue: AgentWorkflow, CallModel with model, and
// the AwaitToolCall activity the round helper needs.
func NewWorker(c sdkclient.Client, queue string, model Model) sdkworker.Worker {
	w := sdkworker.New(c, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: AgentWorkflowName})
	w.RegisterActivityWithOptions((&ModelActivities{Model: model}).CallModel, activityOptions(CallModelName))
	client.New(c, client.Options{}).RegisterAwaitToolCall(w)
	return w
}
