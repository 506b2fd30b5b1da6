package workflows_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// whoami is a tool that returns the principal it runs for ("none" without one).
func whoami(t *testing.T) *toolcore.Registry {
	t.Helper()
	tool, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "whoami",
		Description: "Says whom the call runs for.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute: func(ctx context.Context, _ map[string]any) (any, error) {
			p, _ := toolcore.CallPrincipal(ctx)
			return p.String(), nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	return reg
}

// TestToolCallWorkflowPrincipalReachesTool: the principal of the start's memo reaches the tool
// (toolcore.CallPrincipal), marked asserted or authenticated as the start says.
func TestToolCallWorkflowPrincipalReachesTool(t *testing.T) {
	reg := whoami(t)
	for _, tc := range []struct {
		name string
		memo any
		want string
	}{
		{"none", nil, `"none"`},
		{"asserted", toolcore.Principal{Issuer: "https://idp", Subject: "alice", Tenant: "acme"}, `"alice (https://idp), tenant acme, asserted"`},
		{"mcp", toolcore.Principal{Issuer: "https://idp", Subject: "bob", AuthenticatedBy: toolcore.AuthenticatedByMCP}, `"bob (https://idp), authenticated by mcp"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runWorkflow(t, reg, call("p-1", "whoami", `{}`), runOptions{setup: func(env *testsuite.TestWorkflowEnvironment) {
				if tc.memo != nil {
					require.NoError(t, env.SetMemoOnStart(map[string]any{wire.MemoPrincipal: tc.memo}))
				}
			}})
			require.NoError(t, r.err)
			assert.Equal(t, tc.want, r.result.Content())
		})
	}
}

// TestToolCallWorkflowRefusesBadPrincipal: a principal memo that fails Check fails the call as
// INVALID_TOOL_CALL and nothing runs.
func TestToolCallWorkflowRefusesBadPrincipal(t *testing.T) {
	for name, memo := range map[string]any{
		"no subject":    toolcore.Principal{Issuer: "https://idp"},
		"unknown mark":  toolcore.Principal{Subject: "alice", AuthenticatedBy: "me"},
		"control char":  toolcore.Principal{Subject: "al\nice"},
		"not an object": "alice",
	} {
		t.Run(name, func(t *testing.T) {
			r := runWorkflow(t, whoami(t), call("p-2", "whoami", `{}`), runOptions{setup: func(env *testsuite.TestWorkflowEnvironment) {
				require.NoError(t, env.SetMemoOnStart(map[string]any{wire.MemoPrincipal: memo}))
			}})
			require.Error(t, r.err)
			assert.Contains(t, r.err.Error(), wire.MemoPrincipal)
			assert.Zero(t, r.attempts, "nothing runs")
		})
	}
}

// TestInlineCallsActForTheAgentsPrincipal: an agent run's inline calls run for the run's
// principal, with the run as the actor.
func TestInlineCallsActForTheAgentsPrincipal(t *testing.T) {
	reg := whoami(t)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-1", TaskQueue: wire.DefaultTaskQueue})
	require.NoError(t, env.SetMemoOnStart(map[string]any{wire.MemoPrincipal: toolcore.Principal{Subject: "carol", Groups: []string{"eng"}}}))
	inline := &workflows.Inline{Registry: reg}
	(&activities.Activities{Registry: reg}).Register(env)
	env.ExecuteWorkflow(func(ctx workflow.Context) (string, error) {
		c, err := toolcore.NewToolCall("i-1", "whoami", []byte(`{}`))
		if err != nil {
			return "", err
		}
		res, err := inline.ExecuteToolCall(ctx, c)
		return res.Content(), err
	})
	require.NoError(t, env.GetWorkflowError())
	var got string
	require.NoError(t, env.GetWorkflowResult(&got))
	assert.Equal(t, `"carol, via agent-1, asserted"`, got)
}
