package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// roundEnv is a test environment running fixtures.RoundWorkflow with ToolCallWorkflow children
// and the real ExecuteTool activity over the toolbox and the fixtures.
func roundEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	// The environment runs the children on goroutines of its own; on a loaded machine the first
	// one can stall past the 1 s detector while others start.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Hour})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-1", TaskQueue: wire.DefaultTaskQueue})
	reg := recordedRegistry(t)
	(&workflows.Workflows{Registry: reg}).Register(env)
	(&activities.Activities{Registry: reg}).Register(env)
	fixtures.RegisterRoundWorkflow(env)
	return env
}

func runRound(t *testing.T, env *testsuite.TestWorkflowEnvironment, in fixtures.RoundInput) ([][]fixtures.RoundOutcome, error) {
	t.Helper()
	env.ExecuteWorkflow(fixtures.RoundWorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	if err := env.GetWorkflowError(); err != nil {
		return nil, err
	}
	var out [][]fixtures.RoundOutcome
	require.NoError(t, env.GetWorkflowResult(&out))
	return out, nil
}

func TestExecuteRoundOutcomesInSourceOrder(t *testing.T) {
	env := roundEnv(t)
	var started []string
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		started = append(started, info.WorkflowExecution.ID)
	})
	rounds, err := runRound(t, env, fixtures.RoundInput{Scope: "agent-1", Rounds: [][]json.RawMessage{{
		call("a", "add", `{"left":1,"right":2}`),
		call("b", "nope", `{}`),
		call("c", toolbox.NameEcho, `{"text":"hi"}`),
		call("d", "add", `{"left":"x","right":2}`),
		json.RawMessage(`{"type":"toolCall"}`),
		call("a", "add", `{"left":5,"right":5}`),
	}}})
	require.NoError(t, err)
	require.Len(t, rounds, 1)
	out := rounds[0]
	require.Len(t, out, 6)
	kinds := make([]string, len(out))
	for i, o := range out {
		assert.Equal(t, i, o.Index)
		kinds[i] = o.Kind
	}
	require.Equal(t, []string{"result", "result", "result", "result", "contractError", "contractError"}, kinds, "%+v", out)
	assert.Equal(t, `{"sum":3}`, out[0].Result.Content())
	assert.Equal(t, toolcore.CodeToolNotFound, out[1].Result.ErrorCode())
	assert.Equal(t, "c", out[2].Result.ToolCallID())
	assert.Equal(t, toolcore.CodeToolArgumentsInvalid, out[3].Result.ErrorCode())
	assert.Contains(t, out[5].Error, `repeats the ID "a"`)
	// The listener sees children in the order the environment runs them; the command order is
	// checked by the replay tests.
	assert.ElementsMatch(t, []string{"agent-1/toolcall-a", "agent-1/toolcall-b", "agent-1/toolcall-c", "agent-1/toolcall-d"}, started,
		"children have the client's workflow IDs; invalid calls start nothing")
}

func TestExecuteRoundSequentialToolAndFatalStop(t *testing.T) {
	env := roundEnv(t)
	var started []string
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		started = append(started, info.WorkflowExecution.ID)
	})
	_, err := runRound(t, env, fixtures.RoundInput{Rounds: [][]json.RawMessage{{
		call("s1", fixtures.Sequential, `{}`),
		call("f2", fixtures.Fatal, `{}`),
		call("a3", "add", `{"left":1,"right":2}`),
		call("s4", fixtures.Sequential, `{}`),
	}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ledger mismatch", "the round's fatal error fails the parent")
	assert.ElementsMatch(t, []string{"toolcall-s1", "toolcall-f2", "toolcall-a3"}, started,
		"the call beside the fatal one ran; the sequential call after it never started")
}

func TestExecuteToolCallAttachesToExistingCall(t *testing.T) {
	env := roundEnv(t)
	var awaited []wire.AwaitToolCallInput
	env.RegisterActivityWithOptions(func(context.Context, wire.AwaitToolCallInput) (toolcore.Result, error) {
		return toolcore.Result{}, errors.New("replaced by the mock")
	}, activity.RegisterOptions{Name: wire.AwaitToolCallName})
	first := mustCall(t, call("a", "add", `{"left":1,"right":2}`))
	env.OnActivity(wire.AwaitToolCallName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in wire.AwaitToolCallInput) (toolcore.Result, error) {
			awaited = append(awaited, in)
			return toolcore.SuccessResult(first, `{"sum":3}`), nil
		})
	// The first round starts the child; the second submits the same call again: the start is
	// refused (the ID exists) and the parent attaches through AwaitToolCall.
	rounds, err := runRound(t, env, fixtures.RoundInput{Rounds: [][]json.RawMessage{
		{call("a", "add", `{"left":1,"right":2}`)},
		{call("a", "add", `{"left":1,"right":2}`), call("b", "add", `{"left":2,"right":2}`)},
	}})
	require.NoError(t, err)
	require.Len(t, rounds, 2)
	require.Len(t, awaited, 1, "only the existing call is awaited")
	assert.Equal(t, "toolcall-a", awaited[0].WorkflowID)
	assert.Equal(t, string(call("a", "add", `{"left":1,"right":2}`)), awaited[0].Call)
	assert.Equal(t, `{"sum":3}`, rounds[1][0].Result.Content())
	assert.Equal(t, `{"sum":4}`, rounds[1][1].Result.Content())
}
