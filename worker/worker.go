package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// Defaults of Options.
const (
	// DefaultMaxConcurrentActivities leaves room for other calls while 1,000 tools are held.
	DefaultMaxConcurrentActivities = 2000
	DefaultStopTimeout             = 30 * time.Second
	// DrainReportTimeout is how long Stop waits, after interrupting the attempts still running
	// at the stop timeout, for their tools to return and the interruptions to reach the
	// server. A tool that ignores its context longer is cut off unreported: its call waits
	// for its HeartbeatTimeout.
	DrainReportTimeout = 10 * time.Second
	// DefaultNamespace is used when New gets an empty namespace.
	DefaultNamespace = "default"
	// detectTimeout bounds the search attribute detection in New.
	detectTimeout = 10 * time.Second
	// recordTimeout bounds Start's wait for its deployment version to exist and take the tool set.
	recordTimeout = 30 * time.Second
)

// Options configure a Worker. They work at their zero value.
type Options struct {
	// TaskQueue the workflows (and the tools without their own queue) are served on.
	// Optional: default wire.DefaultTaskQueue ("toolgate").
	TaskQueue string
	// MaxConcurrentActivities bounds the tools running at once, per task queue.
	// Optional: default 2000 (tools mostly wait on I/O).
	MaxConcurrentActivities int
	// StopTimeout is how long Stop lets in-flight tools finish before interrupting them (see
	// Stop). Optional: default 30s.
	StopTimeout time.Duration
	// SearchAttributes says whether the namespace has ToolName, ToolCallId and ToolOutcome, so
	// the workflows may upsert them. Optional: default nil, detect in New.
	SearchAttributes *bool
	// FailWorkflowOnPanic fails a workflow whose task panics or hits a non-determinism error,
	// instead of blocking it until a fixed worker is deployed (see the package documentation).
	// Optional: default false (block, the SDK default).
	FailWorkflowOnPanic bool
	// Logger receives toolgate's own worker lines. Optional: default zap.NewNop().
	Logger *zap.Logger
	// Deployment joins every SDK worker of this Worker (the main task queue's and each tool's
	// own queue's) to one Worker Deployment Version, so a new build rolls out by promotion
	// instead of replacing the workers in place (see the package documentation, "Versioned
	// rollout"). Optional: default unversioned (the zero Deployment).
	Deployment Deployment
	// DataConverter is the Temporal client's data converter when it encrypts payloads (a payload
	// codec): the workflows read a call's principal memo with it. Optional: default plain JSON
	// only (an encrypted principal then fails its call as INVALID_TOOL_CALL).
	DataConverter converter.DataConverter
	// Policy is the policy set the worker's calls are decided by (package policy; docs/policy.md):
	// after validation and before approval or scheduling, each call is allowed, denied
	// (POLICY_DENIED, nothing runs) or held for approval, and the decision is recorded in its
	// history. Swap the set in the Source (or let Source.Watch reload its file) to change it for
	// the calls decided from then on. Optional: default none (every call allowed, nothing
	// recorded).
	Policy *policy.Source
	// Secrets resolves the secrets the tools declare (toolcore.Options.Secrets) when an attempt
	// starts (package secrets: environment, files; or a secret manager of your own). The values
	// stay in this process: the attempt redacts them from everything it reports. Optional:
	// default none (a tool that declares a secret fails its calls, naming the secret).
	Secrets toolcore.SecretSource
	// Credentials obtains the calling principal's OAuth access tokens for the tools that declare
	// toolcore.Options.Credentials (package credentials). Optional: default none (such a tool
	// fails its calls, naming the provider).
	Credentials toolcore.CredentialSource
	// Callbacks mints the callback URLs tools hand to external systems (toolcore.Callback): a
	// *callbacks.Endpoint, served by this process or by any other that reads the same signing
	// key. Optional: default none (a tool's Callback fails its call, saying no callbacks are
	// served).
	Callbacks activities.CallbackURLs
	// Parts keeps the images, audio, resources and long texts of Rich outputs out of history
	// (package blobs: a FileStore or an SQLStore, wrapped in blobs.Sealed when payloads are
	// encrypted); results record claims of them. The worker sweeps it from Start to Stop, every
	// hour, of parts older than PartsRetention plus blobs.SweepGrace. Optional: default none (a
	// Rich output with parts to store fails its call, naming the missing store).
	Parts blobs.Store
	// PartsRetention is how long parts are kept. Optional: default the namespace's retention,
	// read at Start.
	PartsRetention time.Duration
	// TracerProvider makes the worker's OpenTelemetry spans (docs/traces.md): sdk-go's tracing
	// interceptor (RunWorkflow, StartActivity, RunActivity, HandleUpdate, continuing the trace a
	// client put in the Temporal headers; none while replaying), an "execute_tool <tool>" span
	// per attempt and "invoke_agent <type>" for an agent workflow. Do not also put sdk-go's
	// tracing interceptor on the Temporal client's Interceptors: its spans would be made twice
	// (client.TracingInterceptor traces the client side only). Optional: default nil,
	// OpenTelemetry's global provider (a no-op until the program sets one).
	TracerProvider trace.TracerProvider
	// TraceContent adds each call's arguments and result to its execute_tool span
	// (activities.Tracing.Content: redacted, bounded). Optional: default false.
	TraceContent bool
}

// Worker serves one registry snapshot on one main task queue and the tools' own queues.
type Worker struct {
	client      client.Client
	toolSet     VersionToolSet // of the snapshot; its Fingerprint is ToolSetFingerprint's
	deployment  Deployment
	namespace   string
	queues      []string // main queue first
	limits      map[string]queueLimits
	workers     []sdkworker.Worker
	attrs       bool
	pushed      bool // the namespace pushes activity cancellation (see CancellationPushed)
	logger      *zap.Logger
	fatal       chan error
	drain       *activities.Drain
	stopTimeout time.Duration
	sweeper     *partsSweeper                   // parts.go
	tracing     []interceptor.WorkerInterceptor // tracing.go

	startMu sync.Mutex
	started bool

	polling  atomic.Bool // set when every SDK worker has started
	stopping atomic.Bool // set when Stop begins: the worker drains and is no longer ready
	stopOnce sync.Once
}

// New builds the workers for a snapshot of reg on namespace ("" is "default"), which must be
// c's namespace. It asks the namespace for the search attributes unless opts says; that call is
// bounded by 10 s.
func New(c client.Client, namespace string, reg *toolcore.Registry, opts Options) (*Worker, error) {
	if c == nil {
		return nil, errors.New("new worker: nil Temporal client")
	}
	if reg == nil {
		return nil, errors.New("new worker: nil registry")
	}
	if namespace == "" {
		namespace = DefaultNamespace
	}
	opts = opts.withDefaults()
	if err := opts.Deployment.check(); err != nil {
		return nil, fmt.Errorf("new worker: %w", err)
	}
	snapshot := reg.Snapshot()

	attrs := false
	if opts.SearchAttributes != nil {
		attrs = *opts.SearchAttributes
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), detectTimeout)
		defer cancel()
		has, err := hasSearchAttributes(ctx, c, namespace)
		if err != nil {
			return nil, fmt.Errorf("detect search attributes of namespace %q (set Options.SearchAttributes to skip): %w", namespace, err)
		}
		attrs = has
	}

	ctx, cancel := context.WithTimeout(context.Background(), detectTimeout)
	headersOK := escapesHeaders(ctx, c)
	cancel()

	ctx, cancel = context.WithTimeout(context.Background(), detectTimeout)
	pushed, pushedErr := cancellationPushed(ctx, c, namespace)
	cancel()

	ctx, cancel = context.WithTimeout(context.Background(), detectTimeout)
	mainLimit, mainLimitErr := mainQueueLimit(ctx, c, namespace, opts.TaskQueue)
	cancel()

	w := &Worker{
		client:      c,
		toolSet:     ToolSetOf(snapshot),
		deployment:  opts.Deployment,
		namespace:   namespace,
		queues:      taskQueues(snapshot, opts.TaskQueue),
		limits:      limitsByQueue(snapshot, opts.TaskQueue),
		attrs:       attrs,
		pushed:      pushed,
		logger:      opts.Logger.With(zap.String("namespace", namespace)),
		fatal:       make(chan error, 1),
		drain:       activities.NewDrain(),
		stopTimeout: opts.StopTimeout,
	}
	w.sweeper = &partsSweeper{store: opts.Parts, retention: opts.PartsRetention, client: c, namespace: namespace, logger: w.logger}
	attempts := activities.NewAttempts()
	acts := &activities.Activities{Registry: snapshot, Attempts: attempts, Heartbeats: c, CancellationPushed: pushed, Drain: w.drain,
		Secrets: opts.Secrets, Credentials: opts.Credentials, Callbacks: opts.Callbacks, Parts: opts.Parts}
	var err error
	if w.tracing, err = tracingInterceptors(opts.TracerProvider, acts, opts.TraceContent); err != nil {
		return nil, fmt.Errorf("new worker: %w", err)
	}
	for i, queue := range w.queues {
		so := w.sdkOptions(opts, i > 0)
		if l, ok := w.limits[queue]; ok {
			// The engine's flow control (docs/flow-control.md): the server dispatches at most
			// rate tasks a second from the queue to all its workers, and this worker takes at
			// most maxConcurrent at once; the rest wait on the server, holding no slot.
			so.TaskQueueActivitiesPerSecond = l.rate
			if l.maxConcurrent > 0 {
				so.MaxConcurrentActivityExecutionSize = l.maxConcurrent
			}
		}
		if i == 0 && mainLimit != "" {
			// The main queue's limit holds only for activities the server dispatches
			// (mainQueueLimit): no ExecuteTool activity of this worker's calls bypasses it.
			so.DisableEagerActivities = true
		}
		sw := sdkworker.New(c, queue, so)
		if i == 0 {
			wfs := &workflows.Workflows{Registry: snapshot, SearchAttributes: attrs, TaskQueue: queue, Attempts: attempts, DataConverter: opts.DataConverter, Policy: opts.Policy}
			wfs.Register(sw)
		}
		acts.Register(sw)
		w.workers = append(w.workers, sw)
	}
	if !headersOK {
		w.logger.Warn("this Temporal client cannot answer a call whose workflow ID is not printable ASCII (started by a client that ignored the ID escaping): such a call would stay running; build the client with worker.DialOption() in ConnectionOptions.DialOptions")
	}
	if !attrs {
		w.logger.Warn("namespace lacks the toolgate search attributes; workflows will not upsert them (run `toolgate worker --setup`)")
	}
	if !pushed {
		w.logger.Warn(notPushedMessage(pushedErr))
	}
	switch {
	case mainLimit != "":
		w.logger.Warn("eager activity dispatch is off: the task queue carries a limit set through the API, which holds only for activities the server dispatches (docs/flow-control.md)",
			zap.String("taskQueue", opts.TaskQueue), zap.String("limit", mainLimit))
	case mainLimitErr != nil:
		w.logger.Warn("cannot read the task queue's limits; eager activity dispatch stays on, so a limit set on it through the API would not hold", zap.Error(mainLimitErr))
	}
	w.logger.Info("worker built", zap.Strings("taskQueues", w.queues), zap.Strings("tools", snapshot.Names()),
		zap.String("toolSet", w.toolSet.Fingerprint), zap.String("deploymentVersion", w.deployment.String()),
		zap.Bool("searchAttributes", attrs), zap.Bool("cancellationPushed", pushed))
	return w, nil
}

func (o Options) withDefaults() Options {
	if o.TaskQueue == "" {
		o.TaskQueue = wire.DefaultTaskQueue
	}
	if o.MaxConcurrentActivities <= 0 {
		o.MaxConcurrentActivities = DefaultMaxConcurrentActivities
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o
}

func (w *Worker) sdkOptions(opts Options, activitiesOnly bool) sdkworker.Options {
	policy := sdkworker.BlockWorkflow
	if opts.FailWorkflowOnPanic {
		policy = sdkworker.FailWorkflow
	}
	return sdkworker.Options{
		MaxConcurrentActivityExecutionSize: opts.MaxConcurrentActivities,
		// The activity's heartbeat loop decides when to beat (see package activities); the SDK's
		// default batching (0.8 x HeartbeatTimeout) would delay progress and cancellation by
		// seconds and leave a late heartbeat only a fifth of the timeout to arrive.
		MaxHeartbeatThrottleInterval:     activities.SDKHeartbeatThrottle,
		DefaultHeartbeatThrottleInterval: activities.SDKHeartbeatThrottle,
		// Stop interrupts the attempts left at StopTimeout itself (Drain); the SDK's own cut-off
		// comes later, after their interruptions have been reported.
		WorkerStopTimeout:     opts.StopTimeout + DrainReportTimeout,
		WorkflowPanicPolicy:   policy,
		DisableWorkflowWorker: activitiesOnly,
		Identity:              workerIdentity(w.toolSet.Fingerprint),
		DeploymentOptions:     opts.Deployment.sdkOptions(),
		Interceptors:          w.tracing,
		OnFatalError: func(err error) {
			select {
			case w.fatal <- err:
			default:
			}
		},
	}
}

// taskQueues returns main followed by the sorted distinct other queues the tools name.
func taskQueues(reg *toolcore.Registry, main string) []string {
	var extra []string
	for _, name := range reg.Names() {
		tool, ok := reg.Get(name)
		if !ok {
			continue
		}
		if q := workflows.ActivityTaskQueue(main, name, tool.Options()); q != main && !slices.Contains(extra, q) {
			extra = append(extra, q)
		}
	}
	slices.Sort(extra)
	return append([]string{main}, extra...)
}

// Start starts every worker; on an error it stops those already started. It refuses with an
// ErrToolSetConflict error when a toolgate worker with another tool set polls one of the task
// queues (see the package documentation).
func (w *Worker) Start() error {
	ctx, cancel := context.WithTimeout(context.Background(), detectTimeout)
	warn := func(err error) {
		w.logger.Warn("cannot check the task queue for workers of another tool set", zap.Error(err))
	}
	err := checkToolSets(ctx, w.client, w.queues, w.toolSet.Fingerprint, w.deployment, time.Now(), warn)
	if err == nil && w.deployment.enabled() {
		err = checkVersionToolSet(ctx, w.client, w.deployment, w.toolSet.Fingerprint, warn)
	}
	cancel()
	if err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), detectTimeout)
	if err := reconcileLimits(ctx, w.client, w.namespace, workerIdentity(w.toolSet.Fingerprint), w.limits, w.logger); err != nil {
		w.logger.Warn("cannot set the tools' declared per-fairness-key rate limits; the queue rate limits still hold", zap.Error(err))
	}
	cancel()
	w.startMu.Lock()
	w.started = true
	w.startMu.Unlock()
	for i, sw := range w.workers {
		if err := sw.Start(); err != nil {
			for _, started := range w.workers[:i] {
				started.Stop()
			}
			return fmt.Errorf("start worker on task queue %q: %w", w.queues[i], err)
		}
	}
	w.polling.Store(true)
	w.sweeper.start()
	if w.deployment.enabled() {
		// The version exists once the server has seen a poller of it: a moment after Start.
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		if err := recordToolSet(ctx, w.client, w.deployment, w.toolSet); err != nil {
			w.logger.Warn("cannot record the tool set in the deployment version's metadata; toolgate deploy status and promote will not know it", zap.Error(err))
		}
		cancel()
	}
	w.logger.Info("worker started", zap.Strings("taskQueues", w.queues), zap.String("deploymentVersion", w.deployment.String()))
	return nil
}

// Run starts the workers and blocks until ctx ends (then it stops them and returns nil) or a
// worker hits a fatal error (then it stops them and returns that error).
func (w *Worker) Run(ctx context.Context) error {
	if err := w.Start(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		w.Stop()
		return nil
	case err := <-w.fatal:
		w.Stop()
		return fmt.Errorf("run worker: %w", err)
	}
}

// Stop drains the worker and returns when it has stopped. It is safe to call more than once and
// before Start. The sequence:
//
//  1. Every SDK worker stops polling at once: no new call or attempt starts here.
//  2. Running tools get Options.StopTimeout to finish; their results are reported as usual.
//  3. Then every attempt still running is interrupted (its context canceled), and its
//     interruption reported to the server while the worker still answers: a ReadOnly or
//     Idempotent call runs again on another worker at once, and the interrupted attempt does
//     not count against its MaxAttempts (wire.ErrTypeDrained); an Unsafe call keeps its
//     at-most-once rule (outcome unknown, or reconciled). Tools get DrainReportTimeout to
//     return.
func (w *Worker) Stop() {
	w.stopOnce.Do(func() {
		w.stopping.Store(true)
		w.logger.Info("worker stopping: polling stopped, running tools get the stop timeout to finish",
			zap.Int("running", w.drain.Running()), zap.Duration("stopTimeout", w.stopTimeout))
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			var wg sync.WaitGroup
			for _, sw := range w.workers {
				wg.Go(sw.Stop)
			}
			wg.Wait()
		}()
		timer := time.NewTimer(w.stopTimeout)
		defer timer.Stop()
		select {
		case <-stopped:
		case <-timer.C:
			if n := w.drain.Interrupt(); n > 0 {
				w.logger.Warn("stop timeout passed: interrupting the attempts still running; each is reported to the server and retried elsewhere (unsafe ones end outcome-unknown or are reconciled)",
					zap.Int("interrupted", n))
			}
			<-stopped
		}
		w.sweeper.halt()
		w.logger.Info("worker stopped", zap.Strings("taskQueues", w.queues))
	})
}

// SearchAttributes reports whether the workflows upsert ToolName, ToolCallId and ToolOutcome.
func (w *Worker) SearchAttributes() bool { return w.attrs }

// CancellationPushed reports whether the namespace said, when New asked, that it pushes an
// activity's cancellation to its workers (worker commands; docs/operations.md). Then a held call
// that reports nothing heartbeats at its tool's IdleHeartbeat (30 s by default), for liveness
// only; otherwise every half of its HeartbeatTimeout, at most every 5 s, to hear a cancellation.
func (w *Worker) CancellationPushed() bool { return w.pushed }

// TaskQueues returns the queues served: the main queue first, then the tools' own queues.
func (w *Worker) TaskQueues() []string { return slices.Clone(w.queues) }

// RegisterWorkflow registers a workflow of the user's own (an agent workflow) on the worker of
// the main task queue, beside toolgate's workflows, so *Worker satisfies the SDK's
// worker.WorkflowRegistry (client.RegisterAwaitToolCall works on it). Call it before Start: it
// panics after Start, and on what the SDK refuses (a name already registered). On a versioned
// worker the workflow gets Options.Deployment.DefaultVersioningBehavior (AutoUpgrade unless
// set); RegisterWorkflowWithOptions with a VersioningBehavior pins it instead.
func (w *Worker) RegisterWorkflow(wf any) {
	w.mainBeforeStart("RegisterWorkflow").RegisterWorkflow(wf)
}

// RegisterWorkflowWithOptions is RegisterWorkflow with the SDK's options (a name of its own).
func (w *Worker) RegisterWorkflowWithOptions(wf any, opts workflow.RegisterOptions) {
	w.mainBeforeStart("RegisterWorkflowWithOptions").RegisterWorkflowWithOptions(wf, opts)
}

// RegisterDynamicWorkflow registers the SDK's dynamic workflow on the main task queue's worker.
func (w *Worker) RegisterDynamicWorkflow(wf any, opts workflow.DynamicRegisterOptions) {
	w.mainBeforeStart("RegisterDynamicWorkflow").RegisterDynamicWorkflow(wf, opts)
}

// RegisterActivity registers an activity of the user's own on the worker of the main task queue
// (its own activities, beside the tools), so *Worker satisfies the SDK's
// worker.ActivityRegistry. Call it before Start: it panics after Start.
func (w *Worker) RegisterActivity(a any) {
	w.mainBeforeStart("RegisterActivity").RegisterActivity(a)
}

// RegisterActivityWithOptions is RegisterActivity with the SDK's options.
func (w *Worker) RegisterActivityWithOptions(a any, opts activity.RegisterOptions) {
	w.mainBeforeStart("RegisterActivityWithOptions").RegisterActivityWithOptions(a, opts)
}

// RegisterDynamicActivity registers the SDK's dynamic activity on the main task queue's worker.
func (w *Worker) RegisterDynamicActivity(a any, opts activity.DynamicRegisterOptions) {
	w.mainBeforeStart("RegisterDynamicActivity").RegisterDynamicActivity(a, opts)
}

// mainBeforeStart returns the main task queue's SDK worker, or panics once Start has run: the
// SDK polls with what was registered when it started.
func (w *Worker) mainBeforeStart(method string) sdkworker.Worker {
	w.startMu.Lock()
	defer w.startMu.Unlock()
	if w.started {
		panic(fmt.Sprintf("toolgate worker.%s on task queue %q after Start: register workflows and activities before Start", method, w.queues[0]))
	}
	return w.workers[0]
}

var (
	_ sdkworker.WorkflowRegistry = (*Worker)(nil)
	_ sdkworker.ActivityRegistry = (*Worker)(nil)
)
