package worker

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

func limitedTool(t *testing.T, name string, opts toolcore.Options) toolcore.Tool {
	t.Helper()
	tl, err := toolcore.Define(toolcore.Definition[struct{}]{
		Name:        name,
		Description: "test tool " + name,
		Validate:    func(toolcore.Arguments) toolcore.Decision[struct{}] { return toolcore.Accept(struct{}{}) },
		Execute:     func(context.Context, struct{}) (any, error) { return "ok", nil },
		Options:     opts,
	})
	require.NoError(t, err)
	return tl
}

// TestFlowControlledToolsGetOwnQueues: a tool with a rate or concurrency limit and no TaskQueue
// runs on "<main>/tool/<name>"; tools sharing a queue get its lowest limits.
func TestFlowControlledToolsGetOwnQueues(t *testing.T) {
	tests := []struct {
		name       string
		tools      map[string]toolcore.Options
		wantQueues []string
		wantLimits map[string]queueLimits
	}{
		{
			name:       "unlimited tools stay on main",
			tools:      map[string]toolcore.Options{"a": {}, "b": {TaskQueue: "gpu"}},
			wantQueues: []string{"toolgate", "gpu"},
			wantLimits: map[string]queueLimits{},
		},
		{
			name: "limited tools get own queues",
			tools: map[string]toolcore.Options{
				"http_get": {RateLimit: 5, FairnessKeyRateLimit: 2},
				"browser":  {MaxConcurrent: 2},
				"plain":    {},
			},
			wantQueues: []string{"toolgate", "toolgate/tool/browser", "toolgate/tool/http_get"},
			wantLimits: map[string]queueLimits{
				"toolgate/tool/http_get": {rate: 5, perKeyRate: 2},
				"toolgate/tool/browser":  {maxConcurrent: 2},
			},
		},
		{
			name: "a shared queue takes the lowest",
			tools: map[string]toolcore.Options{
				"a": {TaskQueue: "api", RateLimit: 10, MaxConcurrent: 4},
				"b": {TaskQueue: "api", RateLimit: 3},
			},
			wantQueues: []string{"toolgate", "api"},
			wantLimits: map[string]queueLimits{"api": {rate: 3, maxConcurrent: 4}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := toolcore.NewRegistry()
			require.NoError(t, err)
			for name, opts := range tt.tools {
				require.NoError(t, reg.Register(limitedTool(t, name, opts)))
			}
			assert.Equal(t, tt.wantQueues, taskQueues(reg, "toolgate"))
			assert.Equal(t, tt.wantLimits, limitsByQueue(reg, "toolgate"))
		})
	}
}
