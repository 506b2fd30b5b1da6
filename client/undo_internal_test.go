package client

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/wire"
)

// TestPlanUndo: a new undo attempt gets only the effects no earlier attempt compensated, skipped
// or found absent; an attempt still running is attached to; the merged result has one step per
// effect in undo order, each as its last attempt left it.
func TestPlanUndo(t *testing.T) {
	e := func(id string) wire.UndoEffect {
		return wire.UndoEffect{ToolCallID: id, ToolName: "book", IdempotencyKey: "k-" + id}
	}
	effects := []wire.UndoEffect{e("1"), e("2"), e("3")}
	done := func(id string, s wire.UndoStatus) map[string]wire.UndoStep {
		return map[string]wire.UndoStep{"k-" + id: {Effect: e(id), Status: s}}
	}
	tests := []struct {
		name        string
		give        []undoAttempt
		wantRunning string
		wantTodo    []string
	}{
		{name: "no attempt: everything", wantTodo: []string{"1", "2", "3"}},
		{
			name:     "after a partial attempt: what it left",
			give:     []undoAttempt{{workflowID: "undo/r", closed: true, done: done("3", wire.UndoCompensated)}},
			wantTodo: []string{"1", "2"},
		},
		{
			name: "skipped and not found count as done, across attempts",
			give: []undoAttempt{
				{workflowID: "undo/r", closed: true, done: done("3", wire.UndoSkipped)},
				{workflowID: "undo/r/attempt-2", closed: true, done: done("1", wire.UndoNotFound)},
			},
			wantTodo: []string{"2"},
		},
		{
			name: "an attempt still running is attached to",
			give: []undoAttempt{
				{workflowID: "undo/r", closed: true, done: done("3", wire.UndoCompensated)},
				{workflowID: "undo/r/attempt-2", done: done("2", wire.UndoCompensated)},
			},
			wantRunning: "undo/r/attempt-2",
			wantTodo:    []string{"1", "2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planUndo(effects, tt.give)
			assert.Equal(t, tt.wantRunning, p.running)
			todo := []string{}
			for _, e := range p.todo {
				todo = append(todo, e.ToolCallID)
			}
			assert.Equal(t, tt.wantTodo, todo)
		})
	}

	p := planUndo(effects, []undoAttempt{{workflowID: "undo/r", closed: true, done: done("3", wire.UndoCompensated)}})
	merged := p.merge(effects, wire.UndoResult{Steps: []wire.UndoStep{{Effect: e("2"), Status: wire.UndoFailed, Message: "no"}}})
	var got []string
	for _, s := range merged.Steps {
		got = append(got, s.Effect.ToolCallID+" "+string(s.Status)+" "+s.Message)
	}
	assert.Equal(t, []string{"3 compensated ", "2 failed no", "1 remaining "}, got, "undo order; an effect no attempt reached remains")
}
