package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

// undoAgent registers, on a worker of its own queue, the workflow "UndoAgent": it books three
// slots (a child call, an inline call, a child call), reads with a ReadOnly tool, then fails.
// book's Compensate logs "<call ID> <key> <output>" and fails for good while failing holds its
// call ID.
func undoAgent(t *testing.T) (queue string, undone func() []string, failing *atomic.Value) {
	type empty struct{}
	accept := func(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Accept(empty{}) }
	var mu sync.Mutex
	var log []string
	failing = &atomic.Value{}
	failing.Store("")
	book := toolcore.MustDefine(toolcore.Definition[empty]{
		Name: "book", Description: "Books a slot.", Validate: accept,
		Execute: func(ctx context.Context, _ empty) (any, error) {
			return map[string]string{"slot": toolcore.ToolCallID(ctx)}, nil
		},
		Compensate: func(_ context.Context, c toolcore.Compensation) error {
			if c.ToolCallID == failing.Load().(string) {
				return toolcore.NewNonRecoverableToolError("the calendar refuses")
			}
			mu.Lock()
			defer mu.Unlock()
			log = append(log, c.ToolCallID+" "+c.Key+" "+c.Output)
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
	queue = devtest.TaskQueue(t)
	w, err := worker.New(sdk, devtest.Server(t).Namespace(), reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	inline := &workflows.Inline{Registry: reg, TaskQueue: queue}
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, prefix string) error {
		ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: queue})
		c1, _ := toolcore.NewToolCall(prefix+"-1", "book", []byte(`{}`))
		c2, _ := toolcore.NewToolCall(prefix+"-2", "book", []byte(`{}`))
		c3, _ := toolcore.NewToolCall(prefix+"-3", "look", []byte(`{}`))
		c4, _ := toolcore.NewToolCall(prefix+"-4", "book", []byte(`{}`))
		if _, err := workflows.ExecuteToolCall(ctx, c1); err != nil {
			return err
		}
		if _, err := inline.ExecuteToolCall(ctx, c2); err != nil {
			return err
		}
		if _, err := workflows.ExecuteToolCall(ctx, c3); err != nil {
			return err
		}
		if _, err := workflows.ExecuteToolCall(ctx, c4); err != nil {
			return err
		}
		return errors.New("the agent gave up")
	}, workflow.RegisterOptions{Name: "UndoAgent"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return queue, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), log...)
	}, failing
}

// runUndoAgent runs UndoAgent to its failure on queue and returns its workflow ID.
func runUndoAgent(t *testing.T, queue string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agentID := "undo-agent-" + queue
	run, err := devtest.Client(t).ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: agentID, TaskQueue: queue}, "UndoAgent", queue)
	require.NoError(t, err)
	require.Error(t, run.Get(ctx, nil), "the agent run fails")
	return agentID
}

// TestUndoCommand: an agent run on a queue of its own books three slots (two child calls, one
// inline), reads with a ReadOnly tool, then fails. `toolgate undo RUN`, without flags, reads the
// run's history and compensates the three bookings on the run's queue, last first, each under its
// call's key plus "/undo", skipping the ReadOnly call; a second `toolgate undo` prints the same and
// compensates nothing again.
func TestUndoCommand(t *testing.T) {
	queue, undone, _ := undoAgent(t)
	agentID := runUndoAgent(t, queue)

	var res wire.UndoResult
	require.NoError(t, json.Unmarshal([]byte(toolgateCLI(t, "undo", agentID, "--json")), &res))
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, string(s.Status)+" "+s.Effect.ToolCallID+" "+s.Effect.IdempotencyKey+" "+s.Effect.TaskQueue)
	}
	u := queue
	assert.Equal(t, []string{
		"compensated " + u + "-4 toolcall-" + u + "-4 " + u,
		"skipped " + u + "-3 toolcall-" + u + "-3 " + u,
		"compensated " + u + "-2 " + agentID + "/call/" + u + "-2 " + u,
		"compensated " + u + "-1 toolcall-" + u + "-1 " + u,
	}, steps)
	want := []string{
		u + "-4 toolcall-" + u + `-4/undo {"slot":"` + u + `-4"}`,
		u + "-2 " + agentID + "/call/" + u + `-2/undo {"slot":"` + u + `-2"}`,
		u + "-1 toolcall-" + u + `-1/undo {"slot":"` + u + `-1"}`,
	}
	assert.Equal(t, want, undone())
	d, err := devtest.Client(t).DescribeWorkflowExecution(context.Background(), wire.UndoWorkflowID(agentID, 1), "")
	require.NoError(t, err)
	assert.Equal(t, queue, d.GetExecutionConfig().GetTaskQueue().GetName(), "the undo runs on the run's queue")

	again := toolgateCLI(t, "undo", agentID)
	assert.Equal(t, "compensated book "+u+"-4 toolcall-"+u+"-4\nskipped look "+u+"-3 toolcall-"+u+"-3\ncompensated book "+u+"-2 "+agentID+"/call/"+u+"-2\ncompensated book "+u+"-1 toolcall-"+u+"-1\n", again,
		"a second undo prints what the first did")
	assert.Equal(t, want, undone(), "nothing is compensated twice")
	_, err = devtest.Client(t).DescribeWorkflowExecution(context.Background(), wire.UndoWorkflowID(agentID, 2), "")
	assert.Error(t, err, "nothing was left to undo: no second attempt started")
}

// TestUndoAgainAfterAFailure: the first `toolgate undo` of a run compensates its last booking,
// fails for good on the middle one and leaves the first (exit 1, naming the queue); once the
// compensation works, `toolgate undo` again compensates only those two (a second attempt), and a
// third compensates nothing.
func TestUndoAgainAfterAFailure(t *testing.T) {
	queue, undone, failing := undoAgent(t)
	agentID := runUndoAgent(t, queue)
	u := queue
	failing.Store(u + "-2")

	out, code := toolgateCLIExit(t, "undo", agentID)
	assert.Equal(t, 1, code, "effects remain")
	assert.Equal(t, "compensated book "+u+"-4 toolcall-"+u+"-4\nskipped look "+u+"-3 toolcall-"+u+"-3\n"+
		"failed book "+u+"-2 "+agentID+"/call/"+u+"-2: the calendar refuses (on task queue \""+u+"\")\n"+
		"remaining book "+u+"-1 toolcall-"+u+"-1\n", out)
	assert.Equal(t, []string{u + "-4 toolcall-" + u + `-4/undo {"slot":"` + u + `-4"}`}, undone())

	failing.Store("")
	out, code = toolgateCLIExit(t, "undo", agentID)
	assert.Equal(t, 0, code)
	assert.Equal(t, "compensated book "+u+"-4 toolcall-"+u+"-4\nskipped look "+u+"-3 toolcall-"+u+"-3\n"+
		"compensated book "+u+"-2 "+agentID+"/call/"+u+"-2\ncompensated book "+u+"-1 toolcall-"+u+"-1\n", out)
	want := []string{
		u + "-4 toolcall-" + u + `-4/undo {"slot":"` + u + `-4"}`,
		u + "-2 " + agentID + "/call/" + u + `-2/undo {"slot":"` + u + `-2"}`,
		u + "-1 toolcall-" + u + `-1/undo {"slot":"` + u + `-1"}`,
	}
	assert.Equal(t, want, undone(), "the second undo compensates only what the first left")
	var second wire.UndoResult
	run := devtest.Client(t).GetWorkflow(context.Background(), wire.UndoWorkflowID(agentID, 2), "")
	require.NoError(t, run.Get(context.Background(), &second))
	assert.Len(t, second.Steps, 2, "the second attempt was given the two effects left")

	out, code = toolgateCLIExit(t, "undo", agentID)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "compensated book "+u+"-1")
	assert.Equal(t, want, undone(), "a third undo compensates nothing")
}

// toolgateCLIExit runs the toolgate CLI against the shared server and returns its standard
// output and exit code.
func toolgateCLIExit(t *testing.T, args ...string) (string, int) {
	t.Helper()
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	srv := devtest.Server(t)
	cmd := exec.Command(bin, append(args, "--address", srv.FrontendAddress(), "--namespace", srv.Namespace())...)
	cmd.Env = testbin.ChildEnv()
	var stderr testbin.SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, "toolgate %v: %s", args, stderr.String())
	return string(out), 0
}

// TestUndoOnAQueueWithoutWorker: `toolgate undo --task-queue` naming a queue no worker polls
// fails at once naming it (exit 5) and starts nothing, so the undo without the flag then runs.
func TestUndoOnAQueueWithoutWorker(t *testing.T) {
	queue, undone, _ := undoAgent(t)
	agentID := runUndoAgent(t, queue)
	nowhere := "nowhere-" + queue

	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	srv := devtest.Server(t)
	cmd := exec.Command(bin, "undo", agentID, "--task-queue", nowhere, "--address", srv.FrontendAddress(), "--namespace", srv.Namespace())
	cmd.Env = testbin.ChildEnv()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 5, exit.ExitCode())
	assert.Contains(t, string(out), `no worker polls task queue "`+nowhere+`"`)
	assert.Empty(t, undone())
	_, err = devtest.Client(t).DescribeWorkflowExecution(context.Background(), wire.UndoWorkflowID(agentID, 1), "")
	assert.Error(t, err, "no attempt was started")

	_, code := toolgateCLIExit(t, "undo", agentID)
	assert.Equal(t, 0, code)
	assert.Len(t, undone(), 3, "the undo without the flag compensates the three bookings")
}
