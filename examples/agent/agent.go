package main

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// AgentWorkflowName is the workflow type of AgentWorkflow.
const AgentWorkflowName = "AgentWorkflow"

// DefaultMaxTurns bounds the model turns of a run unless AgentInput.MaxTurns says otherwise.
const DefaultMaxTurns = 8

// AgentInput is AgentWorkflow's input.
type AgentInput struct {
	Prompt string `json:"prompt"`
	// MaxTurns bounds the model turns. Optional: default DefaultMaxTurns.
	MaxTurns int `json:"maxTurns,omitempty"`
	// ToolTaskQueue is where the toolgate worker runs the tools. Optional: default
	// wire.DefaultTaskQueue.
	ToolTaskQueue string `json:"toolTaskQueue,omitempty"`
	// MaxToolCalls is the run's budget of tool calls (workflows.Budget.Calls): a call beyond it
	// starts nothing and the model reads BUDGET_EXCEEDED as its result (docs/budgets.md); the
	// run answers the query toolgate.budget. Optional: default 0, no budget.
	MaxToolCalls int `json:"maxToolCalls,omitempty"`
}

// AgentResult is AgentWorkflow's result.
type AgentResult struct {
	Answer       string    `json:"answer"`
	Turns        int       `json:"turns"`
	Conversation []Message `json:"conversation"`
}

// AgentWorkflow is the agent loop: model turn, round of tool calls, outcomes back to the model,
// until the model answers without calls. See the package documentation.
func AgentWorkflow(ctx workflow.Context, in AgentInput) (AgentResult, error) {
	return agentLoop(ctx, in, toolcore.RoundOptions{})
}

// agentLoop is AgentWorkflow running every round with roundOptions (the replay tests vary them).
func agentLoop(ctx workflow.Context, in AgentInput, roundOptions toolcore.RoundOptions) (AgentResult, error) {
	maxTurns := in.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{
		TaskQueue: in.ToolTaskQueue,
		// One agent run's calls never collide with another's.
		Scope: workflow.GetInfo(ctx).WorkflowExecution.ID,
	})
	if in.MaxToolCalls > 0 {
		var err error
		if ctx, err = workflows.WithBudget(ctx, workflows.Budget{Calls: in.MaxToolCalls}); err != nil {
			return AgentResult{}, err
		}
	}
	mctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
		Summary:             "model turn",
	})
	conversation := []Message{{Role: "user", Content: in.Prompt}}
	for turn := 1; turn <= maxTurns; turn++ {
		var next Turn
		if err := workflow.ExecuteActivity(mctx, CallModelName, conversation).Get(ctx, &next); err != nil {
			return AgentResult{}, fmt.Errorf("model turn %d: %w", turn, err)
		}
		conversation = append(conversation, Message{Role: "assistant", Content: next.Text, ToolCalls: next.ToolCalls})
		if len(next.ToolCalls) == 0 {
			return AgentResult{Answer: next.Text, Turns: turn, Conversation: conversation}, nil
		}
		calls := make([]toolcore.ToolCall, len(next.ToolCalls))
		for i, raw := range next.ToolCalls {
			calls[i], _ = toolcore.ParseToolCall(raw) // a malformed call stays zero: a contract error outcome
		}
		outcomes, err := workflows.ExecuteRound(ctx, calls, roundOptions)
		if err != nil {
			// A fatal tool error (or the run's cancellation) stops the agent.
			return AgentResult{}, err
		}
		for _, o := range outcomes {
			conversation = append(conversation, toolMessage(o))
		}
	}
	return AgentResult{Turns: maxTurns, Conversation: conversation}, fmt.Errorf("no answer after %d turns", maxTurns)
}

// toolMessage is what the model reads about one outcome: the result message's content, or a
// short error text for outcomes without a result.
func toolMessage(o toolcore.Outcome) Message {
	if o.Kind == toolcore.OutcomeResult {
		return Message{Role: "tool", ToolCallID: o.Result.ToolCallID(), Content: o.Result.Content(), IsError: o.Result.IsError()}
	}
	return Message{Role: "tool", ToolCallID: o.CallID, Content: o.Kind.String() + ": " + o.Err.Error(), IsError: true}
}
