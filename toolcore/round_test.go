package toolcore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

func roundTool(t *testing.T, name string, sequential bool) toolcore.Tool {
	t.Helper()
	return toolcore.MustDefine(toolcore.Definition[map[string]any]{
		Name:        name,
		Description: "round test tool",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute:     func(context.Context, map[string]any) (any, error) { return "ok", nil },
		Options:     toolcore.Options{Sequential: sequential},
	})
}

func roundCall(t *testing.T, id, name string) toolcore.ToolCall {
	t.Helper()
	c, err := toolcore.NewToolCall(id, name, []byte(`{}`))
	require.NoError(t, err)
	return c
}

func TestPlanRound(t *testing.T) {
	reg, err := toolcore.NewRegistry(roundTool(t, "read", false), roundTool(t, "write", true))
	require.NoError(t, err)
	r := func(id string) toolcore.ToolCall { return roundCall(t, id, "read") }
	w := func(id string) toolcore.ToolCall { return roundCall(t, id, "write") }
	unknown := roundCall(t, "u", "nope")

	tests := []struct {
		name        string
		calls       []toolcore.ToolCall
		tools       *toolcore.Registry
		sequential  bool
		wantSteps   [][]int
		wantInvalid []int
	}{
		{name: "empty"},
		{name: "all parallel", calls: []toolcore.ToolCall{r("a"), r("b"), unknown}, tools: reg, wantSteps: [][]int{{0, 1, 2}}},
		{name: "sequential option", calls: []toolcore.ToolCall{r("a"), r("b")}, tools: reg, sequential: true, wantSteps: [][]int{{0}, {1}}},
		{name: "sequential tool is a barrier", calls: []toolcore.ToolCall{r("a"), r("b"), w("c"), r("d"), w("e"), w("f"), r("g")}, tools: reg,
			wantSteps: [][]int{{0, 1}, {2}, {3}, {4}, {5}, {6}}},
		{name: "nil registry: nothing sequential", calls: []toolcore.ToolCall{w("a"), w("b")}, wantSteps: [][]int{{0, 1}}},
		{name: "zero call and repeated ID are invalid", calls: []toolcore.ToolCall{r("a"), {}, r("a"), r("b")}, tools: reg,
			wantSteps: [][]int{{0, 3}}, wantInvalid: []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := toolcore.PlanRound(tt.calls, tt.tools, tt.sequential)
			assert.Equal(t, tt.wantSteps, plan.Steps)
			var invalid []int
			for _, o := range plan.Invalid {
				invalid = append(invalid, o.Index)
				assert.Equal(t, toolcore.OutcomeContractError, o.Kind)
				var ce *toolcore.ContractError
				require.ErrorAs(t, o.Err, &ce)
				assert.Equal(t, toolcore.CodeInvalidToolCall, ce.Code)
				assert.Equal(t, tt.calls[o.Index].ID(), o.CallID)
			}
			assert.Equal(t, tt.wantInvalid, invalid)
		})
	}
}

func TestRoundErrorAndFatalStop(t *testing.T) {
	fatal := toolcore.NewNonRecoverableToolError("disk gone")
	ended := errors.New("ctx ended")
	outcomes := []toolcore.Outcome{
		{Index: 0, CallID: "a", Kind: toolcore.OutcomeResult},
		{Index: 1, CallID: "b", Kind: toolcore.OutcomeFatal, Err: fatal},
		{Index: 2, CallID: "c", Kind: toolcore.OutcomeFatal, Err: toolcore.NewNonRecoverableToolError("later")},
	}

	assert.Same(t, fatal, toolcore.RoundError(outcomes, nil), "the genuine first fatal error itself")
	both := toolcore.RoundError(outcomes, ended)
	assert.ErrorIs(t, both, ended)
	got, ok := toolcore.AsNonRecoverable(both)
	require.True(t, ok)
	assert.Same(t, fatal, got)
	assert.Equal(t, ended, toolcore.RoundError(outcomes[:1], ended))
	assert.NoError(t, toolcore.RoundError(outcomes[:1], nil))

	stop := toolcore.FatalStop(outcomes)
	require.Error(t, stop)
	assert.Contains(t, stop.Error(), `call 1 ("b")`)
	notStarted := toolcore.NotStartedOutcome(3, roundCall(t, "d", "read"), stop)
	assert.ErrorIs(t, notStarted.Err, toolcore.ErrRoundStopped)
	_, ok = toolcore.AsNonRecoverable(notStarted.Err)
	assert.False(t, ok, "a call that did not run does not carry the fatal error")
	assert.NoError(t, toolcore.FatalStop(outcomes[:1]))
}

func TestOutcomeKindString(t *testing.T) {
	assert.Equal(t, "result", toolcore.OutcomeResult.String())
	assert.Equal(t, "notStarted", toolcore.OutcomeNotStarted.String())
	assert.Equal(t, "OutcomeKind(0)", toolcore.OutcomeKind(0).String())
}
