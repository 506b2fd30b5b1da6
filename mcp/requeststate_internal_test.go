package mcp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A requestState opens only with the key that issued it, for the principal it was issued to and
// the tool it names, until it expires (the round's deadline when sooner than the TTL).
func TestRequestStateBinding(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	states, err := newRequestStates(key, time.Hour)
	require.NoError(t, err)
	states.now = func() time.Time { return now }
	other, err := newRequestStates([]byte("another key of thirty-two bytes!"), time.Hour)
	require.NoError(t, err)
	other.now = states.now

	alice := "https://issuer\nalice"
	state := states.issue("mcp-x/toolcall-1", 2, "proceed", alice, time.Time{})
	soon := states.issue("mcp-x/toolcall-1", 3, "proceed", alice, now.Add(time.Minute))

	tests := []struct {
		name      string
		states    *requestStates
		state     string
		tool      string
		principal string
		after     time.Duration
		wantErr   error
	}{
		{"opens", states, state, "proceed", alice, 0, nil},
		{"another principal", states, state, "proceed", "https://issuer\nmallory", 0, errStateForeign},
		{"the server's own principal", states, state, "proceed", "", 0, errStateForeign},
		{"another tool", states, state, "capital", alice, 0, errStateOtherTool},
		{"another key", other, state, "proceed", alice, 0, errStateMalformed},
		{"expired after the TTL", states, state, "proceed", alice, time.Hour, errStateExpired},
		{"expired at the round's deadline", states, soon, "proceed", alice, time.Minute, errStateExpired},
		{"a bit flipped", states, state[:5] + string(state[5]^1) + state[6:], "proceed", alice, 0, errStateMalformed},
		{"too long", states, state + string(make([]byte, maxRequestStateBytes)), "proceed", alice, 0, errStateMalformed},
		{"empty", states, "", "proceed", alice, 0, errStateMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.states.now = func() time.Time { return now.Add(tt.after) }
			defer func() { tt.states.now = func() time.Time { return now } }()
			got, err := tt.states.open(tt.state, tt.tool, tt.principal)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "mcp-x/toolcall-1", got.WorkflowID)
			assert.Equal(t, 2, got.Round)
		})
	}
	_, err = newRequestStates([]byte("short"), 0)
	assert.Error(t, err, "a key under RequestStateKeyBytes")
}
