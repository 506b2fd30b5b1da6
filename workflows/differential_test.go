package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// TestDifferentialInProcessAndDurable runs one corpus of calls through toolcore.Execute and
// through ToolCallWorkflow with the real ExecuteTool activity, and requires the same outcome:
// byte-identical result messages, the same fatal error text, the same INVALID_TOOL_CALL message.
//
// Left out, because the paths differ by design: retries of transient errors (durable only),
// cancellation (the test environment resolves a canceled activity at once), and validators that
// block (the durable path ends them with a guard; in process they block the caller). A
// TOOL_NOT_FOUND message differs by design too: a worker's names its task queue and tools, so
// the in-process result is compared with that text (see inProcessOutcome).
func TestDifferentialInProcessAndDurable(t *testing.T) {
	tools := hostileTools(t)
	reg := newRegistry(t, tools...)
	var corpus []json.RawMessage
	for _, tool := range tools {
		corpus = append(corpus, call("call-"+tool.Name(), tool.Name(), `{}`))
	}
	corpus = append(corpus,
		call("call-add-1", "add", `{"left":20,"right":22}`),
		call("call-add-big", "add", `{"left":9007199254740993,"right":0}`),
		call("call-add-overflow", "add", `{"left":9223372036854775808,"right":0}`),
		call("call-add-float", "add", `{"left":1.5,"right":0}`),
		call("call-add-extra", "add", `{"left":1,"right":2,"unused":{"deep":[1,2,{"x":null}]}}`),
		call("call-unknown", "does_not_exist", `{}`),
		json.RawMessage(`{"type":"toolCall","id":"call-unknown-odd","name":"Unknown \"tool\" <with> \u00e9 & more","arguments":{}}`),
		json.RawMessage(`{"type":"toolCall","id":"call-order","arguments":{"right":2,"left":1},"name":"add"}`),
		json.RawMessage(`{"type":"toolCall","id":"c","name":"add"}`),
		json.RawMessage(`{"type":"toolCall","id":"c","name":"add","arguments":[]}`),
		json.RawMessage(`{"type":"toolCall","id":"c","name":"add","arguments":{"a":1,"a":2}}`),
		json.RawMessage(`{"type":"toolCall","id":"","name":"add","arguments":{}}`),
		json.RawMessage(`{"type":"toolcall","id":"c","name":"add","arguments":{}}`),
		json.RawMessage(`{"type":"toolCall","id":"c","name":"add","arguments":{},"extra":true}`),
		json.RawMessage(`[{"type":"toolCall"}]`),
	)
	for _, raw := range corpus {
		t.Run(string(raw[:min(len(raw), 80)]), func(t *testing.T) {
			want := inProcessOutcome(t, reg, raw)
			id := "toolcall-unparsed"
			if c, err := toolcore.ParseToolCall(raw); err == nil {
				id = "toolcall-" + c.ID() // the in-process default idempotency key
			}
			got := runWorkflow(t, reg, raw, runOptions{workflowID: id})
			assert.Equal(t, want, durableOutcome(t, got))
		})
	}
}

// inProcessOutcome is toolcore's verdict on raw as one comparable string. Its TOOL_NOT_FOUND
// result is given the durable path's message: the worker's task queue (runWorkflow's
// wire.DefaultTaskQueue) and reg's tools.
func inProcessOutcome(t *testing.T, reg *toolcore.Registry, raw json.RawMessage) string {
	t.Helper()
	c, err := toolcore.ParseToolCall(raw)
	if err != nil {
		var ce *toolcore.ContractError
		require.ErrorAs(t, err, &ce)
		return wire.ErrTypeInvalidToolCall + ": " + ce.Message
	}
	res, err := toolcore.Execute(context.Background(), reg, c)
	if err != nil {
		fatal, ok := toolcore.AsNonRecoverable(err)
		require.True(t, ok, "in-process error is not fatal: %v", err)
		return wire.ErrTypeNonRecoverable + ": " + toolcore.ErrorText(fatal)
	}
	if res.ErrorCode() == toolcore.CodeToolNotFound {
		require.Equal(t, toolcore.NotFoundResult(c), res)
		res = toolcore.NotFoundOnQueueResult(c, wire.DefaultTaskQueue, reg.Names())
	}
	return "result: " + resultJSON(t, res)
}

// durableOutcome is the workflow's verdict as the same kind of string.
func durableOutcome(t *testing.T, r run) string {
	t.Helper()
	if r.err != nil {
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(r.err, &appErr), "workflow error is not an ApplicationError: %v", r.err)
		require.True(t, appErr.NonRetryable())
		return appErr.Type() + ": " + appErr.Message()
	}
	return "result: " + resultJSON(t, r.result)
}

// TestDifferentialLocalAndActivity runs the corpus of hostile tools, defined ReadOnly, through
// ToolCallWorkflow twice: as ordinary activities and with Options.Local (a local activity in the
// workflow task). Both paths must give the same outcome as each other and as toolcore.Execute:
// byte-identical result messages, the same fatal error text, transient errors retried alike.
func TestDifferentialLocalAndActivity(t *testing.T) {
	readOnly := toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 2}
	local := readOnly
	local.Local = true
	activityTools := hostileToolsWith(t, readOnly)
	activityReg := newRegistry(t, activityTools...)
	localReg := newRegistry(t, hostileToolsWith(t, local)...)
	corpus := []json.RawMessage{call("call-add-1", "add", `{"left":20,"right":22}`), call("call-unknown", "does_not_exist", `{}`)}
	for _, tool := range activityTools {
		corpus = append(corpus, call("call-"+tool.Name(), tool.Name(), `{}`))
	}
	for _, raw := range corpus {
		t.Run(string(raw[:min(len(raw), 80)]), func(t *testing.T) {
			id := "toolcall-" + mustCall(t, raw).ID()
			want := inProcessOutcome(t, activityReg, raw)
			viaActivity := runWorkflow(t, activityReg, raw, runOptions{workflowID: id})
			viaLocal := runWorkflow(t, localReg, raw, runOptions{workflowID: id})
			assert.Equal(t, want, durableOutcome(t, viaActivity), "activity path")
			assert.Equal(t, want, durableOutcome(t, viaLocal), "local path")
			assert.Zero(t, viaLocal.attempts, "a Local tool never runs as an activity task")
			assert.Equal(t, viaActivity.attempts, viaLocal.local, "the same attempts, as local activities")
		})
	}
}

// TestLocalCallCanceledEndsCanceled: canceling a call whose Local tool is running cancels the
// tool's context and ends the call Canceled, as on the activity path.
func TestLocalCallCanceledEndsCanceled(t *testing.T) {
	stopped := make(chan error, 1)
	blocking := running("blocking", toolcore.Options{SideEffect: toolcore.ReadOnly, Local: true},
		func(ctx context.Context) (any, error) {
			<-ctx.Done() // runs until canceled
			stopped <- ctx.Err()
			return nil, ctx.Err()
		})
	got := runWorkflow(t, newRegistry(t, blocking), call("c1", "blocking", `{}`), runOptions{
		workflows: workflows.Workflows{SearchAttributes: true},
		setup: func(env *testsuite.TestWorkflowEnvironment) {
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
		},
	})
	require.Error(t, got.err)
	assert.True(t, temporal.IsCanceledError(got.err), "want a canceled workflow, got %v", got.err)
	assert.True(t, got.result.IsZero())
	assert.Equal(t, 1, got.local, "the tool ran as a local activity")
	assert.Zero(t, got.attempts)
	assert.Equal(t, "canceled", got.outcome)
	assert.ErrorIs(t, <-stopped, context.Canceled, "the tool's context was canceled")
}
