package worker

import (
	"context"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
)

// Billable actions: what Temporal Cloud bills (https://docs.temporal.io/cloud/actions), as far as
// one process can see them in its own Temporal client's RPCs. MetricBillableActions counts them
// by kind; docs/cost.md says which actions a worker cannot see.
const (
	// MetricBillableActions counts the billable actions this process's client sent or received.
	// Label: kind (one of the Action* values).
	MetricBillableActions = "toolgate_billable_actions_total"
	// MetricLabelKind is its label.
	MetricLabelKind = "kind"

	// ActionWorkflowStart: StartWorkflowExecution, SignalWithStartWorkflowExecution and
	// ExecuteMultiOperation (update-with-start) RPCs this client sent that started a workflow (not
	// those that found it running), and ContinueAsNew commands of this worker's workflow tasks.
	// Starts by other clients are not seen.
	ActionWorkflowStart = "workflow_start"
	// ActionChildWorkflowStart: StartChildWorkflowExecution commands of this worker's workflow
	// tasks (ExecuteToolCall from an agent workflow hosted here).
	ActionChildWorkflowStart = "child_workflow_start"
	// ActionActivityAttempt: activity tasks handed to this worker, by a poll or eagerly in a
	// workflow task's completion: every attempt it runs (retries included).
	ActionActivityAttempt = "activity_attempt"
	// ActionLocalActivities: completed workflow tasks of this worker that recorded at least one
	// local activity (Cloud bills the local activities of one workflow task once).
	ActionLocalActivities = "local_activities"
	// ActionHeartbeat: RecordActivityTaskHeartbeat(ById) RPCs that reached the server (the SDK's
	// throttling already applied: beats it coalesced are not sent, so not billed).
	ActionHeartbeat = "heartbeat"
	// ActionSearchAttributeUpsert: UpsertWorkflowSearchAttributes commands of this worker's
	// workflow tasks, except those that set only TemporalChangeVersion (exempt). Search
	// attributes given at start are free and not counted.
	ActionSearchAttributeUpsert = "search_attribute_upsert"
	// ActionTimer: StartTimer commands of this worker's workflow tasks (SDK timeouts included).
	ActionTimer = "timer"
	// ActionSignal: SignalWorkflowExecution and SignalWithStart RPCs this client sent, and
	// SignalExternalWorkflowExecution commands of this worker's workflow tasks.
	ActionSignal = "signal"
	// ActionUpdate: update requests delivered to this worker's workflows (accepted or rejected).
	ActionUpdate = "update"
	// ActionQuery: queries delivered to this worker's workflows.
	ActionQuery = "query"
	// ActionSideEffect: SideEffect and MutableSideEffect markers this worker's workflows recorded.
	ActionSideEffect = "side_effect"
)

// ActionKinds lists every kind MetricBillableActions counts.
func ActionKinds() []string {
	return []string{ActionWorkflowStart, ActionChildWorkflowStart, ActionActivityAttempt, ActionLocalActivities,
		ActionHeartbeat, ActionSearchAttributeUpsert, ActionTimer, ActionSignal, ActionUpdate, ActionQuery, ActionSideEffect}
}

// changeVersionAttribute is the search attribute workflow.GetVersion upserts; Cloud exempts it.
const changeVersionAttribute = "TemporalChangeVersion"

// Marker names of the Go SDK.
const (
	markerLocalActivity     = "LocalActivity"
	markerSideEffect        = "SideEffect"
	markerMutableSideEffect = "MutableSideEffect"
)

// ActionCounter counts the billable actions a Temporal client's RPCs carry, into a metrics
// handler (MetricBillableActions) and in memory (Counts). Give its DialOption to the client the
// worker uses:
//
//	counter := worker.NewActionCounter(metricsHandler)
//	c, err := client.Dial(client.Options{MetricsHandler: metricsHandler,
//		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{
//			worker.DialOption(), counter.DialOption(),
//		}}})
//
// It counts at the gRPC layer, after the SDK: a workflow task replayed from history sends no
// commands again, so replay counts nothing; an RPC that fails counts nothing. `toolgate worker`
// and `toolgate dev` add it when --metrics-listen is set. Safe for concurrent use.
type ActionCounter struct {
	handler client.MetricsHandler // nil: in memory only

	mu     sync.Mutex
	counts map[string]int64
}

// NewActionCounter returns a counter reporting to handler (nil: Counts only).
func NewActionCounter(handler client.MetricsHandler) *ActionCounter {
	return &ActionCounter{handler: handler, counts: map[string]int64{}}
}

// DialOption returns the gRPC dial option that counts the client's RPCs.
func (c *ActionCounter) DialOption() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(c.Intercept)
}

// Counts returns the actions counted so far by kind (kinds never seen are absent).
func (c *ActionCounter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

func (c *ActionCounter) add(kind string, n int64) {
	if n <= 0 {
		return
	}
	c.mu.Lock()
	c.counts[kind] += n
	c.mu.Unlock()
	if c.handler != nil {
		c.handler.WithTags(map[string]string{MetricLabelKind: kind}).Counter(MetricBillableActions).Inc(n)
	}
}

// Intercept is the gRPC unary client interceptor of DialOption.
func (c *ActionCounter) Intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil {
		c.count(req, reply)
	}
	return err
}

// count adds the actions of one successful RPC.
func (c *ActionCounter) count(req, reply any) {
	switch r := req.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		// A start that found the workflow running (conflict policy use-existing) starts nothing.
		if resp, ok := reply.(*workflowservice.StartWorkflowExecutionResponse); !ok || resp.GetStarted() {
			c.add(ActionWorkflowStart, 1)
		}
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		if resp, ok := reply.(*workflowservice.SignalWithStartWorkflowExecutionResponse); !ok || resp.GetStarted() {
			c.add(ActionWorkflowStart, 1)
		}
		c.add(ActionSignal, 1)
	case *workflowservice.ExecuteMultiOperationRequest:
		for _, op := range r.GetOperations() {
			if op.GetStartWorkflow() != nil {
				c.add(ActionWorkflowStart, 1)
			}
		}
	case *workflowservice.SignalWorkflowExecutionRequest:
		c.add(ActionSignal, 1)
	case *workflowservice.RecordActivityTaskHeartbeatRequest, *workflowservice.RecordActivityTaskHeartbeatByIdRequest:
		c.add(ActionHeartbeat, 1)
	case *workflowservice.PollActivityTaskQueueRequest:
		if len(reply.(*workflowservice.PollActivityTaskQueueResponse).GetTaskToken()) > 0 {
			c.add(ActionActivityAttempt, 1)
		}
	case *workflowservice.PollWorkflowTaskQueueRequest:
		c.countDelivered(reply.(*workflowservice.PollWorkflowTaskQueueResponse))
	case *workflowservice.RespondWorkflowTaskCompletedRequest:
		c.countCommands(r)
		if resp, ok := reply.(*workflowservice.RespondWorkflowTaskCompletedResponse); ok {
			c.add(ActionActivityAttempt, int64(len(resp.GetActivityTasks()))) // eager activities
			if t := resp.GetWorkflowTask(); t != nil {
				c.countDelivered(t)
			}
		}
	}
}

// countDelivered counts the queries and update requests a workflow task hands to the worker.
func (c *ActionCounter) countDelivered(t *workflowservice.PollWorkflowTaskQueueResponse) {
	if t.GetQuery() != nil {
		c.add(ActionQuery, 1)
	}
	c.add(ActionQuery, int64(len(t.GetQueries())))
	var updates int64
	for _, m := range t.GetMessages() {
		if m.GetBody().MessageIs(&updatepb.Request{}) {
			updates++
		}
	}
	c.add(ActionUpdate, updates)
}

// countCommands counts the billable commands of a completed workflow task.
func (c *ActionCounter) countCommands(r *workflowservice.RespondWorkflowTaskCompletedRequest) {
	localActivities := false
	for _, cmd := range r.GetCommands() {
		switch cmd.GetCommandType() {
		case enumspb.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION:
			c.add(ActionChildWorkflowStart, 1)
		case enumspb.COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION:
			c.add(ActionWorkflowStart, 1)
		case enumspb.COMMAND_TYPE_START_TIMER:
			c.add(ActionTimer, 1)
		case enumspb.COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION:
			c.add(ActionSignal, 1)
		case enumspb.COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			if billableUpsert(cmd.GetUpsertWorkflowSearchAttributesCommandAttributes().GetSearchAttributes()) {
				c.add(ActionSearchAttributeUpsert, 1)
			}
		case enumspb.COMMAND_TYPE_RECORD_MARKER:
			switch cmd.GetRecordMarkerCommandAttributes().GetMarkerName() {
			case markerLocalActivity:
				localActivities = true
			case markerSideEffect, markerMutableSideEffect:
				c.add(ActionSideEffect, 1)
			}
		}
	}
	if localActivities {
		c.add(ActionLocalActivities, 1)
	}
}

// billableUpsert reports whether an upsert of attrs is billed: all but TemporalChangeVersion alone.
func billableUpsert(attrs *commonpb.SearchAttributes) bool {
	for name := range attrs.GetIndexedFields() {
		if name != changeVersionAttribute {
			return true
		}
	}
	return len(attrs.GetIndexedFields()) == 0
}
