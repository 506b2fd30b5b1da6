package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// undoLog records the compensations the test tools ran, in order.
type undoLog struct {
	mu    sync.Mutex
	calls []string // "<call ID> key=<compensation key> output=<output>"
	tries map[string]int
}

func (l *undoLog) add(c toolcore.Compensation) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tries == nil {
		l.tries = map[string]int{}
	}
	l.tries[c.ToolCallID]++
	l.calls = append(l.calls, fmt.Sprintf("%s key=%s output=%s", c.ToolCallID, c.Key, c.Output))
	return l.tries[c.ToolCallID]
}

func (l *undoLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// undoTools: "book" (Unsafe, compensated; its compensation of call "stuck" fails for good, of
// call "flaky" fails once, then succeeds), "pay" (Unsafe with a Reconcile that finds only
// "found-*" keys, compensated), "note" (Unsafe, no compensation) and "look" (ReadOnly).
func undoTools(t *testing.T, log *undoLog) *toolcore.Registry {
	book := toolcore.MustDefine(toolcore.Definition[empty]{
		Name: "book", Description: "books a slot", Validate: acceptAll,
		Execute: func(ctx context.Context, _ empty) (any, error) {
			return map[string]string{"slot": toolcore.ToolCallID(ctx)}, nil
		},
		Compensate: func(_ context.Context, c toolcore.Compensation) error {
			n := log.add(c)
			switch {
			case c.ToolCallID == "stuck":
				return toolcore.NewNonRecoverableToolError("the slot is already used")
			case c.ToolCallID == "flaky" && n == 1:
				return errors.New("calendar unavailable")
			}
			return nil
		},
	})
	pay := toolcore.MustDefine(toolcore.Definition[empty]{
		Name: "pay", Description: "pays", Validate: acceptAll,
		Execute: func(context.Context, empty) (any, error) { return "paid", nil },
		Reconcile: func(_ context.Context, key string) (any, bool, error) {
			return map[string]string{"receipt": key}, len(key) > 6 && key[:6] == "found-", nil
		},
		Compensate: func(_ context.Context, c toolcore.Compensation) error { log.add(c); return nil },
	})
	note := toolcore.MustDefine(toolcore.Definition[empty]{
		Name: "note", Description: "writes a note", Validate: acceptAll,
		Execute: func(context.Context, empty) (any, error) { return "noted", nil },
	})
	look := toolcore.MustDefine(toolcore.Definition[empty]{
		Name: "look", Description: "looks", Validate: acceptAll, Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		Execute: func(context.Context, empty) (any, error) { return "seen", nil },
	})
	return newRegistry(t, book, pay, note, look)
}

func undoEnv(reg *toolcore.Registry) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Hour})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "undo/agent-1", TaskQueue: wire.DefaultTaskQueue})
	(&workflows.Workflows{Registry: reg}).Register(env)
	(&activities.Activities{Registry: reg}).Register(env)
	return env
}

func effect(tool, id string) wire.UndoEffect {
	return wire.UndoEffect{ToolCallID: id, ToolName: tool, IdempotencyKey: "toolcall-" + id, Output: `"out-` + id + `"`}
}

// TestUndoWorkflow undoes lists of effects with UndoWorkflow and the real CompensateTool: in
// reverse completion order, skipping tools without a compensation, reconciling effects whose
// outcome is unknown, retrying a compensation that fails, and stopping at one that fails for good
// with the effects it leaves.
func TestUndoWorkflow(t *testing.T) {
	unknown := func(tool, id string) wire.UndoEffect {
		e := effect(tool, id)
		e.IdempotencyKey, e.Output, e.OutcomeUnknown = id, "", true
		return e
	}
	tests := []struct {
		name      string
		give      []wire.UndoEffect
		want      []wire.UndoStatus // per step, in undo order
		wantCalls []string
		wantFail  string
	}{
		{
			name: "reverse completion order",
			give: []wire.UndoEffect{effect("book", "a"), effect("pay", "b"), effect("book", "c")},
			want: []wire.UndoStatus{wire.UndoCompensated, wire.UndoCompensated, wire.UndoCompensated},
			wantCalls: []string{
				`c key=toolcall-c/undo output="out-c"`, `b key=toolcall-b/undo output="out-b"`, `a key=toolcall-a/undo output="out-a"`,
			},
		},
		{
			name:      "tools without a compensation are skipped",
			give:      []wire.UndoEffect{effect("book", "a"), effect("note", "b"), effect("look", "c")},
			want:      []wire.UndoStatus{wire.UndoSkipped, wire.UndoSkipped, wire.UndoCompensated},
			wantCalls: []string{`a key=toolcall-a/undo output="out-a"`},
		},
		{
			name:      "a failing compensation is retried under the same key",
			give:      []wire.UndoEffect{effect("book", "a"), effect("book", "flaky")},
			want:      []wire.UndoStatus{wire.UndoCompensated, wire.UndoCompensated},
			wantCalls: []string{`flaky key=toolcall-flaky/undo output="out-flaky"`, `flaky key=toolcall-flaky/undo output="out-flaky"`, `a key=toolcall-a/undo output="out-a"`},
		},
		{
			name:      "one that fails for good stops the undo and says which remain",
			give:      []wire.UndoEffect{effect("book", "a"), effect("pay", "b"), effect("book", "stuck"), effect("book", "d")},
			want:      []wire.UndoStatus{wire.UndoCompensated, wire.UndoFailed, wire.UndoRemaining, wire.UndoRemaining},
			wantCalls: []string{`d key=toolcall-d/undo output="out-d"`, `stuck key=toolcall-stuck/undo output="out-stuck"`},
			wantFail:  "the slot is already used",
		},
		{
			name:      "an outcome unknown is reconciled first and compensated only when found",
			give:      []wire.UndoEffect{unknown("pay", "found-1"), unknown("pay", "gone-2"), unknown("book", "x")},
			want:      []wire.UndoStatus{wire.UndoUnresolved, wire.UndoNotFound, wire.UndoCompensated},
			wantCalls: []string{`found-1 key=found-1/undo output={"receipt":"found-1"}`},
		},
		{
			name:      "a tool the worker lacks fails for good",
			give:      []wire.UndoEffect{effect("book", "a"), effect("gone", "b")},
			want:      []wire.UndoStatus{wire.UndoFailed, wire.UndoRemaining},
			wantFail:  "is not registered",
			wantCalls: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &undoLog{}
			env := undoEnv(undoTools(t, log))
			env.ExecuteWorkflow(wire.UndoWorkflowName, wire.UndoWorkflowInput{RunID: "agent-1", Effects: tt.give})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var res wire.UndoResult
			require.NoError(t, env.GetWorkflowResult(&res))
			var got []wire.UndoStatus
			for i, s := range res.Steps {
				got = append(got, s.Status)
				assert.Equal(t, tt.give[len(tt.give)-1-i], s.Effect, "step %d undoes the effects last first", i)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantCalls, log.list())
			var failures []string
			for _, s := range res.Steps {
				if s.Status == wire.UndoFailed {
					failures = append(failures, s.Message)
				}
			}
			if tt.wantFail == "" {
				assert.Empty(t, failures)
			} else if assert.Len(t, failures, 1) {
				assert.Contains(t, failures[0], tt.wantFail)
			}
		})
	}
}

// TestEffectsRecordAndUndo: an agent workflow records its calls' effects in CallOptions.Effects
// (inline and as children), then undoes those after a mark: only the effects of calls that
// completed without an error result are undone, last first, each under its call's key.
func TestEffectsRecordAndUndo(t *testing.T) {
	log := &undoLog{}
	reg := undoTools(t, log)
	env := undoEnv(reg)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "agent-1", TaskQueue: wire.DefaultTaskQueue})
	tools := &workflows.Inline{Registry: reg}
	type marks struct {
		Recorded []wire.UndoEffect
		Result   wire.UndoResult
		Left     int
	}
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (marks, error) {
		effects := &workflows.Effects{}
		ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{Effects: effects})
		call := func(id, name string) toolcore.ToolCall {
			c, err := toolcore.NewToolCall(id, name, []byte(`{}`))
			if err != nil {
				panic(err)
			}
			return c
		}
		if _, err := tools.ExecuteToolCall(ctx, call("before", "book")); err != nil {
			return marks{}, err
		}
		mark := effects.Mark()
		if _, err := workflows.ExecuteToolCall(ctx, call("child", "book")); err != nil {
			return marks{}, err
		}
		if _, err := tools.ExecuteToolCall(ctx, call("seen", "look")); err != nil { // not recorded inline
			return marks{}, err
		}
		if _, err := tools.ExecuteRound(ctx, []toolcore.ToolCall{call("round", "pay")}, toolcore.RoundOptions{}); err != nil {
			return marks{}, err
		}
		if _, err := tools.ExecuteToolCall(ctx, call("rejected", "nope")); err != nil { // an error result
			return marks{}, err
		}
		recorded := effects.List()
		res, err := effects.Undo(ctx, workflows.UndoOptions{After: mark})
		return marks{Recorded: recorded, Result: res, Left: effects.Mark()}, err
	}, workflow.RegisterOptions{Name: "agent"})
	env.ExecuteWorkflow("agent")
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got marks
	require.NoError(t, env.GetWorkflowResult(&got))
	q := wire.DefaultTaskQueue // the Inline's and the call options' queue: each effect records where it ran
	want := []wire.UndoEffect{
		{ToolCallID: "before", ToolName: "book", IdempotencyKey: "agent-1/call/before", Output: `{"slot":"before"}`, TaskQueue: q},
		{ToolCallID: "child", ToolName: "book", IdempotencyKey: "toolcall-child", Output: `{"slot":"child"}`, TaskQueue: q},
		{ToolCallID: "round", ToolName: "pay", IdempotencyKey: "agent-1/call/round", Output: `"paid"`, TaskQueue: q},
	}
	assert.Equal(t, want, got.Recorded)
	var statuses []wire.UndoStatus
	for _, s := range got.Result.Steps {
		statuses = append(statuses, s.Status)
	}
	assert.Equal(t, []wire.UndoStatus{wire.UndoCompensated, wire.UndoCompensated}, statuses)
	assert.Equal(t, []string{
		`round key=agent-1/call/round/undo output="paid"`,
		`child key=toolcall-child/undo output={"slot":"child"}`,
	}, log.list(), "after the mark only, last first")
	assert.Equal(t, 1, got.Left, "the undone effects leave the record; the one before the mark stays")
}

// TestCompensateOnlyForUnsafeTools: Define refuses a Compensate on a tool that is not Unsafe.
func TestCompensateOnlyForUnsafeTools(t *testing.T) {
	for _, se := range []toolcore.SideEffect{toolcore.Idempotent, toolcore.ReadOnly} {
		_, err := toolcore.Define(toolcore.Definition[empty]{
			Name: "undoable", Description: "d", Validate: acceptAll, Options: toolcore.Options{SideEffect: se},
			Execute:    func(context.Context, empty) (any, error) { return nil, nil },
			Compensate: func(context.Context, toolcore.Compensation) error { return nil },
		})
		var ce *toolcore.ContractError
		require.ErrorAs(t, err, &ce, se.String())
		assert.Equal(t, toolcore.CodeInvalidToolDefinition, ce.Code)
		assert.Contains(t, ce.Message, "Compensate is for Unsafe tools")
	}
}

// TestUndoOnEachEffectsQueue: each compensation runs on the task queue its effect recorded (an
// effect without one on the undo's own), and a compensation that fails names its queue once,
// whether the activity said it (a tool the worker lacks) or not (a NonRecoverableToolError).
func TestUndoOnEachEffectsQueue(t *testing.T) {
	on := func(e wire.UndoEffect, queue string) wire.UndoEffect { e.TaskQueue = queue; return e }
	tests := []struct {
		name       string
		give       []wire.UndoEffect
		wantQueues []string // of the CompensateTool activities, in undo order
		wantFail   string
	}{
		{
			name:       "each on its own queue",
			give:       []wire.UndoEffect{on(effect("book", "a"), "queue-a"), effect("pay", "b"), on(effect("book", "c"), "queue-c")},
			wantQueues: []string{"queue-c", wire.DefaultTaskQueue, "queue-a"},
		},
		{
			name:       "a worker without the tool names its queue",
			give:       []wire.UndoEffect{effect("book", "a"), on(effect("gone", "b"), "queue-b")},
			wantQueues: []string{"queue-b"},
			wantFail:   `tool "gone" is not registered on the worker of task queue "queue-b"; its effect was not compensated`,
		},
		{
			name:       "a compensation failing for good names its queue",
			give:       []wire.UndoEffect{on(effect("book", "stuck"), "queue-s")},
			wantQueues: []string{"queue-s"},
			wantFail:   `the slot is already used (on task queue "queue-s")`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := undoEnv(undoTools(t, &undoLog{}))
			var queues []string
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if info.ActivityType.Name == wire.CompensateToolName {
					queues = append(queues, info.TaskQueue)
				}
			})
			env.ExecuteWorkflow(wire.UndoWorkflowName, wire.UndoWorkflowInput{RunID: "agent-1", Effects: tt.give})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var res wire.UndoResult
			require.NoError(t, env.GetWorkflowResult(&res))
			assert.Equal(t, tt.wantQueues, queues)
			var failures []string
			for _, s := range res.Steps {
				if s.Status == wire.UndoFailed {
					failures = append(failures, s.Message)
				}
			}
			if tt.wantFail == "" {
				assert.Empty(t, failures)
			} else if assert.Len(t, failures, 1) {
				assert.Contains(t, failures[0], tt.wantFail)
				assert.Equal(t, 1, strings.Count(failures[0], "task queue"), "the queue is named once: %s", failures[0])
			}
		})
	}
}
