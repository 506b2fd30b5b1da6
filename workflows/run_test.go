package workflows_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// runNameRegistry holds "whose_run", which returns toolcore.CallRun.
func runNameRegistry(t *testing.T) *toolcore.Registry {
	t.Helper()
	tool, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "whose_run",
		Description: "Names the call's run.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute:     func(ctx context.Context, _ map[string]any) (any, error) { return toolcore.CallRun(ctx), nil },
		Options:     toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	return reg
}

// The calls of one agent run, inline or child, share its run; a standalone call's run is its
// scope, else its own workflow ID.
func TestCallRunNamesTheAgentRunOrScope(t *testing.T) {
	reg := runNameRegistry(t)
	raw := json.RawMessage(`{"type":"toolCall","id":"c1","name":"whose_run","arguments":{}}`)
	for _, inline := range []bool{true, false} {
		r := runAgent(t, reg, raw, inline, nil)
		assert.Contains(t, r.verdict, `agent-1`, "inline=%v", inline)
	}
	for id, want := range map[string]string{
		"toolcall-c1":         `"toolcall-c1"`,
		"user-7/toolcall-c1":  `"user-7"`,
		"a/b/toolcall-c1":     `"a/b"`,
		"toolcall-a/toolcall": `"toolcall-a/toolcall"`,
	} {
		got := runWorkflow(t, reg, raw, runOptions{workflowID: id})
		require.NoError(t, got.err, id)
		assert.Contains(t, got.result.Content(), want, id)
	}
}
