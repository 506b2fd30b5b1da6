package toolcore

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type apAmount struct {
	Amount int64 `json:"amount"`
}

// apTool is "pay": requires approval above 100, panics in its rule at 666, counts its runs.
func apTool(t testing.TB, runs *atomic.Int32, opts Options) Tool {
	t.Helper()
	tool, err := Define(Definition[apAmount]{
		Name:        "pay",
		Description: "pays",
		Validate: func(a Arguments) Decision[apAmount] {
			n, err := a.Int64("amount")
			if err != nil {
				return Reject[apAmount](err.Error())
			}
			return Accept(apAmount{Amount: n})
		},
		Execute: func(context.Context, apAmount) (any, error) {
			runs.Add(1)
			return "paid", nil
		},
		Options: opts,
		ApprovalRule: func(a apAmount) bool {
			if a.Amount == 666 {
				panic("rule exploded")
			}
			return a.Amount > 100
		},
	})
	require.NoError(t, err)
	return tool
}

func TestNeedsApproval(t *testing.T) {
	var runs atomic.Int32
	tests := []struct {
		name string
		opts Options
		args string
		want bool
	}{
		{name: "rule says no", args: `{"amount":100}`, want: false},
		{name: "rule says yes", args: `{"amount":101}`, want: true},
		{name: "a panicking rule requires approval", args: `{"amount":666}`, want: true},
		{name: "RequireApproval wins over the rule", opts: Options{RequireApproval: true}, args: `{"amount":1}`, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := apTool(t, &runs, tt.opts)
			accepted, _, ok := tool.Validate(exCall(t, "c1", "pay", tt.args))
			require.True(t, ok)
			assert.Equal(t, tt.want, tool.NeedsApproval(accepted))
		})
	}
	assert.False(t, Tool{}.NeedsApproval(nil))
}

func TestCallHash(t *testing.T) {
	var runs atomic.Int32
	tool := apTool(t, &runs, Options{})
	base := CallHash(tool, exCall(t, "c1", "pay", `{"amount":5}`))
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, base)
	assert.Equal(t, base, CallHash(tool, exCall(t, "other-id", "pay", ` { "amount" : 5 } `)),
		"the hash names the canonical call, not its spelling or id")
	assert.NotEqual(t, base, CallHash(tool, exCall(t, "c1", "pay", `{"amount":6}`)), "other arguments")
	edited := apTool(t, &runs, Options{ApprovalTimeout: time.Minute, SideEffect: Idempotent})
	assert.NotEqual(t, base, CallHash(edited, exCall(t, "c1", "pay", `{"amount":5}`)), "another definition")
	assert.NotEqual(t, tool.DefinitionHash(), edited.DefinitionHash())
	assert.Equal(t, tool.DefinitionHash(), apTool(t, &runs, Options{}).DefinitionHash(), "stable for the same definition")
}

func TestExecuteApproval(t *testing.T) {
	tests := []struct {
		name     string
		approve  Approver
		args     string
		want     string
		wantRuns int32
	}{
		{
			name:     "no approval needed",
			args:     `{"amount":1}`,
			want:     `"paid"`,
			wantRuns: 1,
		},
		{
			name: "no approver rejects",
			args: `{"amount":500}`,
			want: `{"error":{"code":"TOOL_APPROVAL_REJECTED","message":"approval required and no approver is configured; the tool did not run"}}`,
		},
		{
			name: "approved",
			args: `{"amount":500}`,
			approve: func(context.Context, ApprovalRequest) ApprovalDecision {
				return ApprovalDecision{Approved: true, Reviewer: "alice"}
			},
			want:     `"paid"`,
			wantRuns: 1,
		},
		{
			name: "rejected with a reason",
			args: `{"amount":500}`,
			approve: func(context.Context, ApprovalRequest) ApprovalDecision {
				return ApprovalDecision{Reviewer: "bob", Reason: "over budget"}
			},
			want: `{"error":{"code":"TOOL_APPROVAL_REJECTED","message":"rejected by bob: over budget"}}`,
		},
		{
			name:    "approved without a reviewer is rejected",
			args:    `{"amount":500}`,
			approve: func(context.Context, ApprovalRequest) ApprovalDecision { return ApprovalDecision{Approved: true} },
			want:    `{"error":{"code":"TOOL_APPROVAL_REJECTED","message":"the approver returned a decision without a reviewer; the tool did not run"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			tool := apTool(t, &runs, Options{})
			res, err := ExecuteWith(context.Background(), exRegistry(t, tool), exCall(t, "c1", "pay", tt.args), ExecuteOptions{Approve: tt.approve})
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Content())
			assert.Equal(t, tt.wantRuns, runs.Load())
		})
	}
}

func TestExecuteApprovalRequestAndCancel(t *testing.T) {
	var runs atomic.Int32
	tool := apTool(t, &runs, Options{RequireApproval: true})
	call := exCall(t, "c1", "pay", `{"amount":1}`)
	ctx, cancel := context.WithCancelCause(context.Background())
	var seen ApprovalRequest
	_, err := ExecuteWith(ctx, exRegistry(t, tool), call, ExecuteOptions{
		Approve: func(ctx context.Context, req ApprovalRequest) ApprovalDecision {
			seen = req
			cancel(context.Canceled)
			return ApprovalDecision{Approved: true, Reviewer: "alice"}
		},
	})
	require.ErrorIs(t, err, context.Canceled, "cancellation while deciding wins")
	assert.Zero(t, runs.Load())
	assert.Equal(t, CallHash(tool, call), seen.CallHash)
	assert.Equal(t, tool.DefinitionHash(), seen.DefinitionHash)
	assert.Equal(t, "c1", seen.Call.ID())
}

func TestApprovalErrorCodes(t *testing.T) {
	assert.Equal(t, "TOOL_APPROVAL_REJECTED", CodeToolApprovalRejected.String())
	assert.Equal(t, "TOOL_APPROVAL_EXPIRED", CodeToolApprovalExpired.String())
	call := exCall(t, "c1", "pay", `{}`)
	for _, res := range []Result{ApprovalRejectedResult(call, "alice", ""), ApprovalExpiredResult(call, time.Hour)} {
		data, err := res.MarshalJSON()
		require.NoError(t, err)
		var back Result
		require.NoError(t, back.UnmarshalJSON(data), "the Result validator accepts the approval codes")
		assert.Equal(t, res, back)
	}
	assert.Equal(t, `{"error":{"code":"TOOL_APPROVAL_EXPIRED","message":"no approval decision within 1h0m0s; the tool did not run"}}`,
		ApprovalExpiredResult(call, time.Hour).Content())
}

// ApprovalByCaller is shown in ToolInfo ("approvalByCaller") and, like Reviewers, leaves the
// DefinitionHash alone: recorded histories of tools that adopt it still replay (issue 23).
func TestApprovalByCallerInInfoNotInHash(t *testing.T) {
	var runs atomic.Int32
	operators := apTool(t, &runs, Options{RequireApproval: true})
	callers := apTool(t, &runs, Options{RequireApproval: true, ApprovalByCaller: true})
	assert.Equal(t, operators.DefinitionHash(), callers.DefinitionHash())
	assert.False(t, operators.Info().ApprovalByCaller)
	assert.True(t, callers.Info().ApprovalByCaller)
	raw, err := json.Marshal(callers.Info())
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"requireApproval":true`)
	assert.Contains(t, string(raw), `"approvalByCaller":true`)
	raw, err = json.Marshal(operators.Info())
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "approvalByCaller")
}

// TestMayDecideAs: a reviewer is matched on issuer and subject: "<issuer>|<subject>" admits only
// that issuer's subject, a plain entry only the subject without an issuer, "group:" any issuer.
func TestMayDecideAs(t *testing.T) {
	tool := apTool(t, new(atomic.Int32), Options{Reviewers: []string{"https://idp.example|alice", "bob", "group:oncall"}})
	tests := []struct {
		name            string
		issuer, subject string
		groups          []string
		want            bool
	}{
		{"the issuer's subject", "https://idp.example", "alice", nil, true},
		{"another issuer's same subject", "https://evil.example", "alice", nil, false},
		{"the subject without an issuer", "", "alice", nil, false},
		{"an issuer prefix", "https://idp.example|x", "alice", nil, false},
		{"a plain entry without an issuer", "", "bob", nil, true},
		{"a plain entry with an issuer", "https://idp.example", "bob", nil, false},
		{"a group of any issuer", "https://evil.example", "carol", []string{"oncall"}, true},
		{"no entry", "", "carol", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tool.MayDecideAs(tt.issuer, tt.subject, tt.groups))
		})
	}
	assert.True(t, tool.MayDecide("bob", nil), "MayDecide is MayDecideAs without an issuer")
	assert.False(t, tool.MayDecide("alice", nil))
}
