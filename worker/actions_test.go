package worker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commandpb "go.temporal.io/api/command/v1"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	protocolpb "go.temporal.io/api/protocol/v1"
	querypb "go.temporal.io/api/query/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/toolgate/toolgate/worker"
)

func TestActionCounterCountsBillableRPCs(t *testing.T) {
	c := worker.NewActionCounter(nil)
	rpc := func(req, reply any, fail error) {
		err := c.Intercept(context.Background(), "", req, reply, nil,
			func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return fail })
		require.Equal(t, fail, err)
	}
	attrs := func(names ...string) *commandpb.Command {
		fields := map[string]*commonpb.Payload{}
		for _, n := range names {
			fields[n] = &commonpb.Payload{}
		}
		return &commandpb.Command{CommandType: enumspb.COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
			Attributes: &commandpb.Command_UpsertWorkflowSearchAttributesCommandAttributes{
				UpsertWorkflowSearchAttributesCommandAttributes: &commandpb.UpsertWorkflowSearchAttributesCommandAttributes{
					SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields}}}}
	}
	marker := func(name string) *commandpb.Command {
		return &commandpb.Command{CommandType: enumspb.COMMAND_TYPE_RECORD_MARKER,
			Attributes: &commandpb.Command_RecordMarkerCommandAttributes{
				RecordMarkerCommandAttributes: &commandpb.RecordMarkerCommandAttributes{MarkerName: name}}}
	}
	update, err := anypb.New(&updatepb.Request{})
	require.NoError(t, err)

	rpc(&workflowservice.StartWorkflowExecutionRequest{}, &workflowservice.StartWorkflowExecutionResponse{Started: true}, nil)
	rpc(&workflowservice.StartWorkflowExecutionRequest{}, &workflowservice.StartWorkflowExecutionResponse{}, nil) // found running
	rpc(&workflowservice.StartWorkflowExecutionRequest{}, nil, assert.AnError)                                    // failed: not billed
	rpc(&workflowservice.PollActivityTaskQueueRequest{}, &workflowservice.PollActivityTaskQueueResponse{}, nil)   // empty poll
	rpc(&workflowservice.PollActivityTaskQueueRequest{}, &workflowservice.PollActivityTaskQueueResponse{TaskToken: []byte("t")}, nil)
	rpc(&workflowservice.RecordActivityTaskHeartbeatRequest{}, &workflowservice.RecordActivityTaskHeartbeatResponse{}, nil)
	rpc(&workflowservice.RecordActivityTaskHeartbeatRequest{}, &workflowservice.RecordActivityTaskHeartbeatResponse{}, nil)
	rpc(&workflowservice.PollWorkflowTaskQueueRequest{}, &workflowservice.PollWorkflowTaskQueueResponse{
		Queries:  map[string]*querypb.WorkflowQuery{"q": {}},
		Messages: []*protocolpb.Message{{Body: update}},
	}, nil)
	rpc(&workflowservice.RespondWorkflowTaskCompletedRequest{Commands: []*commandpb.Command{
		{CommandType: enumspb.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK}, // billed when an attempt starts
		{CommandType: enumspb.COMMAND_TYPE_START_TIMER},
		{CommandType: enumspb.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION},
		attrs("ToolOutcome", "ToolName"),
		attrs("TemporalChangeVersion"),                   // exempt
		marker("LocalActivity"), marker("LocalActivity"), // one action for the task
		marker("Version"), // not billed
	}}, &workflowservice.RespondWorkflowTaskCompletedResponse{
		ActivityTasks: []*workflowservice.PollActivityTaskQueueResponse{{TaskToken: []byte("eager")}},
	}, nil)

	assert.Equal(t, map[string]int64{
		worker.ActionWorkflowStart:         1,
		worker.ActionActivityAttempt:       2,
		worker.ActionHeartbeat:             2,
		worker.ActionUpdate:                1,
		worker.ActionQuery:                 1,
		worker.ActionTimer:                 1,
		worker.ActionChildWorkflowStart:    1,
		worker.ActionSearchAttributeUpsert: 1,
		worker.ActionLocalActivities:       1,
	}, c.Counts())
}
