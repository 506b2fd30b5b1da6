package mcp

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// TestApprovalAnswer: an elicitation answer approves only with action accept and "approve" the
// boolean true; "false", 0, null, a missing field and "true" as a string reject, with a reason
// that says what "approve" was (not its value); decline rejects with the caller's reason.
func TestApprovalAnswer(t *testing.T) {
	tests := []struct {
		name        string
		action      string
		content     map[string]any
		wantApprove bool
		wantReason  string
	}{
		{"true", "accept", map[string]any{"approve": true}, true, ""},
		{"true drops the reason", "accept", map[string]any{"approve": true, "reason": "fine"}, true, ""},
		{"false", "accept", map[string]any{"approve": false}, false, `"approve" was false, and only the boolean true approves`},
		{"the string false", "accept", map[string]any{"approve": "false"}, false, `"approve" was a string`},
		{"the string true", "accept", map[string]any{"approve": "true"}, false, `"approve" was a string`},
		{"zero", "accept", map[string]any{"approve": float64(0)}, false, `"approve" was a number`},
		{"one", "accept", map[string]any{"approve": float64(1)}, false, `"approve" was a number`},
		{"null", "accept", map[string]any{"approve": nil}, false, `"approve" was null`},
		{"missing", "accept", map[string]any{}, false, `"approve" was missing`},
		{"no content", "accept", nil, false, `"approve" was missing`},
		{"an object", "accept", map[string]any{"approve": map[string]any{}}, false, `"approve" was not a boolean`},
		{"the caller's reason kept", "accept", map[string]any{"approve": "no", "reason": "wrong host"}, false, `only the boolean true approves: wrong host`},
		{"decline", "decline", map[string]any{"reason": "not today"}, false, "not today"},
		{"decline without a reason", "decline", nil, false, "declined by the caller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			approve, reason, err := approvalAnswer(tt.action, tt.content)
			require.NoError(t, err)
			assert.Equal(t, tt.wantApprove, approve)
			if tt.wantReason == "" {
				assert.Empty(t, reason)
			} else {
				assert.Contains(t, reason, tt.wantReason)
			}
		})
	}
	_, _, err := approvalAnswer("approve", map[string]any{"approve": true})
	assert.ErrorContains(t, err, `not "approve"`)
}

// TestCallerDecisionIssuerAndApprove: through callerDecision (tasks/update and the elicitation of
// tasks/result alike) against a real worker, a tool whose Reviewers name alice of one issuer
// refuses alice of another issuer (invalid params, the call keeps waiting); its own alice's
// answer approve: "false" rejects the call (TOOL_APPROVAL_REJECTED, the tool never runs), and
// approve: true runs it, the record naming the issuer.
func TestCallerDecisionIssuerAndApprove(t *testing.T) {
	const idp = "https://idp.example"
	var runs atomic.Int64
	tool, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "guarded_release",
		Description: "Releases once its caller approves.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute:     func(context.Context, map[string]any) (any, error) { runs.Add(1); return toolcore.Text("released"), nil },
		Options: toolcore.Options{RequireApproval: true, ApprovalByCaller: true, ApprovalTimeout: time.Hour,
			Reviewers: []string{idp + "|alice"}},
	})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	c := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, "", reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	tg := client.New(c, client.Options{TaskQueue: queue})
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	tk := &tasks{tg: tg, infos: map[string]toolcore.ToolInfo{}}
	for _, info := range infos {
		tk.infos[info.Name] = info
	}
	as := func(issuer, subject string) context.Context {
		return context.WithValue(t.Context(), principalKey{}, issuer+"\n"+subject)
	}
	waiting := func(id string) (client.Status, wire.ApprovalState) {
		t.Helper()
		call, err := toolcore.NewToolCall(id, "guarded_release", []byte(`{}`))
		require.NoError(t, err)
		_, err = tg.Start(t.Context(), call)
		require.NoError(t, err)
		var approval wire.ApprovalState
		require.Eventually(t, func() bool {
			approval, err = tg.Approval(t.Context(), id)
			return err == nil && approval.Waiting
		}, time.Minute, 10*time.Millisecond, "the call waits for approval: %v", err)
		st, err := tg.Status(t.Context(), id)
		require.NoError(t, err)
		return st, approval
	}

	st, approval := waiting("caller-decision-1")
	err = tk.callerDecision(as("https://evil.example", "alice"), st, approval.CallHash, "accept", map[string]any{"approve": true})
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr.Code)
	assert.Contains(t, rpcErr.Message, `reviewer "alice" of issuer "https://evil.example" is not allowed`)
	again, err := tg.Approval(t.Context(), "caller-decision-1")
	require.NoError(t, err)
	assert.True(t, again.Waiting, "the call keeps waiting")

	require.NoError(t, tk.callerDecision(as(idp, "alice"), st, approval.CallHash, "accept", map[string]any{"approve": "false"}))
	res, err := tg.Result(t.Context(), "caller-decision-1")
	require.NoError(t, err)
	assert.Equal(t, toolcore.CodeToolApprovalRejected, res.ErrorCode())
	assert.Contains(t, res.ErrorMessage(), `"approve" was a string`)

	st, approval = waiting("caller-decision-2")
	require.NoError(t, tk.callerDecision(as(idp, "alice"), st, approval.CallHash, "accept", map[string]any{"approve": true}))
	res, err = tg.Result(t.Context(), "caller-decision-2")
	require.NoError(t, err)
	assert.False(t, res.IsError(), res.Content())
	assert.Equal(t, int64(1), runs.Load(), "only the approved call ran")
	decided, err := tg.Approval(t.Context(), "caller-decision-2")
	require.NoError(t, err)
	require.NotNil(t, decided.Decision)
	assert.Equal(t, idp, decided.Decision.Issuer)
	assert.Equal(t, "alice", decided.Decision.Reviewer)
}
