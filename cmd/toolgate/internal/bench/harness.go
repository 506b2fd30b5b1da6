package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// workerStopTimeout bounds the graceful stop of the bench workers (nothing is in flight then).
const workerStopTimeout = 5 * time.Second

// slotsHeadroom is added to InFlight for the activity slots of the bare workers, and of the
// toolgate workers when the default (worker.DefaultMaxConcurrentActivities) leaves less room: a
// no-op probe must be able to start while the sleeps are held.
const slotsHeadroom = 100

// record is one measured call.
type record struct {
	workflowID string
	start, end time.Time
}

func (r record) took() time.Duration { return r.end.Sub(r.start) }

// callKind selects what a call does.
type callKind uint8

const (
	callNoop  callKind = iota + 1 // succeeds
	callFail                      // ends in an error (result or failure)
	callSleep                     // held by the hold (toolgate subjects only)
)

// subject runs one call of a kind and reports it.
type subject struct {
	name string
	call func(ctx context.Context, kind callKind) (record, error)
	// client is the toolgate client of a toolgate subject, nil for bare ones.
	client *tgclient.Client
}

// harness is what one Run sets up on the server: a client, the workers, the subjects.
type harness struct {
	cfg      Config
	sdk      client.Client
	prefix   string // unique to this run: "bench-<hex>"
	seq      atomic.Int64
	hold     *hold
	costHold *hold // the cost phase's held call
	ticks    *tickLog
	tickIDs  sync.Map // cancel phase: call index -> call ID
	subjects []subject
	attrs    bool // the toolgate worker upserts search attributes
	workers  []func()
	rpcs     rpcTrace // the client's RPCs during the latency phase
	// actions counts the billable actions of every RPC of the client (workers' included).
	actions     *worker.ActionCounter
	agentQueues map[string]bool // queues with a bench agent worker
	toolgate    subject         // plain toolgate on the always-running toolgate worker
}

// newHarness dials the server and starts the workers the subjects need.
func newHarness(ctx context.Context, cfg Config) (h *harness, err error) {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	h = &harness{cfg: cfg, prefix: "bench-" + hex.EncodeToString(b[:]), hold: newHold(), costHold: newHold(), ticks: newTickLog(),
		actions: worker.NewActionCounter(nil), agentQueues: map[string]bool{}}
	opts := client.Options{
		HostPort:  cfg.Address,
		Namespace: cfg.Namespace,
		Logger:    logging.Temporal(cfg.Logger),
	}
	opts.ConnectionOptions.DialOptions = append(opts.ConnectionOptions.DialOptions, grpc.WithChainUnaryInterceptor(h.rpcs.intercept), h.actions.DialOption())
	if cfg.NoGzip {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	h.sdk, err = client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", cfg.Address, err)
	}
	defer func() {
		if err != nil {
			h.close()
		}
	}()
	reg, err := registry(h.hold, h.ticks, cfg.InFlightHeartbeat)
	if err != nil {
		return nil, fmt.Errorf("define bench tools: %w", err)
	}
	held, err := sleepToolNamed(toolHeld, h.costHold, cfg.InFlightHeartbeat)
	if err == nil {
		err = reg.Register(held)
	}
	if err != nil {
		return nil, fmt.Errorf("define bench tools: %w", err)
	}
	if slices.Contains(cfg.Subjects, SubjectToolgateRateLimited) {
		// Only then: the limited tools' own queue adds pollers to the worker.
		limited, err := limitedTools()
		if err != nil {
			return nil, fmt.Errorf("define bench tools: %w", err)
		}
		for _, t := range limited {
			if err := reg.Register(t); err != nil {
				return nil, fmt.Errorf("define bench tools: %w", err)
			}
		}
	}
	// The toolgate worker always runs: the in-flight phase uses it whatever the subjects.
	queue := h.prefix + "-toolgate"
	w, err := h.startToolgateWorker(reg, queue, nil, h.cfg.Logger, true)
	if err != nil {
		return nil, err
	}
	h.attrs = w.SearchAttributes()
	h.toolgate = h.toolgateSubject(SubjectToolgate, tgclient.New(h.sdk, tgclient.Options{TaskQueue: queue, Namespace: cfg.Namespace}))
	if slices.Contains(cfg.Subjects, SubjectToolgateNoSA) {
		queue := h.prefix + "-toolgate-nosa"
		off := false
		if _, err := h.startToolgateWorker(reg, queue, &off, h.cfg.Logger.WithOptions(zap.IncreaseLevel(zapcore.ErrorLevel)), false); err != nil {
			return nil, err
		}
		nosa := tgclient.New(h.sdk, tgclient.Options{TaskQueue: queue, Namespace: cfg.Namespace, SearchAttributes: &off})
		h.subjects = append(h.subjects, h.toolgateSubject(SubjectToolgateNoSA, nosa))
	}
	bareQueue := h.prefix + "-bare"
	if err := h.startBareWorker(bareQueue, false); err != nil {
		return nil, err
	}
	lazyQueue := h.prefix + "-bare-noeageract"
	if slices.Contains(cfg.Subjects, SubjectBareNoEagerAct) {
		if err := h.startBareWorker(lazyQueue, true); err != nil {
			return nil, err
		}
	}
	for _, name := range cfg.Subjects {
		switch name {
		case SubjectToolgate:
			h.subjects = append(h.subjects, h.toolgate)
		case SubjectToolgateLocal:
			h.subjects = append(h.subjects, h.toolgateSubjectOf(name, h.toolgate.client, localToolName))
		case SubjectToolgateFairness:
			h.subjects = append(h.subjects, h.fairnessSubject(h.toolgate.client))
		case SubjectToolgateRateLimited:
			h.subjects = append(h.subjects, h.toolgateSubjectOf(name, h.toolgate.client, limitedToolName))
		case SubjectToolgateNoEager:
			lazy := tgclient.New(h.sdk, tgclient.Options{TaskQueue: queue, Namespace: cfg.Namespace, DisableEagerStart: true})
			h.subjects = append(h.subjects, h.toolgateSubject(name, lazy))
		case SubjectBare:
			h.subjects = append(h.subjects, h.bareSubject(name, bareQueue, bareWorkflowName, false))
		case SubjectBareEager:
			h.subjects = append(h.subjects, h.bareSubject(name, bareQueue, bareWorkflowName, true))
		case SubjectBareLocal:
			h.subjects = append(h.subjects, h.bareSubject(name, bareQueue, bareLocalWorkflowName, false))
		case SubjectBareNoEagerAct:
			h.subjects = append(h.subjects, h.bareSubject(name, lazyQueue, bareWorkflowName, false))
		}
	}
	h.subjects = ordered(h.subjects, cfg.Subjects)
	return h, nil
}

// ordered returns subjects in the order of names.
func ordered(subjects []subject, names []string) []subject {
	out := make([]subject, 0, len(subjects))
	for _, n := range names {
		for _, s := range subjects {
			if s.name == n {
				out = append(out, s)
			}
		}
	}
	return out
}

// startToolgateWorker starts a toolgate worker on queue; attrs forces the search attributes on or
// off (nil detects them). With agent, the worker also hosts the bench agent workflow, as
// workflows.Inline's documentation sets an agent up: its inline calls' ExecuteTool activities are
// then on the agent's own queue and dispatched eagerly, like the plain activities of an agent.
func (h *harness) startToolgateWorker(reg *toolcore.Registry, queue string, attrs *bool, logger *zap.Logger, agent bool) (*worker.Worker, error) {
	w, err := worker.New(h.sdk, h.cfg.Namespace, reg, worker.Options{
		TaskQueue:               queue,
		MaxConcurrentActivities: toolgateSlots(h.cfg.InFlight),
		StopTimeout:             workerStopTimeout,
		SearchAttributes:        attrs,
		Logger:                  logger,
	})
	if err != nil {
		return nil, fmt.Errorf("create toolgate worker: %w", err)
	}
	if agent {
		w.RegisterWorkflowWithOptions(benchAgentWorkflow, workflow.RegisterOptions{Name: benchAgentWorkflowName})
	}
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start toolgate worker: %w", err)
	}
	h.workers = append(h.workers, w.Stop)
	return w, nil
}

// toolgateSlots is the MaxConcurrentActivities of the toolgate workers: the default a user gets
// (0) unless it leaves no room for probes beside inFlight held calls.
func toolgateSlots(inFlight int) int {
	if inFlight+slotsHeadroom <= worker.DefaultMaxConcurrentActivities {
		return 0
	}
	return inFlight + slotsHeadroom
}

// startBareWorker starts a worker of the baseline workflows on queue; noEagerActivities turns off
// eager activity dispatch (on by default in the SDK and the server).
func (h *harness) startBareWorker(queue string, noEagerActivities bool) error {
	w := sdkworker.New(h.sdk, queue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize: h.cfg.InFlight + slotsHeadroom,
		WorkerStopTimeout:                  workerStopTimeout,
		DisableEagerActivities:             noEagerActivities,
	})
	w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: bareWorkflowName})
	w.RegisterWorkflowWithOptions(bareLocalWorkflow, workflow.RegisterOptions{Name: bareLocalWorkflowName})
	w.RegisterActivityWithOptions(bareActivity, activity.RegisterOptions{Name: bareActivityName})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start bare worker: %w", err)
	}
	h.workers = append(h.workers, w.Stop)
	return nil
}

// close stops the workers and the client.
func (h *harness) close() {
	for i := len(h.workers) - 1; i >= 0; i-- {
		h.workers[i]()
	}
	h.sdk.Close()
}

// nextID returns a call ID unique to this run.
func (h *harness) nextID() string {
	return h.prefix + "-" + strconv.FormatInt(h.seq.Add(1), 10)
}

func toolName(kind callKind) string {
	switch kind {
	case callFail:
		return toolFail
	case callSleep:
		return toolSleep
	default:
		return toolNoop
	}
}

// toolgateSubject calls through the toolgate client cl.
func (h *harness) toolgateSubject(name string, cl *tgclient.Client) subject {
	return h.toolgateSubjectOf(name, cl, toolName)
}

// toolgateSubjectOf calls the tools tool names through the toolgate client cl.
func (h *harness) toolgateSubjectOf(name string, cl *tgclient.Client, tool func(callKind) string) subject {
	return subject{
		name: name,
		call: func(ctx context.Context, kind callKind) (record, error) {
			call, err := toolcore.NewToolCall(h.nextID(), tool(kind), []byte("{}"))
			if err != nil {
				return record{}, err
			}
			r := record{workflowID: wire.WorkflowID("", call.ID()), start: time.Now()}
			res, err := cl.Execute(ctx, call)
			r.end = time.Now()
			if err != nil {
				return r, fmt.Errorf("%s: execute %s: %w", name, call.ID(), err)
			}
			if res.IsError() != (kind == callFail) {
				return r, fmt.Errorf("%s: %s: unexpected result %s", name, call.ID(), res.Content())
			}
			return r, nil
		},
		client: cl,
	}
}

// bareSubject runs a baseline workflow type on queue.
func (h *harness) bareSubject(name, queue, workflowType string, eager bool) subject {
	return subject{
		name: name,
		call: func(ctx context.Context, kind callKind) (record, error) {
			input := "noop"
			if kind == callFail {
				input = bareFail
			}
			r := record{workflowID: "bare-" + h.nextID(), start: time.Now()}
			run, err := h.sdk.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
				ID:               r.workflowID,
				TaskQueue:        queue,
				EnableEagerStart: eager,
			}, workflowType, input)
			var out string
			if err == nil {
				err = run.Get(ctx, &out)
			}
			r.end = time.Now()
			switch {
			case kind == callFail && err == nil:
				return r, fmt.Errorf("%s: %s: want a failure, got %q", name, r.workflowID, out)
			case kind == callFail:
				var failed *temporal.WorkflowExecutionError
				if !errors.As(err, &failed) {
					return r, fmt.Errorf("%s: %s: want a workflow failure: %w", name, r.workflowID, err)
				}
			case err != nil:
				return r, fmt.Errorf("%s: %s: %w", name, r.workflowID, err)
			}
			return r, nil
		},
	}
}
