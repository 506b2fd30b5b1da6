package toolcore_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

func TestPolicyDeniedResult(t *testing.T) {
	call, err := toolcore.ParseToolCall([]byte(`{"type":"toolCall","id":"c1","name":"write_file","arguments":{}}`))
	require.NoError(t, err)
	tests := []struct {
		name   string
		id     string
		reason string
		want   string
	}{
		{name: "policy and reason", id: "guests-no-write", reason: "guests may not write files",
			want: `{"error":{"code":"POLICY_DENIED","message":"denied by policy \"guests-no-write\": guests may not write files; the tool did not run"}}`},
		{name: "no reason", id: "policy3", want: `{"error":{"code":"POLICY_DENIED","message":"denied by policy \"policy3\"; the tool did not run"}}`},
		{name: "default deny", want: `{"error":{"code":"POLICY_DENIED","message":"no policy permits this call; the tool did not run"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := toolcore.PolicyDeniedResult(call, tt.id, tt.reason)
			assert.Equal(t, tt.want, res.Content())
			assert.True(t, res.IsError())
			assert.Equal(t, toolcore.CodePolicyDenied, res.ErrorCode())
			assert.Equal(t, "c1", res.ToolCallID())
		})
	}
	assert.Equal(t, "POLICY_DENIED", toolcore.CodePolicyDenied.String())
}

func TestPolicyDeniedMessageIsBounded(t *testing.T) {
	msg := toolcore.PolicyDeniedMessage(strings.Repeat("i", 10000), strings.Repeat("r", 10000)+"\xff")
	assert.True(t, utf8.ValidString(msg))
	assert.Less(t, len(msg), toolcore.MaxNameBytes+toolcore.MaxPolicyReasonBytes+100)
	assert.True(t, strings.HasSuffix(msg, "; the tool did not run"))
}
