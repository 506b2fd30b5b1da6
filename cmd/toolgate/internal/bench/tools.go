package bench

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
)

// Tool names of the bench registry.
const (
	toolNoop  = "noop"
	toolFail  = "fail"
	toolSleep = "sleep"
	toolTick  = "tick"
	// toolHeld is the sleep tool of the cost phase, on a hold of its own.
	toolHeld = "held"
)

// Names of the bare baseline's workflow and activity.
const (
	bareWorkflowName      = "BenchBareWorkflow"
	bareLocalWorkflowName = "BenchBareLocalWorkflow"
	bareActivityName      = "BenchBareNoop"
	// bareFail is the bare input whose activity fails (non-retryable).
	bareFail = "fail"
)

// sleepCap bounds a held sleep call, so a bench that dies mid-phase leaves nothing running for
// long.
const sleepCap = 5 * time.Minute

// empty is the argument type of the bench tools: they take {}.
type empty struct{}

func acceptAnything(toolcore.Arguments) toolcore.Decision[empty] { return toolcore.Accept(empty{}) }

// noopTool does nothing and returns null: the least a tool can do.
func noopTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[empty]{
		Name:        toolNoop,
		Description: "Do nothing (bench).",
		Validate:    acceptAnything,
		Execute:     noop,
	})
}

// noop is the no-op tool's function, called directly by the in-process phase.
func noop(context.Context, empty) (any, error) { return nil, nil }

// failTool always returns an ordinary error: an error result (TOOL_EXECUTION_FAILED).
func failTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[empty]{
		Name:        toolFail,
		Description: "Always fail (bench).",
		Validate:    acceptAnything,
		Execute: func(context.Context, empty) (any, error) {
			return nil, errors.New("bench: this tool always fails")
		},
	})
}

// sleepTool holds its call running until the hold is released, its context ends, or sleepCap.
// heartbeat is its HeartbeatTimeout.
func sleepTool(h *hold, heartbeat time.Duration) (toolcore.Tool, error) {
	return sleepToolNamed(toolSleep, h, heartbeat)
}

// sleepToolNamed is sleepTool under another name.
func sleepToolNamed(name string, h *hold, heartbeat time.Duration) (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[empty]{
		Name:        name,
		Description: "Sleep until the bench releases the call (bench).",
		Validate:    acceptAnything,
		Execute: func(ctx context.Context, _ empty) (any, error) {
			return nil, h.wait(ctx)
		},
		Options: toolcore.Options{Timeout: sleepCap + time.Minute, HeartbeatTimeout: heartbeat},
	})
}

// tickInterval is the tick tool's progress cadence: toolbox's sleep reports once a second.
const tickInterval = time.Second

// tickTool runs like toolbox's sleep (a progress report every second, the default options) until
// its context ends, and logs each report's time in ticks, so the cancel phase can measure how
// late cancellation reaches it and how late its progress reaches a caller.
func tickTool(ticks *tickLog) (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[empty]{
		Name:        toolTick,
		Description: "Report progress every second until canceled (bench).",
		Validate:    acceptAnything,
		Execute: func(ctx context.Context, _ empty) (any, error) {
			id := toolcore.ToolCallID(ctx)
			ticker := time.NewTicker(tickInterval)
			defer ticker.Stop()
			timer := time.NewTimer(sleepCap)
			defer timer.Stop()
			for n := int64(0); ; n++ {
				ticks.reported(id, n)
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: n})
				select {
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				case <-timer.C:
					return nil, nil
				case <-ticker.C:
				}
			}
		},
	})
}

// tickLog records when each tick call reported each progress count.
type tickLog struct {
	mu    sync.Mutex
	times map[string][]time.Time // call ID -> time of report n
}

func newTickLog() *tickLog { return &tickLog{times: make(map[string][]time.Time)} }

func (l *tickLog) reported(callID string, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if int64(len(l.times[callID])) == n {
		l.times[callID] = append(l.times[callID], time.Now())
	}
}

// at returns when callID reported count n.
func (l *tickLog) at(callID string, n int64) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.times[callID]
	if n < 0 || n >= int64(len(ts)) {
		return time.Time{}, false
	}
	return ts[n], true
}

// registry holds the bench tools; heartbeat is the sleep tool's HeartbeatTimeout.
func registry(h *hold, ticks *tickLog, heartbeat time.Duration) (*toolcore.Registry, error) {
	var tools []toolcore.Tool
	for _, def := range []func() (toolcore.Tool, error){
		noopTool, failTool, noopLocalTool, failLocalTool,
		func() (toolcore.Tool, error) { return sleepTool(h, heartbeat) },
		func() (toolcore.Tool, error) { return tickTool(ticks) },
	} {
		t, err := def()
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return toolcore.NewRegistry(tools...)
}

// hold gates the sleep tool: calls count themselves in and wait for release.
type hold struct {
	mu       sync.Mutex
	running  int           // calls inside wait
	lost     int           // calls that left wait before release (their context ended)
	target   int           // reached closes when running gets here; 0: not armed
	reached  chan struct{} // closed when running reaches target
	released chan struct{} // closed by release
}

func newHold() *hold {
	return &hold{reached: make(chan struct{}), released: make(chan struct{})}
}

// expect arms the hold: reached closes once n calls are running at once.
func (h *hold) expect(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.target = n
	h.check()
}

// check closes reached when the target is met; h.mu is held.
func (h *hold) check() {
	if h.target > 0 && h.running >= h.target {
		closeOnce(h.reached)
	}
}

// count returns the number of calls being held.
func (h *hold) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running
}

func (h *hold) wait(ctx context.Context) error {
	h.mu.Lock()
	h.running++
	h.check()
	h.mu.Unlock()
	timer := time.NewTimer(sleepCap)
	defer timer.Stop()
	var err error
	select {
	case <-h.released:
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-timer.C:
	}
	h.mu.Lock()
	h.running--
	if err != nil || !isClosed(h.released) {
		h.lost++
	}
	h.mu.Unlock()
	return err
}

// counts returns the calls being held and those lost so far.
func (h *hold) counts() (running, lost int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running, h.lost
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// release lets every held call (and every later one) return.
func (h *hold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	closeOnce(h.released)
}

// closeOnce closes ch unless it is closed; callers hold the lock that guards ch.
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// bareWorkflow is the baseline: the least a Temporal user writes to run one activity.
func bareWorkflow(ctx workflow.Context, in string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteActivity(ctx, bareActivityName, in).Get(ctx, &out)
	return out, err
}

// bareLocalWorkflow runs the same activity as a local activity: inside the workflow task, so the
// call takes one workflow task and no activity task (and gives up heartbeats and server-side
// activity retries). It measures what a local-activity fast path would buy.
func bareLocalWorkflow(ctx workflow.Context, in string) (string, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteLocalActivity(ctx, bareActivityName, in).Get(ctx, &out)
	return out, err
}

// bareActivity returns its input, or fails without retry for bareFail. The failure is
// categorized benign, which only keeps the SDK from logging it as an error.
func bareActivity(_ context.Context, in string) (string, error) {
	if in == bareFail {
		return "", temporal.NewApplicationErrorWithOptions("bench: this activity always fails", "BenchFailure",
			temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign})
	}
	return in, nil
}
