package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

// TestUndoCommand: an agent run books one slot as a child call and one inline, reads with a
// ReadOnly tool, then fails. `toolgate undo RUN` reads the run's history and compensates the two
// bookings, last first, each under its call's key plus "/undo", skipping the ReadOnly call; a
// second `toolgate undo` attaches to the first undo and compensates nothing again.
func TestUndoCommand(t *testing.T) {
	type empty struct{}
	accept := func(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Accept(empty{}) }
	var mu sync.Mutex
	var undone []string
	book := toolcore.MustDefine(toolcore.Definition[empty]{
		Name: "book", Description: "Books a slot.", Validate: accept,
		Execute: func(ctx context.Context, _ empty) (any, error) {
			return map[string]string{"slot": toolcore.ToolCallID(ctx)}, nil
		},
		Compensate: func(_ context.Context, c toolcore.Compensation) error {
			mu.Lock()
			defer mu.Unlock()
			undone = append(undone, c.ToolCallID+" "+c.Key+" "+c.Output)
			return nil
		},
	})
	look := toolcore.MustDefine(toolcore.Definition[empty]{
		Name: "look", Description: "Looks.", Validate: accept, Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		Execute: func(context.Context, empty) (any, error) { return "seen", nil },
	})
	reg, err := toolcore.NewRegistry(book, look)
	require.NoError(t, err)
	sdk := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(sdk, devtest.Server(t).Namespace(), reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	inline := &workflows.Inline{Registry: reg, TaskQueue: queue}
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, prefix string) error {
		ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: queue})
		c1, _ := toolcore.NewToolCall(prefix+"-1", "book", []byte(`{}`))
		c2, _ := toolcore.NewToolCall(prefix+"-2", "book", []byte(`{}`))
		c3, _ := toolcore.NewToolCall(prefix+"-3", "look", []byte(`{}`))
		if _, err := workflows.ExecuteToolCall(ctx, c1); err != nil {
			return err
		}
		if _, err := inline.ExecuteToolCall(ctx, c2); err != nil {
			return err
		}
		if _, err := workflows.ExecuteToolCall(ctx, c3); err != nil {
			return err
		}
		return errors.New("the agent gave up")
	}, workflow.RegisterOptions{Name: "UndoAgent"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agentID := "undo-agent-" + queue
	run, err := sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: agentID, TaskQueue: queue}, "UndoAgent", queue)
	require.NoError(t, err)
	require.Error(t, run.Get(ctx, nil), "the agent run fails")

	var res wire.UndoResult
	require.NoError(t, json.Unmarshal([]byte(toolgateCLI(t, "undo", agentID, "--task-queue", queue, "--json")), &res))
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, string(s.Status)+" "+s.Effect.ToolCallID+" "+s.Effect.IdempotencyKey)
	}
	u := queue
	assert.Equal(t, []string{
		"skipped " + u + "-3 toolcall-" + u + "-3",
		"compensated " + u + "-2 " + agentID + "/call/" + u + "-2",
		"compensated " + u + "-1 toolcall-" + u + "-1",
	}, steps)
	want := []string{
		u + "-2 " + agentID + "/call/" + u + `-2/undo {"slot":"` + u + `-2"}`,
		u + "-1 toolcall-" + u + `-1/undo {"slot":"` + u + `-1"}`,
	}
	mu.Lock()
	assert.Equal(t, want, undone)
	mu.Unlock()

	again := toolgateCLI(t, "undo", agentID, "--task-queue", queue)
	assert.Equal(t, "skipped look "+u+"-3 toolcall-"+u+"-3\ncompensated book "+u+"-2 "+agentID+"/call/"+u+"-2\ncompensated book "+u+"-1 toolcall-"+u+"-1\n", again,
		"a second undo attaches to the first")
	mu.Lock()
	assert.Equal(t, want, undone, "nothing is compensated twice")
	mu.Unlock()
}
