package mcp

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Only a progress notification carrying the task under _meta[taskStatusMeta] becomes
// notifications/tasks/status: a tool's message or a client's progress token naming the mark stays
// a progress notification, on a connection and in an SSE event alike.
func TestTaskStatusRewriteOnlyMarkedNotifications(t *testing.T) {
	task := Task{TaskID: "mcp/toolcall-k", Status: "completed", CreatedAt: "c", LastUpdatedAt: "u", PollInterval: TaskPollInterval}
	marked, err := json.Marshal(map[string]any{"_meta": map[string]any{taskStatusMeta: task}, "progressToken": taskStatusMeta, "progress": 0})
	require.NoError(t, err)
	out := asTaskStatus(&jsonrpc.Request{Method: "notifications/progress", Params: marked})
	req, ok := out.(*jsonrpc.Request)
	require.True(t, ok)
	assert.Equal(t, MethodTaskStatus, req.Method)
	assert.False(t, req.IsCall())
	assert.JSONEq(t, `{"taskId":"mcp/toolcall-k","status":"completed","createdAt":"c","lastUpdatedAt":"u","ttl":null,"pollInterval":500}`, string(req.Params))

	for name, params := range map[string]string{
		"token":   `{"progressToken":"io.toolgate/taskStatus","progress":1}`,
		"message": `{"progressToken":1,"progress":1,"message":"io.toolgate/taskStatus"}`,
		"meta":    `{"progressToken":1,"progress":1,"_meta":{"other":"io.toolgate/taskStatus"}}`,
	} {
		msg := &jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(params)}
		assert.Same(t, msg, asTaskStatus(msg), name)
	}
	id, err := jsonrpc.MakeID(float64(1))
	require.NoError(t, err)
	call := &jsonrpc.Request{ID: id, Method: "notifications/progress", Params: marked}
	assert.Same(t, call, asTaskStatus(call), "a call is never rewritten")

	// An SSE event as the SDK writes it: rewritten, with its id kept; others pass untouched.
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/progress", Params: marked})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	w := taskStatusStream(rec, httptest.NewRequest("GET", "/mcp", nil))
	plain := "event: message\nid: 0_1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":" + `{"progressToken":"io.toolgate/taskStatus","progress":1}` + "}\n\n"
	_, err = w.Write([]byte(plain))
	require.NoError(t, err)
	assert.Equal(t, plain, rec.Body.String())
	rec.Body.Reset()
	n, err := w.Write([]byte("event: message\nid: 0_2\ndata: " + string(data) + "\n\n"))
	require.NoError(t, err)
	assert.Equal(t, len("event: message\nid: 0_2\ndata: ")+len(data)+2, n)
	want, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: MethodTaskStatus, Params: req.Params})
	require.NoError(t, err)
	assert.Equal(t, "event: message\nid: 0_2\ndata: "+string(want)+"\n\n", rec.Body.String())

	post := httptest.NewRecorder()
	assert.Same(t, post, taskStatusStream(post, httptest.NewRequest("POST", "/mcp", nil)), "POST answers carry no task status")
}
