package worker

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// queueLimits are the flow-control limits the tools of one task queue declare: the lowest of each
// (a queue shared by several tools is as limited as its most limited tool).
type queueLimits struct {
	rate          float64 // Options.RateLimit: the worker's TaskQueueActivitiesPerSecond
	perKeyRate    float64 // Options.FairnessKeyRateLimit: UpdateTaskQueueConfig at Start
	maxConcurrent int     // Options.MaxConcurrent: the worker's MaxConcurrentActivityExecutionSize
}

func lowest[T int | float64](a, b T) T {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// limitsByQueue returns the declared limits of every queue of reg's tools that declares one.
func limitsByQueue(reg *toolcore.Registry, main string) map[string]queueLimits {
	out := map[string]queueLimits{}
	for _, name := range reg.Names() {
		tool, ok := reg.Get(name)
		if !ok || !tool.Options().FlowControlled() {
			continue
		}
		opts := tool.Options()
		q := workflows.ActivityTaskQueue(main, name, opts)
		l := out[q]
		l.rate = lowest(l.rate, opts.RateLimit)
		l.perKeyRate = lowest(l.perKeyRate, opts.FairnessKeyRateLimit)
		l.maxConcurrent = lowest(l.maxConcurrent, opts.MaxConcurrent)
		out[q] = l
	}
	return out
}

// reconcileLimits sets on the server the per-fairness-key rate limit each queue declares, which
// only UpdateTaskQueueConfig can set (the queue rate travels with every poll, see sdkOptions). It
// leaves alone a limit whose recorded reason is not wire.LimitReasonDeclared: an operator set it
// (`toolgate limits set`), and it stands until `toolgate limits reset`. It logs what it set and
// what it left, and returns the first RPC error (the worker runs on: the queue rate still holds).
func reconcileLimits(ctx context.Context, c client.Client, namespace, identity string, limits map[string]queueLimits, logger *zap.Logger) error {
	var first error
	for queue, l := range limits {
		if l.perKeyRate <= 0 {
			if l.rate > 0 {
				logger.Info("tool queue rate limit (sent with every poll)", zap.String("taskQueue", queue), zap.Float64("callsPerSecond", l.rate))
			}
			continue
		}
		cfg, err := activityQueueConfig(ctx, c, namespace, queue)
		if err != nil {
			first = cmpErr(first, err)
			continue
		}
		current := cfg.GetFairnessKeysRateLimitDefault()
		if current.GetRateLimit() != nil && current.GetMetadata().GetReason() != wire.LimitReasonDeclared {
			logger.Info("per-fairness-key rate limit left as an operator set it",
				zap.String("taskQueue", queue), zap.Float32("callsPerSecond", current.GetRateLimit().GetRequestsPerSecond()),
				zap.Float64("declared", l.perKeyRate), zap.String("setBy", current.GetMetadata().GetUpdateIdentity()),
				zap.String("reason", current.GetMetadata().GetReason()))
			continue
		}
		if current.GetRateLimit() != nil && float64(current.GetRateLimit().GetRequestsPerSecond()) == float64(float32(l.perKeyRate)) {
			logger.Info("per-fairness-key rate limit already set", zap.String("taskQueue", queue), zap.Float64("callsPerSecond", l.perKeyRate))
			continue
		}
		_, err = c.WorkflowService().UpdateTaskQueueConfig(ctx, &workflowservice.UpdateTaskQueueConfigRequest{
			Namespace:     namespace,
			Identity:      identity,
			TaskQueue:     queue,
			TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
			UpdateFairnessKeyRateLimitDefault: &workflowservice.UpdateTaskQueueConfigRequest_RateLimitUpdate{
				RateLimit: &taskqueuepb.RateLimit{RequestsPerSecond: float32(l.perKeyRate)},
				Reason:    wire.LimitReasonDeclared,
			},
		})
		if err != nil {
			first = cmpErr(first, fmt.Errorf("set the per-fairness-key rate limit of task queue %q: %w", queue, err))
			continue
		}
		logger.Info("per-fairness-key rate limit set", zap.String("taskQueue", queue), zap.Float64("callsPerSecond", l.perKeyRate))
	}
	return first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// mainQueueLimit describes the limit the worker's main queue carries, "" for none: a queue rate,
// per-key rate or fairness weight set through the API (`toolgate limits set`, or any other
// client of UpdateTaskQueueConfig). Such a limit holds only for activities the server's matching
// dispatches, and the ExecuteTool activities of calls on their workflow's own queue are
// dispatched eagerly, in the answer to the workflow task: so a worker whose main queue carries
// one turns eager activity dispatch off (New), and the limit holds for every call it runs.
func mainQueueLimit(ctx context.Context, c client.Client, namespace, queue string) (string, error) {
	cfg, err := activityQueueConfig(ctx, c, namespace, queue)
	if err != nil {
		return "", err
	}
	describe := func(what string, l *taskqueuepb.RateLimitConfig) string {
		return fmt.Sprintf("%s %g/s (set by %q: %q)", what, l.GetRateLimit().GetRequestsPerSecond(),
			l.GetMetadata().GetUpdateIdentity(), l.GetMetadata().GetReason())
	}
	switch {
	case cfg.GetQueueRateLimit().GetRateLimit() != nil:
		return describe("queue rate limit", cfg.GetQueueRateLimit()), nil
	case cfg.GetFairnessKeysRateLimitDefault().GetRateLimit() != nil:
		return describe("per-fairness-key rate limit", cfg.GetFairnessKeysRateLimitDefault()), nil
	case len(cfg.GetFairnessWeightOverrides()) > 0:
		return fmt.Sprintf("%d fairness weight overrides", len(cfg.GetFairnessWeightOverrides())), nil
	}
	return "", nil
}

// activityQueueConfig is the flow-control config (rate limits, weight overrides) of queue's
// activity task queue.
func activityQueueConfig(ctx context.Context, c client.Client, namespace, queue string) (*taskqueuepb.TaskQueueConfig, error) {
	desc, err := c.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
		ReportConfig:  true,
	})
	if err != nil {
		return nil, fmt.Errorf("describe task queue %q: %w", queue, err)
	}
	return desc.GetConfig(), nil
}
