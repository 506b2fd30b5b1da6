package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// agentRun is what one test agent workflow run produced.
type agentRun struct {
	verdict  string // the call's outcome as one comparable string
	attempts int    // ExecuteTool attempts started
	children int    // child workflows started
	keys     []string
}

// runAgent runs one call from an agent workflow (ID "agent-1"): inline with workflows.Inline, or
// as a child ToolCallWorkflow with ExecuteToolCall.
func runAgent(t *testing.T, reg *toolcore.Registry, raw json.RawMessage, inline bool, setup func(*testsuite.TestWorkflowEnvironment)) agentRun {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Hour})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-1", TaskQueue: wire.DefaultTaskQueue})
	(&workflows.Workflows{Registry: reg}).Register(env)
	(&activities.Activities{Registry: reg}).Register(env)
	tools := &workflows.Inline{Registry: reg}
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, raw json.RawMessage) (string, error) {
		c, err := toolcore.ParseToolCall(raw)
		if err != nil {
			return "", err
		}
		var res toolcore.Result
		if inline {
			res, err = tools.ExecuteToolCall(ctx, c)
		} else {
			res, err = workflows.ExecuteToolCall(ctx, c)
		}
		return verdictOf(res, err), nil
	}, workflow.RegisterOptions{Name: "agent"})
	var r agentRun
	var attempts, children atomic.Int64
	env.SetOnActivityStartedListener(func(_ *activity.Info, _ context.Context, args converter.EncodedValues) {
		attempts.Add(1)
		var in activities.ExecuteToolInput
		if args.Get(&in) == nil && in.IdempotencyKey != "" {
			r.keys = append(r.keys, in.IdempotencyKey)
		}
	})
	env.SetOnChildWorkflowStartedListener(func(*workflow.Info, workflow.Context, converter.EncodedValues) {
		children.Add(1)
	})
	if setup != nil {
		setup(env)
	}
	env.ExecuteWorkflow("agent", raw)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, env.GetWorkflowResult(&r.verdict))
	r.attempts, r.children = int(attempts.Load()), int(children.Load())
	return r
}

// verdictOf is what ExecuteToolCall returned as one comparable string.
func verdictOf(res toolcore.Result, err error) string {
	var ce *toolcore.ContractError
	switch fatal, isFatal := toolcore.AsNonRecoverable(err); {
	case err == nil:
		b, merr := res.MarshalJSON()
		if merr != nil {
			return "marshal: " + merr.Error()
		}
		return "result: " + string(b)
	case isFatal:
		return "fatal: " + toolcore.ErrorText(fatal)
	case errors.As(err, &ce):
		return "contract: " + ce.Message
	case temporal.IsCanceledError(err):
		return "canceled"
	default:
		return "error: " + err.Error()
	}
}

// TestDifferentialInlineAndChild runs one corpus of calls from an agent workflow twice, inline
// (workflows.Inline) and as child ToolCallWorkflows (workflows.ExecuteToolCall), with the real
// ExecuteTool activity, and requires the same outcome: byte-identical result messages, the same
// fatal error text, the same attempts; the inline path starts no child, and its idempotency key
// is "<agent workflow ID>/call/<call ID>".
func TestDifferentialInlineAndChild(t *testing.T) {
	flakyRuns := 0
	flaky := running("flaky", toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 3}, func(ctx context.Context) (any, error) {
		if toolcore.Attempt(ctx) < 2 {
			flakyRuns++
			return nil, toolcore.Transient(errors.New("try again"))
		}
		return map[string]int{"attempt": toolcore.Attempt(ctx)}, nil
	})
	localFlaky := running("local_flaky", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 2, Local: true}, func(ctx context.Context) (any, error) {
		if toolcore.Attempt(ctx) < 2 {
			return nil, toolcore.Transient(errors.New("try again"))
		}
		return "local", nil
	})
	tools := append(hostileTools(t), flaky, localFlaky)
	reg := newRegistry(t, tools...)
	var corpus []json.RawMessage
	for _, tool := range tools {
		corpus = append(corpus, call("call-"+tool.Name(), tool.Name(), `{}`))
	}
	corpus = append(corpus,
		call("call-add-1", "add", `{"left":20,"right":22}`),
		call("call-add-big", "add", `{"left":9007199254740993,"right":0}`),
		call("call-add-float", "add", `{"left":1.5,"right":0}`),
		call("call-unknown", "does_not_exist", `{}`),
		json.RawMessage(`{"type":"toolCall","id":"call-unknown-odd","name":"Unknown \"tool\" <with> \u00e9 & more","arguments":{}}`),
		json.RawMessage(`{"type":"toolCall","id":"call-order","arguments":{"right":2,"left":1},"name":"add"}`),
	)
	for _, raw := range corpus {
		t.Run(string(raw[:min(len(raw), 80)]), func(t *testing.T) {
			child := runAgent(t, reg, raw, false, nil)
			inline := runAgent(t, reg, raw, true, nil)
			// The one difference by design: a tool that echoes its idempotency key
			// (execution_values) sees the inline key in place of the child's workflow ID.
			id := mustCall(t, raw).ID()
			assert.Equal(t, strings.ReplaceAll(child.verdict, "toolcall-"+id, "agent-1/call/"+id), inline.verdict)
			assert.Equal(t, child.attempts, inline.attempts, "the same ExecuteTool attempts")
			assert.Zero(t, inline.children, "an inline call starts no workflow")
			for _, key := range inline.keys {
				assert.Equal(t, "agent-1/call/"+id, key)
			}
		})
	}
	assert.Positive(t, flakyRuns, "the transient error was retried")
}

// TestInlineApprovalGatedRunsAsChild: a call whose tool needs approval does not run inline: it
// runs as a child ToolCallWorkflow (the reviewer's updates go to its own workflow), here to its
// approval expiry, with the child path's result.
func TestInlineApprovalGatedRunsAsChild(t *testing.T) {
	gated := running("gated", toolcore.Options{RequireApproval: true, ApprovalTimeout: time.Minute}, func(context.Context) (any, error) {
		return "ran", nil
	})
	reg := newRegistry(t, gated)
	raw := call("call-gated", "gated", `{}`)
	child := runAgent(t, reg, raw, false, nil)
	inline := runAgent(t, reg, raw, true, nil)
	assert.Equal(t, 1, inline.children, "the approval-gated call ran as a child")
	assert.Zero(t, inline.attempts)
	assert.Equal(t, child.verdict, inline.verdict)
	assert.Contains(t, inline.verdict, toolcore.CodeToolApprovalExpired.String())
}

// TestInlineCanceledWithAgent: canceling the agent workflow cancels an inline call's running
// tool, waits for it to stop, and ExecuteToolCall returns a canceled error, as on the child path.
func TestInlineCanceledWithAgent(t *testing.T) {
	for _, inline := range []bool{false, true} {
		stopped := make(chan error, 1)
		blocking := running("blocking", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(ctx context.Context) (any, error) {
			<-ctx.Done()
			stopped <- ctx.Err()
			return nil, ctx.Err()
		})
		got := runAgent(t, newRegistry(t, blocking), call("c1", "blocking", `{}`), inline, func(env *testsuite.TestWorkflowEnvironment) {
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
		})
		assert.Equal(t, "canceled", got.verdict, "inline=%v", inline)
		assert.ErrorIs(t, <-stopped, context.Canceled, "the tool's context was canceled")
	}
}

// TestInlineCallsDefaultToTheAgentsFairnessKey: an inline call's ExecuteTool activity has the
// priority its child ToolCallWorkflow would have (ExecuteToolCall): CallOptions.Priority, the
// fairness key defaulting to the agent's own key, else FairnessKeyOf(the agent's workflow ID).
func TestInlineCallsDefaultToTheAgentsFairnessKey(t *testing.T) {
	tool := running("ok", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(context.Context) (any, error) { return "ok", nil })
	reg := newRegistry(t, tool)
	// The test environment gives a workflow no start priority (Info.Priority is always zero), so
	// the agent's own key, which takes precedence over its ID (childPriority), is not tried here.
	tests := []struct {
		name string
		call wire.Priority // CallOptions.Priority
		want temporal.Priority
	}{
		{name: "default: the agent's workflow ID", want: temporal.Priority{FairnessKey: wire.FairnessKeyOf("agent-1")}},
		{name: "call options", call: wire.Priority{Level: 1, FairnessKey: "user-3", FairnessWeight: 2},
			want: temporal.Priority{PriorityKey: 1, FairnessKey: "user-3", FairnessWeight: 2}},
		{name: "a level without a key", call: wire.Priority{Level: 4},
			want: temporal.Priority{PriorityKey: 4, FairnessKey: wire.FairnessKeyOf("agent-1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-1", TaskQueue: wire.DefaultTaskQueue})
			(&activities.Activities{Registry: reg}).Register(env)
			tools := &workflows.Inline{Registry: reg}
			env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (string, error) {
				ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{Priority: tt.call})
				res, err := tools.ExecuteToolCall(ctx, mustCall(t, call("c1", "ok", `{}`)))
				return verdictOf(res, err), nil
			}, workflow.RegisterOptions{Name: "agent"})
			// The test environment leaves the priority off the activity's Info: read it where the
			// workflow schedules the activity.
			rec := &priorityRecorder{}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
			env.ExecuteWorkflow("agent")
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var verdict string
			require.NoError(t, env.GetWorkflowResult(&verdict))
			assert.Contains(t, verdict, "result: ")
			assert.Equal(t, []temporal.Priority{tt.want}, rec.priorities)
		})
	}
}

// priorityRecorder records the priority of every activity a workflow schedules.
type priorityRecorder struct {
	interceptor.WorkerInterceptorBase
	priorities []temporal.Priority
}

func (r *priorityRecorder) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &priorityInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, r: r}
}

type priorityInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	r *priorityRecorder
}

func (i *priorityInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&priorityOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, r: i.r})
}

type priorityOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	r *priorityRecorder
}

func (o *priorityOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.r.priorities = append(o.r.priorities, workflow.GetActivityOptions(ctx).Priority)
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}
