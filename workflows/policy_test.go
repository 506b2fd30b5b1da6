package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// policyDoneWhen is issue 32's example set, plus a policy that asks a human about big writes.
const policyDoneWhen = fixtures.ExamplePolicy + `
@id("ask-before-writing-etc")
@reason("writes under /etc need a human")
@effect("approve")
forbid (principal, action, resource == Toolgate::Tool::"write_file")
when { context.arguments has path && context.arguments.path like "/etc/*" };
`

// policyArgs are the arguments of the policy tests' tools.
type policyArgs struct {
	Left int    `json:"left,omitempty"`
	Path string `json:"path,omitempty"`
}

// policyTool defines a tool named name taking policyArgs that counts its runs.
func policyTool(name string, runs *atomic.Int64) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[policyArgs]{
		Name:        name,
		Description: "counts its runs",
		Validate: func(a toolcore.Arguments) toolcore.Decision[policyArgs] {
			var v policyArgs
			if err := json.Unmarshal(a.Raw(), &v); err != nil {
				return toolcore.Reject[policyArgs](err.Error())
			}
			return toolcore.Accept(v)
		},
		Execute: func(context.Context, policyArgs) (any, error) {
			runs.Add(1)
			return map[string]any{"ran": true}, nil
		},
		Options: toolcore.Options{ApprovalTimeout: time.Hour},
	})
}

func policyRegistry(t *testing.T, runs *atomic.Int64) *toolcore.Registry {
	t.Helper()
	reg, err := toolcore.NewRegistry(policyTool("add", runs), policyTool("write_file", runs))
	require.NoError(t, err)
	return reg.Snapshot()
}

func mustSource(t *testing.T, text string, logOnly bool) *policy.Source {
	t.Helper()
	set, err := policy.Parse("test.cedar", []byte(text))
	require.NoError(t, err)
	return policy.NewSource(set, logOnly)
}

func withPrincipalMemo(t *testing.T, p *toolcore.Principal) func(env *testsuite.TestWorkflowEnvironment) {
	return func(env *testsuite.TestWorkflowEnvironment) {
		if p != nil {
			require.NoError(t, env.SetMemoOnStart(map[string]any{wire.MemoPrincipal: p}))
		}
	}
}

// TestPolicyDecidesCalls: with issue 32's set, a denied call ends POLICY_DENIED naming the policy
// and its reason with no ExecuteTool attempt and ToolOutcome POLICY_DENIED; an allowed one runs;
// in log-only mode the would-be denial runs; without a policy everything runs.
func TestPolicyDecidesCalls(t *testing.T) {
	guest := &toolcore.Principal{Issuer: "https://idp", Subject: "bob", Groups: []string{"guests"}}
	staff := &toolcore.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"staff"}}
	tests := []struct {
		name         string
		source       *policy.Source
		principal    *toolcore.Principal
		tool, args   string
		wantAttempts int
		wantContent  string
		wantOutcome  string
	}{
		{name: "guest write_file denied", source: mustSource(t, policyDoneWhen, false), principal: guest, tool: "write_file", args: `{"path":"/tmp/a"}`,
			wantContent: `{"error":{"code":"POLICY_DENIED","message":"denied by policy \"guests-no-write\": guests may not write files; the tool did not run"}}`,
			wantOutcome: "POLICY_DENIED"},
		{name: "staff write_file runs", source: mustSource(t, policyDoneWhen, false), principal: staff, tool: "write_file", args: `{"path":"/tmp/a"}`,
			wantAttempts: 1, wantContent: `{"ran":true}`, wantOutcome: wire.OutcomeOK},
		{name: "anonymous add 1000 denied", source: mustSource(t, policyDoneWhen, false), tool: "add", args: `{"left":1000}`,
			wantContent: `{"error":{"code":"POLICY_DENIED","message":"denied by policy \"add-small\": add takes left below 1000; the tool did not run"}}`,
			wantOutcome: "POLICY_DENIED"},
		{name: "add 999 runs", source: mustSource(t, policyDoneWhen, false), principal: guest, tool: "add", args: `{"left":999}`,
			wantAttempts: 1, wantContent: `{"ran":true}`, wantOutcome: wire.OutcomeOK},
		{name: "log-only runs the would-be denial", source: mustSource(t, policyDoneWhen, true), principal: guest, tool: "write_file", args: `{"path":"/tmp/a"}`,
			wantAttempts: 1, wantContent: `{"ran":true}`, wantOutcome: wire.OutcomeOK},
		{name: "no policy runs", source: nil, principal: guest, tool: "write_file", args: `{"path":"/tmp/a"}`,
			wantAttempts: 1, wantContent: `{"ran":true}`, wantOutcome: wire.OutcomeOK},
		{name: "no permit denies", source: mustSource(t, `permit (principal, action, resource == Toolgate::Tool::"echo");`, false), tool: "add", args: `{"left":1}`,
			wantContent: `{"error":{"code":"POLICY_DENIED","message":"no policy permits this call; the tool did not run"}}`,
			wantOutcome: "POLICY_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			r := runWorkflow(t, policyRegistry(t, &runs), call("c-1", tt.tool, tt.args), runOptions{
				workflows: workflows.Workflows{Policy: tt.source, SearchAttributes: true},
				setup:     withPrincipalMemo(t, tt.principal),
			})
			require.NoError(t, r.err)
			assert.Equal(t, tt.wantContent, r.result.Content())
			assert.Equal(t, tt.wantAttempts, r.attempts)
			assert.Equal(t, int64(tt.wantAttempts), runs.Load())
			assert.Equal(t, tt.wantOutcome, r.outcome)
		})
	}
}

// TestPolicyApprovalWaitsForADecision: a policy's @effect("approve") holds a call whose tool does
// not require approval until a reviewer decides: rejected, nothing runs; approved, it runs once.
func TestPolicyApprovalWaitsForADecision(t *testing.T) {
	tests := []struct {
		name         string
		update       string
		wantAttempts int
		wantCode     string
	}{
		{name: "rejected", update: wire.UpdateReject, wantCode: "TOOL_APPROVAL_REJECTED"},
		{name: "approved", update: wire.UpdateApprove, wantAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			results := make([]updateResult, 1)
			var waiting wire.ApprovalState
			r := runWorkflow(t, policyRegistry(t, &runs), call("c-1", "write_file", `{"path":"/etc/passwd"}`), runOptions{
				workflows: workflows.Workflows{Policy: mustSource(t, policyDoneWhen, false)},
				setup: func(env *testsuite.TestWorkflowEnvironment) {
					env.RegisterDelayedCallback(func() {
						v, err := env.QueryWorkflow(wire.QueryApproval)
						require.NoError(t, err)
						require.NoError(t, v.Get(&waiting))
					}, 30*time.Second)
					sendDecisions(t, env, []decision{{update: tt.update, give: wire.ApprovalDecision{Reviewer: "carol"}}}, &results)
				},
			})
			require.NotNil(t, waiting.Policy, "the reviewer sees which policy asked")
			assert.Equal(t, "ask-before-writing-etc", waiting.Policy.PolicyID)
			assert.Equal(t, "writes under /etc need a human", waiting.Policy.Reason)
			require.NoError(t, r.err)
			require.True(t, results[0].sent, "the call waited for a decision")
			require.NoError(t, results[0].err)
			assert.Equal(t, tt.wantAttempts, r.attempts)
			assert.Equal(t, int64(tt.wantAttempts), runs.Load())
			if tt.wantCode != "" {
				assert.Equal(t, tt.wantCode, r.result.ErrorCode().String())
			}
		})
	}
}

// TestPolicyDecidesInlineCalls: an agent run's inline calls made with workflows.WithPolicy are
// decided in the agent's own workflow code: the denied one is POLICY_DENIED with no ExecuteTool
// attempt and no child, the allowed one runs inline; without WithPolicy both run.
func TestPolicyDecidesInlineCalls(t *testing.T) {
	src := mustSource(t, policyDoneWhen, false)
	tests := []struct {
		name         string
		src          *policy.Source
		field        bool // Inline.Policy instead of WithPolicy
		wantVerdicts []string
		wantAttempts int64
	}{
		{name: "with policy", src: src, wantAttempts: 1, wantVerdicts: []string{
			`{"error":{"code":"POLICY_DENIED","message":"denied by policy \"add-small\": add takes left below 1000; the tool did not run"}}`,
			`{"ran":true}`,
		}},
		{name: "Inline.Policy", src: src, field: true, wantAttempts: 1, wantVerdicts: []string{
			`{"error":{"code":"POLICY_DENIED","message":"denied by policy \"add-small\": add takes left below 1000; the tool did not run"}}`,
			`{"ran":true}`,
		}},
		{name: "without", wantAttempts: 2, wantVerdicts: []string{`{"ran":true}`, `{"ran":true}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			reg := policyRegistry(t, &runs)
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-1", TaskQueue: wire.DefaultTaskQueue})
			(&activities.Activities{Registry: reg}).Register(env)
			var children atomic.Int64
			env.SetOnChildWorkflowStartedListener(func(*workflow.Info, workflow.Context, converter.EncodedValues) { children.Add(1) })
			inline := &workflows.Inline{Registry: reg}
			if tt.field {
				inline.Policy = tt.src
			}
			env.ExecuteWorkflow(func(ctx workflow.Context) ([]string, error) {
				if !tt.field {
					ctx = workflows.WithPolicy(ctx, tt.src)
				}
				var out []string
				for i, args := range []string{`{"left":5000}`, `{"left":5}`} {
					c, err := toolcore.NewToolCall(fmt.Sprintf("i-%d", i), "add", []byte(args))
					if err != nil {
						return nil, err
					}
					res, err := inline.ExecuteToolCall(ctx, c)
					if err != nil {
						return nil, err
					}
					out = append(out, res.Content())
				}
				return out, nil
			})
			require.NoError(t, env.GetWorkflowError())
			var got []string
			require.NoError(t, env.GetWorkflowResult(&got))
			assert.Equal(t, tt.wantVerdicts, got)
			assert.Equal(t, tt.wantAttempts, runs.Load())
			assert.Zero(t, children.Load())
		})
	}
}

// TestPolicyDecidesAnAgentRound: a round of calls an agent workflow starts as child
// ToolCallWorkflows is decided by the worker's policy: the big add ends POLICY_DENIED, the small
// ones run. (The test environment does not pass a child's memo, so its principal is tested with
// a ToolCallWorkflow's own memo in TestPolicyDecidesCalls and end to end in TestPolicyEndToEnd.)
func TestPolicyDecidesAnAgentRound(t *testing.T) {
	var runs atomic.Int64
	reg := policyRegistry(t, &runs)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-1", TaskQueue: wire.DefaultTaskQueue})
	(&workflows.Workflows{Registry: reg, Policy: mustSource(t, policyDoneWhen, false)}).Register(env)
	(&activities.Activities{Registry: reg}).Register(env)
	env.ExecuteWorkflow(func(ctx workflow.Context) ([]string, error) {
		var calls []toolcore.ToolCall
		for i, c := range [][2]string{{"add", `{"left":7}`}, {"add", `{"left":5000}`}, {"add", `{"left":5}`}} {
			call, err := toolcore.NewToolCall(fmt.Sprintf("r-%d", i), c[0], []byte(c[1]))
			if err != nil {
				return nil, err
			}
			calls = append(calls, call)
		}
		outcomes, err := workflows.ExecuteRound(ctx, calls, toolcore.RoundOptions{})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, o := range outcomes {
			out = append(out, o.Result.Content())
		}
		return out, nil
	})
	require.NoError(t, env.GetWorkflowError())
	var got []string
	require.NoError(t, env.GetWorkflowResult(&got))
	assert.Equal(t, []string{
		`{"ran":true}`,
		`{"error":{"code":"POLICY_DENIED","message":"denied by policy \"add-small\": add takes left below 1000; the tool did not run"}}`,
		`{"ran":true}`,
	}, got)
	assert.Equal(t, int64(2), runs.Load())
}
