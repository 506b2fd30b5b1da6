package workflows_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// TestToolCallWorkflowRecordsParts: the workflow's result records the claims ExecuteTool
// returned, keeping only valid ones; an error result records none.
func TestToolCallWorkflowRecordsParts(t *testing.T) {
	reg := newRegistry(t, running("shot", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(context.Context) (any, error) { return nil, nil }))
	image := toolcore.ClaimPart(toolcore.Image("image/png", []byte("png")), "0123abcd")
	invalid := image
	invalid.Key = "../elsewhere"
	tests := []struct {
		name string
		give activities.ExecuteToolOutput
		want []toolcore.PartClaim
	}{
		{name: "claims", give: activities.ExecuteToolOutput{Content: "a chart", Parts: []toolcore.PartClaim{image, invalid}},
			want: []toolcore.PartClaim{image}},
		{name: "none", give: activities.ExecuteToolOutput{Content: "a chart"}},
		{name: "error result", give: activities.ExecuteToolOutput{Content: errContent("failed"), IsError: true, Parts: []toolcore.PartClaim{image}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorkflow(t, reg, call("c1", "shot", `{}`), runOptions{setup: func(env *testsuite.TestWorkflowEnvironment) {
				env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).Return(tt.give, nil)
			}})

			require.NoError(t, got.err)
			assert.Equal(t, tt.give.Content, got.result.Content())
			assert.Equal(t, tt.want, got.result.Parts())
		})
	}
}
