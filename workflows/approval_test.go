package workflows_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// approvalTool is an Unsafe tool that requires approval and counts its runs.
func approvalTool(runs *atomic.Int64) toolcore.Tool {
	return running("guarded", toolcore.Options{RequireApproval: true, ApprovalTimeout: time.Hour},
		func(context.Context) (any, error) {
			runs.Add(1)
			return map[string]any{"done": true}, nil
		})
}

// decision is one update a test sends while the call waits.
type decision struct {
	update   string
	give     wire.ApprovalDecision
	wrongFor bool // name another call's hash instead of the waiting one's
}

// updateResult is what the test environment reported for one update.
type updateResult struct {
	sent     bool
	rejected error
	record   wire.ApprovalRecord
	err      error
}

// sendDecisions queries the waiting call's hash after a minute and sends the decisions, in
// order, in one workflow task.
func sendDecisions(t *testing.T, env *testsuite.TestWorkflowEnvironment, decisions []decision, results *[]updateResult) {
	if len(decisions) == 0 {
		return
	}
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(wire.QueryApproval)
		require.NoError(t, err)
		var st wire.ApprovalState
		require.NoError(t, v.Get(&st))
		assert.True(t, st.Waiting)
		for i, d := range decisions {
			give := d.give
			give.CallHash = st.CallHash
			if d.wrongFor {
				give.CallHash = "sha256:0000"
			}
			res := &(*results)[i]
			res.sent = true
			env.UpdateWorkflow(d.update, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {},
				OnReject: func(err error) { res.rejected = err },
				OnComplete: func(v any, err error) {
					res.err = err
					if rec, ok := v.(wire.ApprovalRecord); ok {
						res.record = rec
					}
				},
			}, give)
		}
	}, time.Minute)
}

func TestToolCallWorkflowApproval(t *testing.T) {
	alice := wire.ApprovalDecision{Reviewer: "alice", Reason: "too risky"}
	tests := []struct {
		name         string
		decisions    []decision
		want         func(toolcore.ToolCall) toolcore.Result
		wantRuns     int64
		wantRejected []bool // per decision: refused by the validator
	}{
		{
			name:         "approved runs the tool once",
			decisions:    []decision{{update: wire.UpdateApprove, give: alice}},
			want:         func(c toolcore.ToolCall) toolcore.Result { return toolcore.SuccessResult(c, `{"done":true}`) },
			wantRuns:     1,
			wantRejected: []bool{false},
		},
		{
			name:      "rejected carries the reviewer and reason",
			decisions: []decision{{update: wire.UpdateReject, give: alice}},
			want: func(c toolcore.ToolCall) toolcore.Result {
				return toolcore.ApprovalRejectedResult(c, "alice", "too risky")
			},
			wantRejected: []bool{false},
		},
		{
			name:         "a decision for another hash is refused, then the call expires",
			decisions:    []decision{{update: wire.UpdateApprove, give: alice, wrongFor: true}},
			want:         func(c toolcore.ToolCall) toolcore.Result { return toolcore.ApprovalExpiredResult(c, time.Hour) },
			wantRejected: []bool{true},
		},
		{
			name:         "a decision without a reviewer is refused",
			decisions:    []decision{{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "  "}}},
			want:         func(c toolcore.ToolCall) toolcore.Result { return toolcore.ApprovalExpiredResult(c, time.Hour) },
			wantRejected: []bool{true},
		},
		{
			name: "only the first decision applies",
			decisions: []decision{
				{update: wire.UpdateApprove, give: alice},
				{update: wire.UpdateReject, give: wire.ApprovalDecision{Reviewer: "bob"}},
			},
			want:         func(c toolcore.ToolCall) toolcore.Result { return toolcore.SuccessResult(c, `{"done":true}`) },
			wantRuns:     1,
			wantRejected: []bool{false, true},
		},
		{
			name:      "no decision expires",
			decisions: nil,
			want:      func(c toolcore.ToolCall) toolcore.Result { return toolcore.ApprovalExpiredResult(c, time.Hour) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			raw := call("c1", "guarded", `{}`)
			results := make([]updateResult, len(tt.decisions))
			got := runWorkflow(t, newRegistry(t, approvalTool(&runs)), raw, runOptions{
				workflows: workflows.Workflows{SearchAttributes: true},
				setup: func(env *testsuite.TestWorkflowEnvironment) {
					sendDecisions(t, env, tt.decisions, &results)
				},
			})
			require.NoError(t, got.err)
			assert.Equal(t, resultJSON(t, tt.want(mustCall(t, raw))), resultJSON(t, got.result))
			assert.Equal(t, tt.wantRuns, runs.Load())
			require.NotEmpty(t, got.outcomes)
			assert.Equal(t, wire.OutcomeAwaitingApproval, got.outcomes[0])
			for i, res := range results {
				require.True(t, res.sent, "decision %d sent", i)
				assert.Equal(t, tt.wantRejected[i], res.rejected != nil, "decision %d refused: %v", i, res.rejected)
				if res.rejected == nil {
					assert.NoError(t, res.err)
					assert.Equal(t, "alice", res.record.Reviewer)
					assert.Equal(t, toolcore.CallHash(approvalTool(&runs), mustCall(t, raw)), res.record.CallHash)
					assert.False(t, res.record.DecidedAt.IsZero())
				}
			}
		})
	}
}

func TestToolCallWorkflowApprovalCanceledWhileWaiting(t *testing.T) {
	var runs atomic.Int64
	got := runWorkflow(t, newRegistry(t, approvalTool(&runs)), call("c1", "guarded", `{}`), runOptions{
		workflows: workflows.Workflows{SearchAttributes: true},
		setup: func(env *testsuite.TestWorkflowEnvironment) {
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
		},
	})
	require.Error(t, got.err)
	assert.True(t, temporal.IsCanceledError(got.err), "want a canceled workflow, got %v", got.err)
	assert.Zero(t, runs.Load())
	assert.Equal(t, []string{wire.OutcomeAwaitingApproval, "canceled"}, got.outcomes)
}

func TestToolCallWorkflowApprovalRule(t *testing.T) {
	type payment struct {
		Amount int64 `json:"amount"`
	}
	var runs atomic.Int64
	pay := toolcore.MustDefine(toolcore.Definition[payment]{
		Name:        "pay",
		Description: "pays an amount",
		Validate: func(a toolcore.Arguments) toolcore.Decision[payment] {
			n, err := a.Int64("amount")
			if err != nil {
				return toolcore.Reject[payment](err.Error())
			}
			return toolcore.Accept(payment{Amount: n})
		},
		Execute: func(context.Context, payment) (any, error) {
			runs.Add(1)
			return "paid", nil
		},
		Options:      toolcore.Options{ApprovalTimeout: time.Minute},
		ApprovalRule: func(p payment) bool { return p.Amount > 100 },
	})
	small := runWorkflow(t, newRegistry(t, pay), call("c1", "pay", `{"amount":100}`), runOptions{})
	require.NoError(t, small.err)
	assert.False(t, small.result.IsError(), "a call the rule lets through runs at once: %s", resultJSON(t, small.result))
	assert.Equal(t, int64(1), runs.Load())

	big := runWorkflow(t, newRegistry(t, pay), call("c2", "pay", `{"amount":101}`), runOptions{})
	require.NoError(t, big.err)
	assert.Equal(t, toolcore.CodeToolApprovalExpired, big.result.ErrorCode())
	assert.Equal(t, int64(1), runs.Load(), "a call the rule holds does not run without a decision")
}

// An approval rule that blocks is cut off by the validator's wall-clock guard and fails safe:
// the call waits for a reviewer (here none comes, so it expires) and the tool never runs.
func TestToolCallWorkflowBlockingApprovalRule(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var runs atomic.Int64
	hangs := toolcore.MustDefine(toolcore.Definition[struct{}]{
		Name:        "hangs",
		Description: "its approval rule never returns",
		Execute: func(context.Context, struct{}) (any, error) {
			runs.Add(1)
			return "ran", nil
		},
		Options: toolcore.Options{ApprovalTimeout: time.Minute},
		ApprovalRule: func(struct{}) bool {
			<-release
			return false
		},
	})
	got := runWorkflow(t, newRegistry(t, hangs), call("c1", "hangs", `{}`), runOptions{
		workflows: workflows.Workflows{ValidateTimeout: 20 * time.Millisecond},
	})
	require.NoError(t, got.err)
	assert.Equal(t, toolcore.CodeToolApprovalExpired, got.result.ErrorCode())
	assert.Zero(t, runs.Load(), "a call whose rule did not answer must not run without a decision")
}

// TestToolCallWorkflowApprovalDetailsEscaped: the current details the UI shows of a waiting call
// carry its arguments with every control and bidi character escaped (safetext) in a code block,
// and the hash a reviewer approves is that of the exact recorded arguments.
func TestToolCallWorkflowApprovalDetailsEscaped(t *testing.T) {
	tests := []struct {
		name, args string
		want       []string
		notWant    []string
	}{
		{"C1 CSI", `{"s":"\u009b2J\u009b1;1H"}`, []string{`\u009b2J\u009b1;1H`, "(escaped 2 control characters)"}, []string{"\u009b"}},
		{"bidi override", `{"path":"report\u202etxt.sh"}`, []string{`report\u202etxt.sh`}, []string{"\u202e"}},
		{"NUL", `{"s":"a\u0000b"}`, []string{`a\u0000b`}, nil},
		{"OSC 8 link and backticks", `{"s":"` + "```" + `\u001b]8;;http://evil\u001b\\x"}`, []string{"````\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			raw := call("c1", "guarded", tt.args)
			var details string
			var st wire.ApprovalState
			got := runWorkflow(t, newRegistry(t, approvalTool(&runs)), raw, runOptions{
				setup: func(env *testsuite.TestWorkflowEnvironment) {
					env.RegisterDelayedCallback(func() {
						v, err := env.QueryWorkflow("__temporal_workflow_metadata")
						require.NoError(t, err)
						var md sdkpb.WorkflowMetadata
						require.NoError(t, v.Get(&md))
						details = md.GetCurrentDetails()
						v, err = env.QueryWorkflow(wire.QueryApproval)
						require.NoError(t, err)
						require.NoError(t, v.Get(&st))
					}, time.Minute)
				},
			})
			require.NoError(t, got.err)
			for _, w := range tt.want {
				assert.Contains(t, details, w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, details, w)
			}
			for _, r := range details {
				assert.False(t, r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || r == 0x202e, "raw %U in %q", r, details)
			}
			assert.Contains(t, details, "awaiting approval of guarded")
			assert.Equal(t, toolcore.CallHash(approvalTool(&runs), mustCall(t, raw)), st.CallHash, "the hash is of the recorded bytes")
			assert.Zero(t, runs.Load())
		})
	}
}

// refundArgs is the argument of the refund tool of the edit tests.
type refundArgs struct {
	Amount int64 `json:"amount"`
}

// refundTool is an Unsafe tool that requires approval, refuses amounts over 200 and records the
// amounts it ran with.
func refundTool(ran *[]int64) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[refundArgs]{
		Name:        "refund",
		Description: "refunds an amount",
		Validate: func(a toolcore.Arguments) toolcore.Decision[refundArgs] {
			n, err := a.Int64("amount")
			if err != nil {
				return toolcore.Reject[refundArgs](err.Error())
			}
			if n <= 0 || n > 200 {
				return toolcore.Reject[refundArgs]("amount must be 1..200")
			}
			return toolcore.Accept(refundArgs{Amount: n})
		},
		Execute: func(_ context.Context, a refundArgs) (any, error) {
			*ran = append(*ran, a.Amount)
			return map[string]any{"refunded": a.Amount}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.Unsafe, RequireApproval: true, ApprovalTimeout: time.Hour},
	})
}

// TestToolCallWorkflowApprovalWithEdits: a reviewer approves edited arguments; the tool runs once
// with them, the result starts with ReviewerEditNote, the record carries both hashes. An edit
// that does not validate, or that comes with a rejection, is refused by the update validator
// with the validator's reason, and the call goes on waiting.
func TestToolCallWorkflowApprovalWithEdits(t *testing.T) {
	tests := []struct {
		name        string
		decisions   []decision
		wantRan     []int64
		wantContent string
		wantRefused []string // per decision: "" accepted, else a substring of the refusal
	}{
		{
			name:        "edited approval runs the edit once",
			decisions:   []decision{{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "alice", Arguments: []byte(`{ "amount": 100 }`)}}},
			wantRan:     []int64{100},
			wantContent: `reviewer "alice" approved the call with changed arguments: {"amount":100}` + "\n" + `{"refunded":100}`,
			wantRefused: []string{""},
		},
		{
			name: "an invalid edit is refused with the validator's reason, then a valid one applies",
			decisions: []decision{
				{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "alice", Arguments: []byte(`{"amount":500}`)}},
				{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "alice", Arguments: []byte(`[1]`)}},
				{update: wire.UpdateReject, give: wire.ApprovalDecision{Reviewer: "alice", Arguments: []byte(`{"amount":1}`)}},
				{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "alice", Arguments: []byte(`{"amount":120}`)}},
			},
			wantRan:     []int64{120},
			wantContent: `reviewer "alice" approved the call with changed arguments: {"amount":120}` + "\n" + `{"refunded":120}`,
			wantRefused: []string{"amount must be 1..200", "edited arguments", "a rejection carries none", ""},
		},
		{
			name:        "the same arguments are no edit",
			decisions:   []decision{{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "alice", Arguments: []byte(`{"amount":150}`)}}},
			wantRan:     []int64{150},
			wantContent: `{"refunded":150}`,
			wantRefused: []string{""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []int64
			raw := call("c1", "refund", `{"amount":150}`)
			results := make([]updateResult, len(tt.decisions))
			got := runWorkflow(t, newRegistry(t, refundTool(&ran)), raw, runOptions{
				setup: func(env *testsuite.TestWorkflowEnvironment) { sendDecisions(t, env, tt.decisions, &results) },
			})
			require.NoError(t, got.err)
			assert.Equal(t, tt.wantRan, ran, "the tool ran once, with the approved arguments")
			assert.False(t, got.result.IsError(), "%s", got.result.Content())
			assert.Equal(t, tt.wantContent, got.result.Content())
			for i, res := range results {
				if tt.wantRefused[i] != "" {
					require.Error(t, res.rejected, "decision %d", i)
					assert.Contains(t, res.rejected.Error(), tt.wantRefused[i])
					continue
				}
				require.NoError(t, res.rejected, "decision %d", i)
				require.NoError(t, res.err)
				original := toolcore.CallHash(refundTool(&ran), mustCall(t, raw))
				assert.Equal(t, original, res.record.CallHash, "the model's call hash")
				if tt.wantContent != `{"refunded":150}` {
					edited, err := toolcore.NewToolCall("c1", "refund", res.record.Arguments)
					require.NoError(t, err)
					assert.Equal(t, toolcore.CallHash(refundTool(&ran), edited), res.record.ApprovedCallHash)
					assert.NotEqual(t, original, res.record.ApprovedCallHash)
				} else {
					assert.Empty(t, res.record.Arguments)
					assert.Empty(t, res.record.ApprovedCallHash)
				}
			}
		})
	}
}

// TestToolCallWorkflowApprovalReviewers: a tool's Options.Reviewers admits the named reviewers
// and the members of its groups; the update validator refuses a decision by anyone else, and
// the call goes on waiting for an allowed one.
func TestToolCallWorkflowApprovalReviewers(t *testing.T) {
	tests := []struct {
		name        string
		decisions   []decision
		wantRuns    int64
		wantRefused []bool
	}{
		{
			name: "a reviewer the tool does not allow is refused, an allowed one decides",
			decisions: []decision{
				{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "mallory"}},
				{update: wire.UpdateReject, give: wire.ApprovalDecision{Reviewer: "mallory", Groups: []string{"interns"}}},
				{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "alice"}},
			},
			wantRuns:    1,
			wantRefused: []bool{true, true, false},
		},
		{
			name:        "a member of an allowed group decides",
			decisions:   []decision{{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "bob", Groups: []string{"payments-oncall"}}}},
			wantRuns:    1,
			wantRefused: []bool{false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			tool := running("guarded", toolcore.Options{RequireApproval: true, ApprovalTimeout: time.Hour,
				Reviewers: []string{"alice", "group:payments-oncall"}},
				func(context.Context) (any, error) { runs.Add(1); return "ok", nil })
			results := make([]updateResult, len(tt.decisions))
			got := runWorkflow(t, newRegistry(t, tool), call("c1", "guarded", `{}`), runOptions{
				setup: func(env *testsuite.TestWorkflowEnvironment) { sendDecisions(t, env, tt.decisions, &results) },
			})
			require.NoError(t, got.err)
			assert.Equal(t, tt.wantRuns, runs.Load())
			for i, res := range results {
				assert.Equal(t, tt.wantRefused[i], res.rejected != nil, "decision %d: %v", i, res.rejected)
				if res.rejected != nil {
					assert.Contains(t, res.rejected.Error(), `reviewer "mallory" is not allowed to decide calls of guarded`)
				}
			}
		})
	}
}

// TestToolCallWorkflowApprovalReviewerIssuer: a reviewer is an issuer and a subject. An entry
// "<issuer>|<subject>" admits that subject of that issuer only (a same-subject decision of
// another issuer, or of none, is refused); a plain entry admits the subject without an issuer
// only. The accepted decision's record carries its issuer.
func TestToolCallWorkflowApprovalReviewerIssuer(t *testing.T) {
	const idp = "https://idp.example"
	decisions := []decision{
		{update: wire.UpdateApprove, give: wire.ApprovalDecision{Issuer: "https://other.example", Reviewer: "alice"}},
		{update: wire.UpdateApprove, give: wire.ApprovalDecision{Reviewer: "alice"}},
		{update: wire.UpdateApprove, give: wire.ApprovalDecision{Issuer: idp, Reviewer: "bob"}},
		{update: wire.UpdateApprove, give: wire.ApprovalDecision{Issuer: idp, Reviewer: "alice"}},
	}
	wantRefused := []string{
		`reviewer "alice" of issuer "https://other.example" is not allowed`,
		`reviewer "alice" is not allowed`,
		`reviewer "bob" of issuer "https://idp.example" is not allowed`,
		"",
	}
	var runs atomic.Int64
	tool := running("guarded", toolcore.Options{RequireApproval: true, ApprovalTimeout: time.Hour,
		Reviewers: []string{idp + "|alice", "bob"}},
		func(context.Context) (any, error) { runs.Add(1); return "ok", nil })
	results := make([]updateResult, len(decisions))
	got := runWorkflow(t, newRegistry(t, tool), call("c1", "guarded", `{}`), runOptions{
		setup: func(env *testsuite.TestWorkflowEnvironment) { sendDecisions(t, env, decisions, &results) },
	})
	require.NoError(t, got.err)
	assert.Equal(t, int64(1), runs.Load(), "only the issuer's alice approved")
	for i, res := range results {
		if wantRefused[i] == "" {
			assert.NoError(t, res.rejected, "decision %d", i)
			continue
		}
		if assert.Error(t, res.rejected, "decision %d", i) {
			assert.Contains(t, res.rejected.Error(), wantRefused[i])
		}
	}
	assert.Equal(t, idp, results[3].record.Issuer)
	assert.Equal(t, "alice", results[3].record.Reviewer)
}
