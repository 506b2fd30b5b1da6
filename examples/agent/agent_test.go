package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/workflows"
)

// agentEnv is a test environment running AgentWorkflow with model, and the toolbox's
// ToolCallWorkflow children with their real activity.
func agentEnv(t *testing.T, model Model, extra ...toolcore.Tool) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	return agentEnvWith(t, model, toolbox.Config{}, extra...)
}

// agentEnvWith is agentEnv with the toolbox of cfg (its sandbox tools too, when cfg.Sandbox is set).
func agentEnvWith(t *testing.T, model Model, cfg toolbox.Config, extra ...toolcore.Tool) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	// The environment runs children on goroutines of its own; on a loaded machine one can stall
	// past the 1 s deadlock detector while others start.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Hour})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-test", TaskQueue: TaskQueue})
	tools, err := toolbox.Tools(cfg)
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(append(tools, extra...)...)
	require.NoError(t, err)
	(&workflows.Workflows{Registry: reg}).Register(env)
	(&activities.Activities{Registry: reg}).Register(env)
	env.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: AgentWorkflowName})
	env.RegisterActivityWithOptions((&ModelActivities{Model: model}).CallModel, activityOptions(CallModelName))
	return env
}

func TestAgentRunsToolRoundsAndAnswers(t *testing.T) {
	env := agentEnv(t, ArithmeticModel())
	var children []string
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		children = append(children, info.WorkflowExecution.ID)
	})
	env.ExecuteWorkflow(AgentWorkflowName, AgentInput{Prompt: "What is 20 + 22?"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result AgentResult
	require.NoError(t, env.GetWorkflowResult(&result))
	assert.Equal(t, 2, result.Turns)
	assert.Equal(t, `20 + 22: the add tool says {"sum":42}.`, result.Answer)
	assert.ElementsMatch(t, []string{"agent-test/toolcall-call-add", "agent-test/toolcall-call-echo"}, children,
		"each call is a child scoped by the agent's workflow ID")
	roles := make([]string, len(result.Conversation))
	for i, m := range result.Conversation {
		roles[i] = m.Role
	}
	assert.Equal(t, []string{"user", "assistant", "tool", "tool", "assistant"}, roles)
	assert.Equal(t, "call-add", result.Conversation[2].ToolCallID, "outcomes in the order of the calls")
	assert.Equal(t, "call-echo", result.Conversation[3].ToolCallID)
}

func TestAgentStopsOnFatalToolError(t *testing.T) {
	fatal := toolcore.MustDefine(toolcore.Definition[struct{}]{
		Name:        "transfer",
		Description: "moves money",
		Validate:    func(toolcore.Arguments) toolcore.Decision[struct{}] { return toolcore.Accept(struct{}{}) },
		Execute: func(_ context.Context, _ struct{}) (any, error) {
			return nil, toolcore.NewNonRecoverableToolError("account frozen")
		},
	})
	turns := 0
	model := ScriptedModel(func([]Message) (Turn, error) {
		turns++
		return Turn{ToolCalls: []json.RawMessage{json.RawMessage(`{"type":"toolCall","id":"t1","name":"transfer","arguments":{}}`)}}, nil
	})
	env := agentEnv(t, model, fatal)
	env.ExecuteWorkflow(AgentWorkflowName, AgentInput{Prompt: "pay"})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "account frozen")
	assert.Equal(t, 1, turns, "no model turn after the fatal error")
}

func TestAgentFailsWhenTheModelFails(t *testing.T) {
	model := ScriptedModel(func([]Message) (Turn, error) { return Turn{}, errors.New("model unavailable") })
	env := agentEnv(t, model)
	env.ExecuteWorkflow(AgentWorkflowName, AgentInput{Prompt: "x"})
	require.True(t, env.IsWorkflowCompleted())
	assert.ErrorContains(t, env.GetWorkflowError(), "model turn 1")
}

func TestAgentGivesUpAfterMaxTurns(t *testing.T) {
	turns := 0
	model := ScriptedModel(func([]Message) (Turn, error) {
		turns++
		call := fmt.Sprintf(`{"type":"toolCall","id":"e%d","name":"echo","arguments":{"text":"again"}}`, turns)
		return Turn{ToolCalls: []json.RawMessage{json.RawMessage(call)}}, nil
	})
	env := agentEnv(t, model)
	env.ExecuteWorkflow(AgentWorkflowName, AgentInput{Prompt: "loop", MaxTurns: 2})
	require.True(t, env.IsWorkflowCompleted())
	assert.ErrorContains(t, env.GetWorkflowError(), "no answer after 2 turns")
	assert.Equal(t, 2, turns)
}

func TestScriptQuotesResultsAndEndsWithItsTurns(t *testing.T) {
	model := Script{Turns: []Turn{
		{ToolCalls: []json.RawMessage{json.RawMessage(`{"type":"toolCall","id":"a","name":"add","arguments":{"left":1,"right":2}}`)}},
		{Text: "a said {{a}}, b said {{b}}"},
	}}.Model()
	first, err := model.Next(context.Background(), []Message{{Role: "user", Content: "x"}})
	require.NoError(t, err)
	assert.Len(t, first.ToolCalls, 1)
	conversation := []Message{
		{Role: "user", Content: "x"},
		{Role: "assistant", ToolCalls: first.ToolCalls},
		{Role: "tool", ToolCallID: "a", Content: `{"sum":3}`},
	}
	second, err := model.Next(context.Background(), conversation)
	require.NoError(t, err)
	assert.Equal(t, `a said {"sum":3}, b said {{b}}`, second.Text, "a call without a tool message stays a placeholder")
	_, err = model.Next(context.Background(), append(conversation, Message{Role: "assistant", Content: second.Text}))
	assert.ErrorContains(t, err, "the script has 2 turns")
}

func TestFlagsFollowTheTemporalEnvironment(t *testing.T) {
	env := map[string]string{"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_NAMESPACE": "prod", "TOOLGATE_TASK_QUEUE": "tools"}
	cfg, err := parseFlags(nil, func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, "temporal:7233", cfg.address)
	assert.Equal(t, "prod", cfg.namespace)
	assert.Equal(t, "tools", cfg.toolTaskQueue)
	cfg, err = parseFlags([]string{"-address", "other:1", "-id", "a1"}, func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, "other:1", cfg.address, "a flag wins over the environment")
	assert.Equal(t, "a1", cfg.workflowID)
	cfg, err = parseFlags(nil, func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7233", cfg.address)
	assert.Equal(t, "toolgate", cfg.toolTaskQueue)
	assert.Equal(t, "What is 20 + 22?", cfg.prompt, "the arithmetic example's prompt")
	cfg, err = parseFlags([]string{"-example", "coding"}, func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, CodingPrompt, cfg.prompt, "the coding example's prompt")
	_, err = parseFlags([]string{"-example", "poetry"}, func(string) string { return "" })
	assert.ErrorContains(t, err, `-example "poetry": want arithmetic or coding`)
}

// TestWithoutServerSaysHowToStartOne: with nothing listening at the address, the agent fails
// within seconds naming the address and `toolgate dev`.
func TestWithoutServerSaysHowToStartOne(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	address := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	cfg, err := parseFlags([]string{"-address", address}, func(string) string { return "" })
	require.NoError(t, err)
	var out strings.Builder
	err = run(t.Context(), cfg, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no Temporal server answers at "+address)
	assert.Contains(t, err.Error(), "toolgate dev")
	assert.Empty(t, out.String())
}

// With a budget of one tool call, the round's second call starts nothing: the model reads
// BUDGET_EXCEEDED as its result, and only the first call's child ran.
func TestAgentBudgetOfToolCalls(t *testing.T) {
	env := agentEnv(t, ArithmeticModel())
	var children []string
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		children = append(children, info.WorkflowExecution.ID)
	})
	env.ExecuteWorkflow(AgentWorkflowName, AgentInput{Prompt: "What is 20 + 22?", MaxToolCalls: 1})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result AgentResult
	require.NoError(t, env.GetWorkflowResult(&result))
	assert.Equal(t, []string{"agent-test/toolcall-call-add"}, children)
	echo := result.Conversation[3]
	assert.Equal(t, "call-echo", echo.ToolCallID)
	assert.True(t, echo.IsError)
	assert.Contains(t, echo.Content, `"code":"BUDGET_EXCEEDED"`)
}
