package e2e

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// testTimeout bounds every wait of a test on the server (never a timing assertion).
const testTimeout = time.Minute

// env is one test's worker, client and task queue on the shared server. Workflow IDs are scoped
// by the task queue, so tests never see each other's calls.
type env struct {
	t      *testing.T
	queue  string
	sdk    sdkclient.Client
	client *client.Client
	worker *worker.Worker
}

// newEnv starts a worker for tools on a fresh task queue and returns a client for it.
func newEnv(t *testing.T, tools ...toolcore.Tool) *env {
	t.Helper()
	e := &env{t: t, queue: devtest.TaskQueue(t), sdk: devtest.Client(t)}
	e.worker = e.startWorker(e.sdk, 5*time.Second, tools...)
	e.client = client.New(e.sdk, client.Options{
		TaskQueue: e.queue,
		Scope:     e.queue,
		Namespace: devtest.Server(t).Namespace(),
	})
	return e
}

// startWorker starts another worker on the env's queue, stopped at cleanup (waiting up to
// stopTimeout for its running tools).
func (e *env) startWorker(c sdkclient.Client, stopTimeout time.Duration, tools ...toolcore.Tool) *worker.Worker {
	e.t.Helper()
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(e.t, err)
	w, err := worker.New(c, devtest.Server(e.t).Namespace(), reg, worker.Options{
		TaskQueue:   e.queue,
		StopTimeout: stopTimeout,
	})
	require.NoError(e.t, err)
	require.NoError(e.t, w.Start())
	e.t.Cleanup(w.Stop)
	return w
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	e.t.Cleanup(cancel)
	return ctx
}

// args are the arguments of every test tool.
type args struct {
	Left  int64  `json:"left,omitempty"`
	Right int64  `json:"right,omitempty"`
	Tag   string `json:"tag,omitempty"`
}

func decodeArgs(a toolcore.Arguments) toolcore.Decision[args] {
	var v args
	if err := a.Decode(&v); err != nil {
		return toolcore.Reject[args](err.Error())
	}
	return toolcore.Accept(v)
}

func define(t *testing.T, name string, opts toolcore.Options, run func(ctx context.Context, a args) (any, error)) toolcore.Tool {
	t.Helper()
	tool, err := toolcore.Define(toolcore.Definition[args]{
		Name:        name,
		Description: "test tool " + name,
		Validate:    decodeArgs,
		Execute:     run,
		Options:     opts,
	})
	require.NoError(t, err)
	return tool
}

// addTool adds left and right and counts its runs.
func addTool(t *testing.T, runs *atomic.Int32) toolcore.Tool {
	return define(t, "add", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(_ context.Context, a args) (any, error) {
		runs.Add(1)
		return map[string]int64{"sum": a.Left + a.Right}, nil
	})
}

// gate is a tool that signals when an attempt starts and blocks until released or canceled.
type gate struct {
	runs     atomic.Int32
	started  chan int // attempt numbers, as attempts start
	release  chan struct{}
	canceled chan error // context.Cause seen by a canceled attempt
}

func newGate() *gate {
	return &gate{started: make(chan int, 8), release: make(chan struct{}), canceled: make(chan error, 8)}
}

// tool defines the gate as a tool. Attempts after the first (blockFirstOnly) do not block.
func (g *gate) tool(t *testing.T, name string, opts toolcore.Options, blockFirstOnly bool) toolcore.Tool {
	return define(t, name, opts, func(ctx context.Context, a args) (any, error) {
		g.runs.Add(1)
		attempt := toolcore.Attempt(ctx)
		g.started <- attempt
		if blockFirstOnly && attempt > 1 {
			return map[string]any{"attempt": attempt, "tag": a.Tag}, nil
		}
		select {
		case <-g.release:
			return map[string]any{"attempt": attempt, "tag": a.Tag}, nil
		case <-ctx.Done():
			g.canceled <- context.Cause(ctx)
			return nil, context.Cause(ctx)
		}
	})
}

// waitStarted returns the attempt number of the next attempt to start.
func (g *gate) waitStarted(t *testing.T) int {
	t.Helper()
	select {
	case attempt := <-g.started:
		return attempt
	case <-time.After(testTimeout):
		t.Fatal("the tool did not start")
		return 0
	}
}

func call(t *testing.T, id, name, arguments string) toolcore.ToolCall {
	t.Helper()
	c, err := toolcore.NewToolCall(id, name, []byte(arguments))
	require.NoError(t, err)
	return c
}

// executed runs Execute in a goroutine; the channel yields its outcome.
type executed struct {
	result toolcore.Result
	err    error
}

func goExecute(ctx context.Context, c *client.Client, tc toolcore.ToolCall) <-chan executed {
	done := make(chan executed, 1)
	go func() {
		r, err := c.Execute(ctx, tc)
		done <- executed{r, err}
	}()
	return done
}

func await(t *testing.T, done <-chan executed) executed {
	t.Helper()
	select {
	case e := <-done:
		return e
	case <-time.After(testTimeout):
		t.Fatal("Execute did not return")
		return executed{}
	}
}

func wireJSON(t *testing.T, r toolcore.Result) string {
	t.Helper()
	b, err := r.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}
