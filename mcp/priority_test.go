package mcp_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
)

// TestPriorityMetaReachesTheCall: a tools/call whose _meta carries io.toolgate/priority,
// fairnessKey and fairnessWeight, through the real MCP server against the dev server, starts a
// ToolCallWorkflow with that priority (DescribeWorkflowExecution, the started event and the
// ExecuteTool activity's scheduled event); a malformed value is invalid params and starts
// nothing. (Issue 24; contract section 15 rule 1.)
func TestPriorityMetaReachesTheCall(t *testing.T) {
	f := newFixture(t)
	cs := connectInMemory(t, f.server())
	ctx := t.Context()
	key := "key-" + t.Name()

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"},
		Meta: sdk.Meta{mcp.IdempotencyKeyMeta: key, mcp.PriorityMeta: 2, mcp.FairnessKeyMeta: "tenant-7", mcp.FairnessWeightMeta: 3}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	workflowID, _ := res.Meta[mcp.WorkflowIDMeta].(string)
	require.NotEmpty(t, workflowID)

	want := &commonpb.Priority{PriorityKey: 2, FairnessKey: "tenant-7", FairnessWeight: 3}
	c := devtest.Client(t)
	desc, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	require.NoError(t, err)
	assert.True(t, proto.Equal(want, desc.GetWorkflowExecutionInfo().GetPriority()), "described: %v", desc.GetWorkflowExecutionInfo().GetPriority())
	var started *commonpb.Priority
	var scheduled []*commonpb.Priority
	iter := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			started = a.GetPriority()
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled = append(scheduled, a.GetPriority())
		}
	}
	assert.True(t, proto.Equal(want, started), "started event: %v", started)
	require.Len(t, scheduled, 1)
	assert.True(t, proto.Equal(want, scheduled[0]), "ExecuteTool scheduled event: %v", scheduled[0])

	bad := key + "-bad"
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"},
		Meta: sdk.Meta{mcp.IdempotencyKeyMeta: bad, mcp.PriorityMeta: 9}})
	assert.EqualValues(t, jsonrpc.CodeInvalidParams, rpcError(t, err).Code)
	assert.Equal(t, "mcp/toolcall-"+key, workflowID, "the server's own principal scope")
	_, err = c.DescribeWorkflowExecution(ctx, "mcp/toolcall-"+bad, "")
	assert.Error(t, err, "nothing started")
}
