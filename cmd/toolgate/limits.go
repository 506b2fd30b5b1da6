package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/wire"
)

type limitsOptions struct {
	conn       connOptions
	queues     []string
	json       bool
	rate       float64
	perKeyRate float64
	weights    []string
}

// limitsRate is the --json shape of one rate limit.
type limitsRate struct {
	CallsPerSecond float32    `json:"callsPerSecond"`
	Reason         string     `json:"reason,omitempty"`
	SetBy          string     `json:"setBy,omitempty"`
	SetAt          *time.Time `json:"setAt,omitempty"`
}

// limitsJSON is the --json shape of one queue's limits.
type limitsJSON struct {
	TaskQueue string `json:"taskQueue"`
	// Effective is the rate the server enforces now, and Source who set it: "api" (an operator's
	// override or the limits set command), "worker" (a tool's declared RateLimit) or "system".
	Effective       float32            `json:"effectiveCallsPerSecond"`
	Source          string             `json:"source"`
	QueueRate       *limitsRate        `json:"queueRateLimit,omitempty"`
	FairnessKeyRate *limitsRate        `json:"fairnessKeyRateLimit,omitempty"`
	Weights         map[string]float32 `json:"fairnessWeightOverrides,omitempty"`
	Pollers         int                `json:"pollers"`
}

func newLimitsCommand(a *app) *cobra.Command {
	var o limitsOptions
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "Show or override the rate limits and fairness weights of task queues",
		Long: `Show the flow-control limits the server enforces on task queues (docs/flow-control.md):
the effective activity rate and its source (worker: a tool's declared RateLimit, sent by its
workers; api: an override set with "limits set"; system: the server's default), the
per-fairness-key rate limit and the fairness weight overrides, with who set them and why.

A tool with RateLimit, FairnessKeyRateLimit or MaxConcurrent and no TaskQueue runs on the queue
"<task queue>/tool/<name>", e.g. toolgate/tool/http_get.

"limits set" overrides a queue's rate (it wins over the workers' declared rate), its per-key rate
(a worker that starts later leaves it alone) or a key's fairness weight, at run time and without
a restart; the override stands until "limits reset". Needs UpdateTaskQueueConfig permission. It
refuses a queue that workers poll for workflows (the worker's main queue): its tools' activities
are dispatched eagerly, past the server's limits.`,
		Example: `  toolgate limits --queue toolgate/tool/http_get
  toolgate limits set --queue toolgate/tool/http_get --rate 2 --fairness-key-rate 0.5 --weight agent-7=3
  toolgate limits reset --queue toolgate/tool/http_get`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLimitsShow(cmd.Context(), a, o) },
	}
	addConnFlags(cmd, &o.conn)
	fs := cmd.PersistentFlags()
	fs.StringSliceVar(&o.queues, "queue", nil, `task queue (repeatable; default "toolgate")`)
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array, one object per queue")

	set := &cobra.Command{
		Use:   "set",
		Short: "Override a queue's rate limit, per-key rate limit or fairness weights",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runLimitsUpdate(cmd, a, o, false) },
	}
	addConnFlags(set, &o.conn)
	set.Flags().Float64Var(&o.rate, "rate", -1, "activities per second from the queue, across all workers (0 pauses it)")
	set.Flags().Float64Var(&o.perKeyRate, "fairness-key-rate", -1, "activities per second per fairness key, scaled by its weight")
	set.Flags().StringSliceVar(&o.weights, "weight", nil, "fairness weight override KEY=WEIGHT (repeatable)")

	reset := &cobra.Command{
		Use:   "reset",
		Short: "Remove the overrides: the workers' declared rate applies again",
		Long: `Remove a queue's rate override (the rate the workers declare applies again at once), its
per-key rate limit (a worker sets its tool's declared one again when it starts) and, with
--weight KEY, that key's weight override (without --weight, every override).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLimitsUpdate(cmd, a, o, true) },
	}
	addConnFlags(reset, &o.conn)
	reset.Flags().StringSliceVar(&o.weights, "weight", nil, "remove only this key's weight override (repeatable)")
	cmd.AddCommand(set, reset)
	return cmd
}

func (o limitsOptions) queueList() []string {
	if len(o.queues) == 0 {
		return []string{wire.DefaultTaskQueue}
	}
	return o.queues
}

func runLimitsShow(ctx context.Context, a *app, o limitsOptions) error {
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	var out []limitsJSON
	for _, q := range o.queueList() {
		desc, err := describeLimits(ctx, c.WorkflowService(), o.conn.namespace, q)
		if err != nil {
			return err
		}
		out = append(out, limitsOf(q, desc))
	}
	if o.json {
		return writeJSON(a.out, out)
	}
	return writeLimits(a.out, out)
}

// describeLimits is DescribeTaskQueue of queue's activity queue with its config.
func describeLimits(ctx context.Context, svc workflowservice.WorkflowServiceClient, namespace, queue string) (*workflowservice.DescribeTaskQueueResponse, error) {
	desc, err := svc.DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
		ReportConfig:  true,
	})
	if err != nil {
		return nil, fmt.Errorf("describe task queue %q: %w", queue, err)
	}
	return desc, nil
}

func limitsOf(queue string, desc *workflowservice.DescribeTaskQueueResponse) limitsJSON {
	cfg := desc.GetConfig()
	l := limitsJSON{
		TaskQueue:       queue,
		Effective:       desc.GetEffectiveRateLimit().GetRequestsPerSecond(),
		Source:          rateSource(desc.GetEffectiveRateLimit().GetRateLimitSource()),
		QueueRate:       rateOf(cfg.GetQueueRateLimit()),
		FairnessKeyRate: rateOf(cfg.GetFairnessKeysRateLimitDefault()),
		Weights:         cfg.GetFairnessWeightOverrides(),
		Pollers:         len(desc.GetPollers()),
	}
	return l
}

func rateOf(c *taskqueuepb.RateLimitConfig) *limitsRate {
	if c.GetRateLimit() == nil {
		return nil
	}
	r := &limitsRate{CallsPerSecond: c.GetRateLimit().GetRequestsPerSecond(), Reason: c.GetMetadata().GetReason(), SetBy: c.GetMetadata().GetUpdateIdentity()}
	if t := c.GetMetadata().GetUpdateTime(); t != nil {
		at := t.AsTime().UTC()
		r.SetAt = &at
	}
	return r
}

func rateSource(s enumspb.RateLimitSource) string {
	switch s {
	case enumspb.RATE_LIMIT_SOURCE_API:
		return "api"
	case enumspb.RATE_LIMIT_SOURCE_WORKER:
		return "worker"
	case enumspb.RATE_LIMIT_SOURCE_SYSTEM:
		return "system"
	default:
		return "unknown"
	}
}

func rateText(r *limitsRate) string {
	if r == nil {
		return "none"
	}
	s := strconv.FormatFloat(float64(r.CallsPerSecond), 'g', -1, 32) + "/s"
	if r.Reason != "" || r.SetBy != "" {
		s += " (" + safetext.String(r.Reason) + ", by " + safetext.String(r.SetBy) + ")"
	}
	return s
}

func writeLimits(w io.Writer, all []limitsJSON) error {
	for i, l := range all {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		lines := [][2]string{
			{"queue", safetext.String(l.TaskQueue)},
			{"rate", strconv.FormatFloat(float64(l.Effective), 'g', -1, 32) + "/s from " + l.Source},
			{"override", rateText(l.QueueRate)},
			{"per key", rateText(l.FairnessKeyRate)},
			{"pollers", strconv.Itoa(l.Pollers)},
		}
		for _, k := range slices.Sorted(maps.Keys(l.Weights)) {
			lines = append(lines, [2]string{"weight", safetext.String(strconv.Quote(k)) + " " + strconv.FormatFloat(float64(l.Weights[k]), 'g', -1, 32)})
		}
		if err := writeLines(w, lines); err != nil {
			return err
		}
	}
	return nil
}

// limitsUpdate builds the UpdateTaskQueueConfig request of set or reset for queue. current is the
// queue's fairness weight overrides now (DescribeTaskQueue's config): a reset without --weight
// unsets every one of them, since UpdateTaskQueueConfig removes weights only by key.
func (o limitsOptions) limitsUpdate(queue, identity string, reset, rateSet, perKeySet bool, current map[string]float32) (*workflowservice.UpdateTaskQueueConfigRequest, error) {
	req := &workflowservice.UpdateTaskQueueConfigRequest{
		Namespace:     o.conn.namespace,
		Identity:      identity,
		TaskQueue:     queue,
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
	}
	reason := wire.LimitReasonOperator
	if reset {
		if len(o.weights) > 0 {
			req.UnsetFairnessWeightOverrides = o.weights
			return req, nil
		}
		req.UpdateQueueRateLimit = &workflowservice.UpdateTaskQueueConfigRequest_RateLimitUpdate{Reason: "toolgate limits reset"}
		req.UpdateFairnessKeyRateLimitDefault = &workflowservice.UpdateTaskQueueConfigRequest_RateLimitUpdate{Reason: "toolgate limits reset"}
		if len(current) > 0 {
			req.UnsetFairnessWeightOverrides = slices.Sorted(maps.Keys(current))
		}
		return req, nil
	}
	if rateSet {
		if o.rate < 0 {
			return nil, errors.New("--rate must not be negative")
		}
		req.UpdateQueueRateLimit = &workflowservice.UpdateTaskQueueConfigRequest_RateLimitUpdate{
			RateLimit: &taskqueuepb.RateLimit{RequestsPerSecond: float32(o.rate)}, Reason: reason}
	}
	if perKeySet {
		if o.perKeyRate < 0 {
			return nil, errors.New("--fairness-key-rate must not be negative")
		}
		req.UpdateFairnessKeyRateLimitDefault = &workflowservice.UpdateTaskQueueConfigRequest_RateLimitUpdate{
			RateLimit: &taskqueuepb.RateLimit{RequestsPerSecond: float32(o.perKeyRate)}, Reason: reason}
	}
	for _, kw := range o.weights {
		k, w, ok := strings.Cut(kw, "=")
		weight, err := strconv.ParseFloat(w, 32)
		if !ok || k == "" || err != nil || weight <= 0 {
			return nil, fmt.Errorf("--weight %q: want KEY=WEIGHT with a positive weight", kw)
		}
		if req.SetFairnessWeightOverrides == nil {
			req.SetFairnessWeightOverrides = map[string]float32{}
		}
		req.SetFairnessWeightOverrides[k] = float32(weight)
	}
	if req.UpdateQueueRateLimit == nil && req.UpdateFairnessKeyRateLimitDefault == nil && req.SetFairnessWeightOverrides == nil {
		return nil, errors.New("nothing to set: give --rate, --fairness-key-rate or --weight")
	}
	return req, nil
}

func runLimitsUpdate(cmd *cobra.Command, a *app, o limitsOptions, reset bool) error {
	ctx := cmd.Context()
	rateSet, perKeySet := cmd.Flags().Changed("rate"), cmd.Flags().Changed("fairness-key-rate")
	identity := "toolgate limits (" + o.conn.namespace + ")"
	var reqs []*workflowservice.UpdateTaskQueueConfigRequest
	for _, q := range o.queueList() {
		req, err := o.limitsUpdate(q, identity, reset, rateSet, perKeySet, nil)
		if err != nil {
			return badInput(err)
		}
		reqs = append(reqs, req)
	}
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	if !reset {
		for _, req := range reqs {
			pollers, err := workflowPollers(ctx, c.WorkflowService(), o.conn.namespace, req.TaskQueue)
			if err != nil {
				return err
			}
			if err := eagerRefusal(req.TaskQueue, pollers); err != nil {
				return badInput(err)
			}
		}
	}
	for _, req := range reqs {
		if reset && len(o.weights) == 0 {
			// Every weight override goes too: the request names them, so read the queue's now. One
			// set between this read and the update stays (reset again to drop it).
			desc, err := describeLimits(ctx, c.WorkflowService(), o.conn.namespace, req.TaskQueue)
			if err != nil {
				return err
			}
			if req, err = o.limitsUpdate(req.TaskQueue, identity, reset, rateSet, perKeySet, desc.GetConfig().GetFairnessWeightOverrides()); err != nil {
				return badInput(err)
			}
		}
		if _, err := c.WorkflowService().UpdateTaskQueueConfig(ctx, req); err != nil {
			return fmt.Errorf("update the limits of task queue %q: %w", req.TaskQueue, err)
		}
	}
	o.json = false
	return runLimitsShow(ctx, a, o)
}

// workflowPollers is the number of workers polling queue's workflow tasks now.
func workflowPollers(ctx context.Context, svc workflowservice.WorkflowServiceClient, namespace, queue string) (int, error) {
	desc, err := svc.DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW,
	})
	if err != nil {
		return 0, fmt.Errorf("describe task queue %q: %w", queue, err)
	}
	return len(desc.GetPollers()), nil
}

// eagerRefusal refuses a limit on a queue that workers poll for workflow tasks (pollers of
// them): the ExecuteTool activity of a call on its workflow's own queue is dispatched eagerly, in
// the answer to the workflow task that schedules it, so the server's matching, where the limits
// live, never sees it and the limit would not hold. A worker that starts while its queue carries
// a limit turns eager dispatch off (worker.New), so the limit can be set while none polls.
func eagerRefusal(queue string, pollers int) error {
	if pollers == 0 {
		return nil
	}
	return fmt.Errorf("task queue %s runs the calls' workflows (%d workflow pollers): the ExecuteTool activities of its tools "+
		"are dispatched eagerly to the worker that runs the call, not through the server's matching, so a limit set here would not hold. "+
		"Declare the tool's RateLimit, FairnessKeyRateLimit or MaxConcurrent (it then runs on a queue of its own, %s) and set limits there, "+
		"or stop the queue's workers, set the limit, and start them: a worker that starts on a queue with a limit turns eager dispatch off (docs/flow-control.md)",
		safetext.String(strconv.Quote(queue)), pollers, safetext.String(strconv.Quote(wire.ToolTaskQueue(queue, "<tool>"))))
}
