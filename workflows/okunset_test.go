package workflows_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// TestOKCallClosesWithoutUpsert: a call started with ToolName and ToolCallId and the input
// metadata wire.OutcomeRuleOKUnset (as the client and ExecuteToolCall with
// CallOptions.SearchAttributes start it) whose tool returned a non-error result closes without
// upserting ToolOutcome (2 billable actions: the start and the activity); every other outcome,
// and an ok call a foreign client started without the rule, still upserts.
func TestOKCallClosesWithoutUpsert(t *testing.T) {
	reg := newRegistry(t, addTool())
	tests := []struct {
		name        string
		raw         json.RawMessage
		wantOutcome string // "" for none upserted
	}{
		{name: "ok", raw: call("c1", "add", `{"left":1,"right":2}`)},
		{name: "error result", raw: call("c1", "add", `{"left":"x","right":2}`), wantOutcome: toolcore.CodeToolArgumentsInvalid.String()},
		{name: "not found", raw: call("c1", "nope", `{}`), wantOutcome: toolcore.CodeToolNotFound.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name+", searchable at start", func(t *testing.T) {
			outcomes, _, _ := childUpserts(t, reg, tt.raw, workflows.CallOptions{SearchAttributes: true})
			if tt.wantOutcome == "" {
				assert.Empty(t, outcomes, "no ToolOutcome upsert")
			} else {
				assert.Equal(t, []string{tt.wantOutcome}, outcomes)
			}
		})
	}
	t.Run("ok, started by a foreign client", func(t *testing.T) {
		got := runWorkflow(t, reg, call("c1", "add", `{"left":1,"right":2}`), runOptions{workflows: workflows.Workflows{SearchAttributes: true}})
		require.NoError(t, got.err)
		assert.Equal(t, 1, got.upserts)
		assert.Equal(t, wire.OutcomeOK, got.outcome)
		assert.Equal(t, "add", got.toolName, "ToolName upserted with the outcome")
	})
}

// TestOKOutcomeRuleWithoutAttributesAtStart: a call started with wire.OutcomeRuleOKUnset but
// without ToolName and ToolCallId at start (a child of an agent whose CallOptions leave
// SearchAttributes off, or a client whose detection of the attributes failed) closes ok with its
// ToolName and ToolCallId upserted and ToolOutcome still unset: ok has one recorded form for
// every call toolgate starts. Other outcomes are upserted with the names, as before.
func TestOKOutcomeRuleWithoutAttributesAtStart(t *testing.T) {
	reg := newRegistry(t, addTool())
	tests := []struct {
		name        string
		raw         json.RawMessage
		wantOutcome string // "" for none upserted
	}{
		{name: "ok", raw: call("c1", "add", `{"left":1,"right":2}`)},
		{name: "error result", raw: call("c1", "add", `{"left":"x","right":2}`), wantOutcome: toolcore.CodeToolArgumentsInvalid.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outcomes, names, ids := childUpserts(t, reg, tt.raw, workflows.CallOptions{}) // no attributes at start
			assert.Equal(t, []string{"add"}, names, "ToolName upserted at close")
			assert.Equal(t, []string{"c1"}, ids, "ToolCallId upserted at close")
			if tt.wantOutcome == "" {
				assert.Empty(t, outcomes, "an ok call records no ToolOutcome")
			} else {
				assert.Equal(t, []string{tt.wantOutcome}, outcomes)
			}
		})
	}
}

// childUpserts runs raw as a child ToolCallWorkflow of an agent workflow with opts and returns
// the ToolOutcome, ToolName and ToolCallId values the child upserted, in order.
func childUpserts(t *testing.T, reg *toolcore.Registry, raw json.RawMessage, opts workflows.CallOptions) (outcomes, names, ids []string) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Hour})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-1", TaskQueue: wire.DefaultTaskQueue})
	(&workflows.Workflows{Registry: reg, SearchAttributes: true}).Register(env)
	(&activities.Activities{Registry: reg}).Register(env)
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, raw json.RawMessage) error {
		c, err := toolcore.ParseToolCall(raw)
		if err != nil {
			return err
		}
		_, err = workflows.ExecuteToolCall(workflows.WithCallOptions(ctx, opts), c)
		return err
	}, workflow.RegisterOptions{Name: "agent"})
	keyword := func(sa temporal.SearchAttributes, name string, into *[]string) {
		if v, ok := sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(name)); ok {
			*into = append(*into, v)
		}
	}
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		keyword(sa, wire.SearchAttributeToolOutcome, &outcomes)
		keyword(sa, wire.SearchAttributeToolName, &names)
		keyword(sa, wire.SearchAttributeToolCallID, &ids)
	}).Return(nil).Maybe()
	env.ExecuteWorkflow("agent", raw)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	return outcomes, names, ids
}
