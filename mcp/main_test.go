package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == fixtureArg {
		os.Exit(runFixtureServer(os.Args[2]))
	}
	if len(os.Args) == 4 && os.Args[1] == taskFixtureArg {
		os.Exit(runTaskFixtureServer(os.Args[2], os.Args[3]))
	}
	if len(os.Args) == 2 && os.Args[1] == tasksClientArg {
		os.Exit(runTasksClient())
	}
	code := devtest.Main(m)
	testbin.Cleanup()
	os.Exit(code)
}

// testTools are the tools the tests serve, with what they observed.
type testTools struct {
	mu   sync.Mutex
	runs map[string]int
	// gates hold a count call with that key until closed; started receives the key when it runs.
	gates   map[string]chan struct{}
	started chan string
	// canceled receives once per wait call that saw its context canceled.
	canceled chan struct{}
	// stepAck lets a steps call go on after each of its first reports.
	stepAck chan struct{}
}

type textArgs struct {
	Text string `json:"text"`
}

type keyArgs struct {
	Key string `json:"key"`
}

type noArgs struct{}

func newTestTools(t testing.TB) (*testTools, *toolcore.Registry) {
	tt := &testTools{
		runs:     map[string]int{},
		gates:    map[string]chan struct{}{},
		started:  make(chan string, 16),
		canceled: make(chan struct{}, 16),
		stepAck:  make(chan struct{}),
	}
	reg, err := toolcore.NewRegistry(
		toolcore.MustDefine(toolcore.Definition[textArgs]{
			Name:        "echo",
			Description: "Echo the text.",
			Execute: func(_ context.Context, a textArgs) (any, error) {
				return map[string]any{"text": a.Text}, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "fails",
			Description: "Fail with an ordinary error.",
			Execute:     func(context.Context, noArgs) (any, error) { return nil, errors.New("boom") },
			Options:     toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 1},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "fatal",
			Description: "Fail with a NonRecoverableToolError.",
			Execute: func(context.Context, noArgs) (any, error) {
				return nil, toolcore.NewNonRecoverableToolError("ledger out of balance")
			},
		}),
		toolcore.MustDefine(toolcore.Definition[keyArgs]{
			Name:        "count",
			Description: "Count the runs of key (waits while a test holds its gate).",
			Execute: func(ctx context.Context, a keyArgs) (any, error) {
				tt.mu.Lock()
				tt.runs[a.Key]++
				n := tt.runs[a.Key]
				gate := tt.gates[a.Key]
				tt.mu.Unlock()
				tt.started <- a.Key
				if gate != nil {
					select {
					case <-gate:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return map[string]any{"runs": n}, nil
			},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "wait",
			Description: "Report progress, then wait until canceled.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 1, Total: 2, Message: "halfway"})
				<-ctx.Done()
				tt.canceled <- struct{}{}
				return nil, ctx.Err()
			},
			// A short heartbeat timeout sends the progress sooner (heartbeats are throttled to a
			// fraction of it).
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly, HeartbeatTimeout: 2 * time.Second},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "steps",
			Description: "Report 0/3, 1/3 and 2/3, each once a test acknowledges it, then 3/3 just before returning.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				for k := range int64(3) {
					toolcore.ReportProgress(ctx, toolcore.Progress{Completed: k, Total: 3, Message: fmt.Sprintf("step %d", k)})
					select {
					case <-tt.stepAck:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 3, Total: 3, Message: "done"})
				return map[string]any{"steps": 3}, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "burst",
			Description: "Report 1/100 to 100/100 as fast as it can, then return.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				for k := range int64(100) {
					toolcore.ReportProgress(ctx, toolcore.Progress{Completed: k + 1, Total: 100})
				}
				return map[string]any{"reports": 100}, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "observed",
			Description: "Wait until a wait call has seen its context canceled.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				select {
				case <-tt.canceled:
					return map[string]any{"canceled": true}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		}),
	)
	require.NoError(t, err)
	return tt, reg
}

func (tt *testTools) hold(key string) chan struct{} {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	gate := make(chan struct{})
	tt.gates[key] = gate
	return gate
}

func (tt *testTools) runsOf(key string) int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.runs[key]
}

// fixture is a worker serving the test tools on a queue of its own, and a toolgate client.
type fixture struct {
	tools *testTools
	tg    *tgclient.Client
	infos []toolcore.ToolInfo
	queue string
}

func newFixture(t *testing.T) *fixture { return newFixtureTB(t) }

func newFixtureTB(t testing.TB) *fixture {
	tt, reg := newTestTools(t)
	tg, queue := servingWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	return &fixture{tools: tt, tg: tg, infos: infos, queue: queue}
}

// servingWorker runs an in-process worker of reg on a fresh task queue of the shared dev server
// until the test ends, and returns a toolgate client for that queue and the queue.
func servingWorker(t testing.TB, reg *toolcore.Registry) (*tgclient.Client, string) {
	c := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, "", reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return tgclient.New(c, tgclient.Options{TaskQueue: queue}), queue
}

func (f *fixture) server() *sdk.Server {
	return mcp.NewServer(f.tg, f.infos, mcp.Options{})
}
