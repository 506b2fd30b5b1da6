package workflows_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// run is what one ToolCallWorkflow execution in the test environment produced.
type run struct {
	result   toolcore.Result // zero when the workflow did not complete with a result
	err      error           // the workflow error, nil when it completed
	attempts int             // ExecuteTool attempts started
	local    int             // ExecuteTool attempts started as local activities
	outcome  string          // ToolOutcome upserted, "" if none
	outcomes []string        // every ToolOutcome upserted, in order ("" for an unset)
	upserts  int             // UpsertTypedSearchAttributes calls
	toolName string          // ToolName upserted with the outcome
	callID   string          // ToolCallId upserted with the outcome
}

// runOptions tune runWorkflow. The zero value runs the real activity, search attributes off.
type runOptions struct {
	workflows  workflows.Workflows // Registry is set by runWorkflow
	workflowID string              // default "toolcall-test"
	setup      func(env *testsuite.TestWorkflowEnvironment)
}

// runWorkflow executes ToolCallWorkflow with input (a json.RawMessage call, or any payload value)
// against reg, with the real ExecuteTool activity unless setup mocks it.
func runWorkflow(t *testing.T, reg *toolcore.Registry, input any, opts runOptions) run {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	id := opts.workflowID
	if id == "" {
		id = "toolcall-test"
	}
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id, TaskQueue: wire.DefaultTaskQueue})

	wf := opts.workflows
	wf.Registry = reg
	wf.Register(env)
	(&activities.Activities{Registry: reg}).Register(env)

	var attempts atomic.Int64
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) {
		attempts.Add(1)
	})
	var local atomic.Int64
	env.SetOnLocalActivityStartedListener(func(*activity.Info, context.Context, []any) {
		local.Add(1)
	})
	var r run
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		r.upserts++
		r.outcome, _ = sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolOutcome))
		r.outcomes = append(r.outcomes, r.outcome)
		r.toolName, _ = sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolName))
		r.callID, _ = sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolCallID))
	}).Return(nil).Maybe()
	if opts.setup != nil {
		opts.setup(env)
	}

	env.ExecuteWorkflow(wire.ToolCallWorkflowName, input)
	require.True(t, env.IsWorkflowCompleted(), "workflow did not complete")
	r.err = env.GetWorkflowError()
	if r.err == nil {
		require.NoError(t, env.GetWorkflowResult(&r.result))
	}
	r.attempts = int(attempts.Load())
	r.local = int(local.Load())
	return r
}

// call returns the wire JSON of a tool call to name with arguments (a JSON object).
func call(id, name, arguments string) json.RawMessage {
	return json.RawMessage(`{"type":"toolCall","id":"` + id + `","name":"` + name + `","arguments":` + arguments + `}`)
}

// mustCall parses a wire call or fails the test.
func mustCall(t testing.TB, raw json.RawMessage) toolcore.ToolCall {
	t.Helper()
	c, err := toolcore.ParseToolCall(raw)
	require.NoError(t, err)
	return c
}

// resultJSON encodes a result to its wire JSON or fails the test.
func resultJSON(t testing.TB, r toolcore.Result) string {
	t.Helper()
	b, err := r.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}
