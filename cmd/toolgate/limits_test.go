package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/wire"
)

// TestLimitsUpdateRequests: set sends only the flags given, with the operator's reason; reset
// removes both rate limits and every weight override the queue has now, or only the named
// weights; bad input is refused before dialing.
func TestLimitsUpdateRequests(t *testing.T) {
	tests := []struct {
		name             string
		opts             limitsOptions
		current          map[string]float32 // the queue's weight overrides now
		reset            bool
		rateSet, perKey  bool
		wantErr          bool
		wantRate         float32 // -1: no queue rate update
		wantPerKey       float32 // -1: no per-key update
		wantRemoveLimits bool
		wantWeights      map[string]float32
		wantUnsetWeights []string
	}{
		{name: "rate only", opts: limitsOptions{rate: 2}, rateSet: true, wantRate: 2, wantPerKey: -1},
		{name: "per key and weight", opts: limitsOptions{perKeyRate: 0.5, weights: []string{"agent-7=3"}}, perKey: true,
			wantRate: -1, wantPerKey: 0.5, wantWeights: map[string]float32{"agent-7": 3}},
		{name: "nothing to set", opts: limitsOptions{}, wantErr: true},
		{name: "bad weight", opts: limitsOptions{weights: []string{"agent-7"}}, wantErr: true},
		{name: "zero weight", opts: limitsOptions{weights: []string{"a=0"}}, wantErr: true},
		{name: "negative rate", opts: limitsOptions{rate: -1}, rateSet: true, wantErr: true},
		{name: "reset all", reset: true, wantRemoveLimits: true, wantRate: -1, wantPerKey: -1},
		{name: "reset all with weights", reset: true, current: map[string]float32{"agent-7": 3, "agent-2": 0.5},
			wantRemoveLimits: true, wantRate: -1, wantPerKey: -1, wantUnsetWeights: []string{"agent-2", "agent-7"}},
		{name: "reset one weight", opts: limitsOptions{weights: []string{"agent-7"}}, reset: true,
			current: map[string]float32{"agent-7": 3, "agent-2": 0.5}, wantRate: -1, wantPerKey: -1, wantUnsetWeights: []string{"agent-7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := tt.opts.limitsUpdate("q", "me", tt.reset, tt.rateSet, tt.perKey, tt.current)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "q", req.GetTaskQueue())
			if tt.wantRemoveLimits {
				require.NotNil(t, req.GetUpdateQueueRateLimit())
				assert.Nil(t, req.GetUpdateQueueRateLimit().GetRateLimit())
				assert.Nil(t, req.GetUpdateFairnessKeyRateLimitDefault().GetRateLimit())
			}
			if tt.wantRate >= 0 {
				assert.Equal(t, tt.wantRate, req.GetUpdateQueueRateLimit().GetRateLimit().GetRequestsPerSecond())
				assert.Equal(t, wire.LimitReasonOperator, req.GetUpdateQueueRateLimit().GetReason())
			}
			if tt.wantPerKey >= 0 {
				assert.Equal(t, tt.wantPerKey, req.GetUpdateFairnessKeyRateLimitDefault().GetRateLimit().GetRequestsPerSecond())
			}
			assert.Equal(t, tt.wantWeights, req.GetSetFairnessWeightOverrides())
			assert.Equal(t, tt.wantUnsetWeights, req.GetUnsetFairnessWeightOverrides())
		})
	}
}

// TestEagerRefusal: a limit on a queue that workers poll for workflows is refused with the
// reason (its activities are dispatched eagerly) and the way out (the tool's own queue); a queue
// without workflow pollers (a tool's queue) is not.
func TestEagerRefusal(t *testing.T) {
	tests := []struct {
		name    string
		queue   string
		pollers int
		refused bool
	}{
		{name: "a main queue with its worker", queue: "toolgate", pollers: 1, refused: true},
		{name: "a main queue with three workers", queue: "toolgate", pollers: 3, refused: true},
		{name: "a tool's queue", queue: "toolgate/tool/http_get", pollers: 0, refused: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := eagerRefusal(tt.queue, tt.pollers)
			if !tt.refused {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), `task queue "toolgate" runs the calls' workflows`)
			assert.Contains(t, err.Error(), "dispatched eagerly")
			assert.Contains(t, err.Error(), `"toolgate/tool/<tool>"`)
		})
	}
}
