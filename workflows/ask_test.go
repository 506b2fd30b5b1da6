package workflows_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// deployTool is an Unsafe tool that makes an effect, checkpoints it, and asks "proceed?" before
// the irreversible part: a run after the answer resumes from the checkpoint and does not make the
// effect again.
func deployTool(runs, effects *atomic.Int64) toolcore.Tool {
	return running("deploy", toolcore.Options{SideEffect: toolcore.Unsafe, InputTimeout: time.Hour},
		func(ctx context.Context) (any, error) {
			runs.Add(1)
			var prepared bool
			if _, err := toolcore.LastCheckpoint(ctx, &prepared); err != nil {
				return nil, err
			}
			if !prepared {
				effects.Add(1)
				if err := toolcore.Checkpoint(ctx, true); err != nil {
					return nil, err
				}
			}
			ok, err := toolcore.Confirm(ctx, "proceed", "delete 3 resources? <b>`x`</b>")
			if err != nil {
				return nil, err
			}
			if !ok {
				return "kept", nil
			}
			return "deleted 3", nil
		})
}

// askEnv is a test environment running tools of reg with callbacks minted by urls.
func askEnv(t *testing.T, reg *toolcore.Registry, urls activities.CallbackURLs) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "toolcall-ask", TaskQueue: wire.DefaultTaskQueue})
	(&workflows.Workflows{Registry: reg}).Register(env)
	(&activities.Activities{Registry: reg, Callbacks: urls}).Register(env)
	return env
}

// updates numbers the update IDs of a test.
var updates int

// answered is what became of an UpdateInput: accepted, or refused with an error. The test
// environment decides after the callback that sent it returns.
type answered struct {
	accepted bool
	refusal  error
}

// answer sends UpdateInput; the returned record is filled in once the workflow decided.
func answer(env *testsuite.TestWorkflowEnvironment, a wire.InputAnswer) *answered {
	updates++
	var r answered
	env.UpdateWorkflow(wire.UpdateInput, fmt.Sprint("answer-", updates), &testsuite.TestUpdateCallback{
		OnReject:   func(err error) { r.refusal = err },
		OnAccept:   func() { r.accepted = true },
		OnComplete: func(any, error) {},
	}, a)
	return &r
}

// inputState queries the call's wire.InputState.
func inputState(t *testing.T, env *testsuite.TestWorkflowEnvironment) wire.InputState {
	t.Helper()
	v, err := env.QueryWorkflow(wire.QueryInput)
	require.NoError(t, err)
	var s wire.InputState
	require.NoError(t, v.Get(&s))
	return s
}

// result is the workflow's result, or its error.
func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) (toolcore.Result, error) {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	if err := env.GetWorkflowError(); err != nil {
		return toolcore.Result{}, err
	}
	var res toolcore.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	return res, nil
}

func TestAskWaitsThenRunsAgainWithTheAnswer(t *testing.T) {
	var runs, effects atomic.Int64
	reg, err := toolcore.NewRegistry(deployTool(&runs, &effects))
	require.NoError(t, err)
	env := askEnv(t, reg, nil)
	var state wire.InputState
	var yes *answered
	env.RegisterDelayedCallback(func() {
		state = inputState(t, env)
		yes = answer(env, wire.InputAnswer{Round: 1, By: "alice", Responses: map[string]json.RawMessage{
			"proceed": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)}})
	}, time.Minute)
	env.ExecuteWorkflow(wire.ToolCallWorkflowName, call("c-ask", "deploy", `{}`))
	res, err := result(t, env)
	require.NoError(t, err)
	assert.Equal(t, answered{accepted: true}, *yes)
	assert.Equal(t, `"deleted 3"`, res.Content())
	assert.Equal(t, int64(2), runs.Load(), "the tool ran again with the answer")
	assert.Equal(t, int64(1), effects.Load(), "the effect before the question happened once: the second run resumed from the checkpoint")

	assert.True(t, state.Waiting)
	assert.Equal(t, 1, state.Round)
	assert.Equal(t, time.Hour, state.Deadline.Sub(state.Since))
	require.Contains(t, state.Requests, "proceed")
	assert.Equal(t, toolcore.MethodElicit, state.Requests["proceed"].Method)
	assert.Contains(t, string(state.Requests["proceed"].Params), `delete 3 resources?`)
}

func TestAskDeclinedAnswerReachesTheTool(t *testing.T) {
	var runs, effects atomic.Int64
	reg, err := toolcore.NewRegistry(deployTool(&runs, &effects))
	require.NoError(t, err)
	env := askEnv(t, reg, nil)
	var no *answered
	env.RegisterDelayedCallback(func() {
		no = answer(env, wire.InputAnswer{Responses: map[string]json.RawMessage{"proceed": json.RawMessage(`{"action":"decline"}`)}})
	}, time.Minute)
	env.ExecuteWorkflow(wire.ToolCallWorkflowName, call("c-ask", "deploy", `{}`))
	res, err := result(t, env)
	require.NoError(t, err)
	assert.Equal(t, answered{accepted: true}, *no, "round 0 answers the current round")
	assert.Equal(t, `"kept"`, res.Content())
	assert.Equal(t, int64(1), effects.Load())
}

func TestAskRefusesMalformedOrForeignAnswers(t *testing.T) {
	var runs, effects atomic.Int64
	reg, err := toolcore.NewRegistry(deployTool(&runs, &effects))
	require.NoError(t, err)
	env := askEnv(t, reg, nil)
	yes := json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)
	refusals := map[string]wire.InputAnswer{
		"another round":      {Round: 2, Responses: map[string]json.RawMessage{"proceed": yes}},
		"unknown key":        {Round: 1, Responses: map[string]json.RawMessage{"other": yes}},
		"no answer":          {Round: 1},
		"not an object":      {Round: 1, Responses: map[string]json.RawMessage{"proceed": json.RawMessage(`"yes"`)}},
		"too large":          {Round: 1, Responses: map[string]json.RawMessage{"proceed": json.RawMessage(`{"a":"` + strings.Repeat("a", toolcore.MaxInputResponseBytes) + `"}`)}},
		"a callback's token": {Round: 1, CallbackToken: "t", Responses: map[string]json.RawMessage{"proceed": yes}},
	}
	sent := map[string]*answered{}
	env.RegisterDelayedCallback(func() {
		for name, a := range refusals {
			sent[name] = answer(env, a)
		}
		sent["good"] = answer(env, wire.InputAnswer{Round: 1, Responses: map[string]json.RawMessage{"proceed": yes}})
	}, time.Minute)
	env.ExecuteWorkflow(wire.ToolCallWorkflowName, call("c-ask", "deploy", `{}`))
	res, err := result(t, env)
	require.NoError(t, err)
	for name := range refusals {
		assert.False(t, sent[name].accepted, name)
		assert.Error(t, sent[name].refusal, name)
	}
	assert.Equal(t, answered{accepted: true}, *sent["good"])
	assert.Equal(t, `"deleted 3"`, res.Content())
}

func TestAskTimesOutWithALinkedResult(t *testing.T) {
	var runs, effects atomic.Int64
	reg, err := toolcore.NewRegistry(deployTool(&runs, &effects))
	require.NoError(t, err)
	env := askEnv(t, reg, nil)
	env.ExecuteWorkflow(wire.ToolCallWorkflowName, call("c-ask", "deploy", `{}`))
	res, err := result(t, env)
	require.NoError(t, err)
	assert.Equal(t, "c-ask", res.ToolCallID())
	assert.Equal(t, toolcore.CodeToolExecutionFailed, res.ErrorCode())
	assert.Equal(t, `no answer to "proceed" within 1h0m0s; the tool stopped there`, res.ErrorMessage())
	assert.Equal(t, int64(1), runs.Load())
}

func TestAskCanceledWhileWaiting(t *testing.T) {
	var runs, effects atomic.Int64
	reg, err := toolcore.NewRegistry(deployTool(&runs, &effects))
	require.NoError(t, err)
	env := askEnv(t, reg, nil)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(wire.ToolCallWorkflowName, call("c-ask", "deploy", `{}`))
	_, err = result(t, env)
	var canceled *temporal.CanceledError
	require.ErrorAs(t, err, &canceled)
	assert.Equal(t, int64(1), runs.Load())
}

// fixedURLs mints one known callback URL.
type fixedURLs struct{ token string }

func (u fixedURLs) Mint(_ context.Context, workflowID, key string, ttl time.Duration) (string, string, time.Time, error) {
	sum := sha256.Sum256([]byte(u.token))
	return "https://cb.example/" + workflowID + "/" + key + "/" + u.token, hex.EncodeToString(sum[:]), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(ttl), nil
}

func TestCallbackIsAnsweredOnlyWithItsTokenAndOnce(t *testing.T) {
	var handed []string
	tool := running("pay", toolcore.Options{SideEffect: toolcore.Unsafe, InputTimeout: time.Hour}, func(ctx context.Context) (any, error) {
		r, err := toolcore.Callback(ctx, "paid", func(url string) error { handed = append(handed, url); return nil })
		if err != nil {
			return nil, err
		}
		return map[string]string{"type": r.ContentType, "body": string(r.Body)}, nil
	})
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	env := askEnv(t, reg, fixedURLs{token: "tok-0123456789abcdef"})
	body, _ := json.Marshal(toolcore.CallbackResult{ContentType: "application/json", Body: []byte(`{"status":"paid"}`)})
	var sent []*answered
	env.RegisterDelayedCallback(func() {
		s := inputState(t, env)
		require.Equal(t, toolcore.MethodCallback, s.Requests["paid"].Method)
		assert.NotContains(t, string(s.Requests["paid"].Params), "tok-0123456789abcdef", "the token never enters history")
		for _, token := range []string{"", "tok-wrong"} {
			sent = append(sent, answer(env, wire.InputAnswer{CallbackToken: token, Responses: map[string]json.RawMessage{"paid": body}}))
		}
		sent = append(sent, answer(env, wire.InputAnswer{CallbackToken: "tok-0123456789abcdef", By: "callback", Responses: map[string]json.RawMessage{"paid": body}}))
		sent = append(sent, answer(env, wire.InputAnswer{CallbackToken: "tok-0123456789abcdef", Responses: map[string]json.RawMessage{"paid": body}}))
	}, time.Minute)
	env.ExecuteWorkflow(wire.ToolCallWorkflowName, call("c-pay", "pay", `{}`))
	res, err := result(t, env)
	require.NoError(t, err)
	require.Len(t, sent, 4)
	for _, forged := range sent[:2] {
		assert.False(t, forged.accepted)
		assert.ErrorContains(t, forged.refusal, "only a request to the callback's URL answers it")
	}
	assert.Equal(t, answered{accepted: true}, *sent[2])
	assert.False(t, sent[3].accepted, "a second callback is refused")
	assert.Error(t, sent[3].refusal)
	assert.JSONEq(t, `{"type":"application/json","body":"{\"status\":\"paid\"}"}`, res.Content())
	assert.Equal(t, []string{"https://cb.example/toolcall-ask/paid/tok-0123456789abcdef"}, handed, "the URL is handed out once: the run after the callback does not mint another")
}

func TestAskRoundsAreBounded(t *testing.T) {
	var runs atomic.Int64
	tool := running("curious", toolcore.Options{InputTimeout: time.Hour}, func(ctx context.Context) (any, error) {
		runs.Add(1)
		for i := 0; ; i++ { // every answer leads to one more question
			if _, err := toolcore.Ask(ctx, fmt.Sprintf("q%d", i), toolcore.InputRequest{Method: toolcore.MethodListRoots}); err != nil {
				return nil, err
			}
		}
	})
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	env := askEnv(t, reg, nil)
	var sent []*answered
	for i := 1; i <= wire.MaxInputRounds; i++ {
		env.RegisterDelayedCallback(func() {
			s := inputState(t, env)
			for k := range s.Requests {
				sent = append(sent, answer(env, wire.InputAnswer{Round: s.Round, Responses: map[string]json.RawMessage{k: json.RawMessage(`{"roots":[]}`)}}))
			}
		}, time.Duration(i)*time.Minute)
	}
	env.ExecuteWorkflow(wire.ToolCallWorkflowName, call("c-curious", "curious", `{}`))
	res, err := result(t, env)
	require.NoError(t, err)
	require.Len(t, sent, wire.MaxInputRounds)
	for _, a := range sent {
		assert.Equal(t, answered{accepted: true}, *a)
	}
	assert.Equal(t, toolcore.CodeToolExecutionFailed, res.ErrorCode())
	assert.Equal(t, fmt.Sprintf("the tool asked for input more than %d times; it stopped there", wire.MaxInputRounds), res.ErrorMessage())
	assert.Equal(t, int64(wire.MaxInputRounds+1), runs.Load())
}

// TestInlineInteractiveRunsAsChild: an agent's inline call of an Interactive tool runs as a
// child call workflow, which holds the wait; an inline call of a tool that asks without declaring
// it ends TOOL_EXECUTION_FAILED, its tool run once.
func TestInlineInteractiveRunsAsChild(t *testing.T) {
	var runs atomic.Int64
	asks := func(name string, interactive bool) toolcore.Tool {
		return running(name, toolcore.Options{Interactive: interactive, InputTimeout: time.Minute}, func(ctx context.Context) (any, error) {
			runs.Add(1)
			return toolcore.Confirm(ctx, "proceed", "go?")
		})
	}
	reg := newRegistry(t, asks("declared", true), asks("undeclared", false))
	declared := runAgent(t, reg, call("c1", "declared", `{}`), true, nil)
	assert.Equal(t, 1, declared.children, "the Interactive call ran as a child")
	assert.Contains(t, declared.verdict, `within 1m0s; the tool stopped there`, "the child held the wait")

	runs.Store(0)
	undeclared := runAgent(t, reg, call("c2", "undeclared", `{}`), true, nil)
	assert.Zero(t, undeclared.children)
	assert.Contains(t, undeclared.verdict, `the tool asked for input (proceed) in an agent's inline call; declare it Interactive`)
	assert.Equal(t, int64(1), runs.Load())
}
