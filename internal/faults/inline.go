package faults

import (
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// InlineAgentName is the workflow type of InlineAgent, which faultworker registers with its
// registry.
const InlineAgentName = "faults.InlineAgent"

// InlineInput is InlineAgent's input.
type InlineInput struct {
	// Calls run as one parallel round.
	Calls []toolcore.ToolCall `json:"calls"`
	// TaskQueue of the calls' ExecuteTool activities.
	TaskQueue string `json:"taskQueue"`
}

// InlineAgent is an agent workflow that runs one round of calls inline (workflows.Inline, no
// child workflows) with the tools of reg, the registry of the worker that hosts it, and returns
// one AgentLine per call in round order. It must be hosted by a worker whose registry validates
// like reg (faultworker registers it on its toolgate worker).
func InlineAgent(reg *toolcore.Registry) func(workflow.Context, InlineInput) ([]AgentLine, error) {
	return func(ctx workflow.Context, in InlineInput) ([]AgentLine, error) {
		inline := &workflows.Inline{Registry: reg, TaskQueue: in.TaskQueue}
		outcomes, err := inline.ExecuteRound(ctx, in.Calls, toolcore.RoundOptions{})
		if err != nil {
			return nil, err
		}
		lines := make([]AgentLine, len(outcomes))
		for i, o := range outcomes {
			lines[i] = NewAgentLine(o.CallID, o.Result, o.Err)
		}
		return lines, nil
	}
}
