package replay_test

import (
	"errors"
	"fmt"
	"log"
	"log/slog"

	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// A replay test: a tool-call history recorded in production (`toolgate history`, or the Web UI's
// export) replays against this build's workflow code and registry, so a change that would break
// calls in flight fails in CI instead. It needs no server and runs no tool.
func ExampleFile() {
	tools, err := toolbox.Tools(toolbox.Config{})
	if err != nil {
		log.Fatal(err)
	}
	registry, err := toolcore.NewRegistry(tools...)
	if err != nil {
		log.Fatal(err)
	}
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)) // the replayer's lines
	opts := replay.Options{Registry: registry, Logger: quiet}

	if err := replay.File("../testdata/histories/success.json", opts); err != nil {
		log.Fatal(err)
	}
	fmt.Println("replayed")

	// A build whose registry lacks the recorded call's tool says so in one line.
	echo, _ := registry.Get("echo")
	opts.Registry, err = toolcore.NewRegistry(echo)
	if err != nil {
		log.Fatal(err)
	}
	err = replay.File("../testdata/histories/success.json", opts)
	var missing *replay.MissingToolError
	fmt.Println(errors.As(err, &missing), err)
	// Output:
	// replayed
	// true history calls tool "add"; this build's registry has: echo
}

// agentRound is a user's own agent workflow: one round of its model's tool calls, run as
// ToolCallWorkflow children.
func agentRound(ctx workflow.Context, calls []toolcore.ToolCall) ([]toolcore.Outcome, error) {
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: "weather-agents"})
	return workflows.ExecuteRound(ctx, calls, toolcore.RoundOptions{})
}

// An agent history replays with the user's agent workflow registered through Options.Workflows
// under the name it was recorded with; Registry is needed only for tool-call histories. The
// history file is the user's own, so this example is compiled, not run.
func ExampleFile_agent() {
	err := replay.File("testdata/agent.json", replay.Options{
		Workflows: func(r sdkworker.WorkflowRegistry) {
			r.RegisterWorkflowWithOptions(agentRound, workflow.RegisterOptions{Name: "AgentWorkflow"})
		},
	})
	if err != nil {
		log.Fatal(err) // e.g. TMPRL1100: this build's agent makes other commands than the recorded run
	}
}
