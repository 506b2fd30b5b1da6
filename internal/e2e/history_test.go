package e2e

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/wire"
)

// Client.History reads a call's whole history; HistoryJSON writes what the SDK's history reader
// (and so a WorkflowReplayer) reads back unchanged; a missing call is ErrNotFound.
func TestHistoryOfACall(t *testing.T) {
	var runs atomic.Int32
	e := newEnv(t, addTool(t, &runs))
	ctx := e.ctx()
	_, err := e.client.Execute(ctx, call(t, "call-history-1", "add", `{"left":1,"right":2}`))
	require.NoError(t, err)

	hist, err := e.client.History(ctx, e.client.WorkflowID("call-history-1"), "")
	require.NoError(t, err)
	require.NotEmpty(t, hist.Events)
	assert.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, hist.Events[0].GetEventType())
	assert.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, hist.Events[len(hist.Events)-1].GetEventType())

	data, err := client.HistoryJSON(hist)
	require.NoError(t, err)
	back, err := sdkclient.HistoryFromJSON(bytes.NewReader(data), sdkclient.HistoryJSONOptions{})
	require.NoError(t, err)
	assert.True(t, proto.Equal(hist, back), "HistoryJSON must read back as the same history")

	_, err = e.client.History(ctx, e.client.WorkflowID("call-history-never-started"), "")
	assert.ErrorIs(t, err, wire.ErrNotFound)
}
