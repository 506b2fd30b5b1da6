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
				_, err = workflows.ExecuteToolCall(ctx, c) // CallOptions zero: no attributes at start
				return err
			}, workflow.RegisterOptions{Name: "agent"})
			var outcomes, names, ids []string
			env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
				sa := args.Get(0).(temporal.SearchAttributes)
				if o, ok := sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolOutcome)); ok {
					outcomes = append(outcomes, o)
				}
				if n, ok := sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolName)); ok {
					names = append(names, n)
				}
				if id, ok := sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolCallID)); ok {
					ids = append(ids, id)
				}
			}).Return(nil).Maybe()
			env.ExecuteWorkflow("agent", tt.raw)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
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
