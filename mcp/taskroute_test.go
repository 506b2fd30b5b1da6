package mcp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/wire"
)

// A 2026-07-28 tasks/get, tasks/update or tasks/cancel over HTTP must carry Mcp-Name: <taskId>
// (SEP-2663 routing headers): without it, or with another value, it is HTTP 400 with the JSON-RPC
// error -32020 before dispatch; with it (surrounding whitespace ignored) the task method answers
// (-32602 for an unknown task), also as SEP-2243's =?base64?...?= sentinel (an invalid one is 400).
// mcp.TaskRoutingTransport adds the header go-sdk's client omits.
func TestHTTPTaskRoutingHeader(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(mcp.HTTPHandler(f.server(), mcp.HTTPOptions{}))
	t.Cleanup(srv.Close)
	const taskID = "mcp:no-such-task"
	declared := map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
		"extensions": map[string]any{wire.MCPTasksExtension: map[string]any{}}}}
	params := func() map[string]any { return map[string]any{"taskId": taskID, "_meta": declared} }

	for _, method := range []string{wire.MCPMethodTasksGet, wire.MCPMethodTasksUpdate, wire.MCPMethodTasksCancel} {
		t.Run(method, func(t *testing.T) {
			resp, body := post2026(t, srv.URL, method, params(), nil)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "no Mcp-Name: %s", body)
			assert.Equal(t, int64(sdk.CodeHeaderMismatch), rpcErrorCode(t, body), "no Mcp-Name")

			resp, body = post2026(t, srv.URL, method, params(), http.Header{"Mcp-Name": {"mcp:another-task"}})
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "another Mcp-Name: %s", body)
			assert.Equal(t, int64(sdk.CodeHeaderMismatch), rpcErrorCode(t, body), "another Mcp-Name")

			resp, body = post2026(t, srv.URL, method, params(), http.Header{"Mcp-Name": {"=?base64?not base64?="}})
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "an invalid sentinel: %s", body)
			assert.Equal(t, int64(sdk.CodeHeaderMismatch), rpcErrorCode(t, body), "an invalid sentinel")

			_, body = post2026(t, srv.URL, method, params(), http.Header{"Mcp-Name": {"  " + taskID + " "}})
			assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErrorCode(t, body), "the task's Mcp-Name: the method answers")

			sentinel := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(taskID)) + "?="
			_, body = post2026(t, srv.URL, method, params(), http.Header{"Mcp-Name": {sentinel}})
			assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErrorCode(t, body), "the task's Mcp-Name as Base64: the method answers")
		})
	}

	t.Run("TaskRoutingTransport", func(t *testing.T) {
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": wire.MCPMethodTasksGet, "params": map[string]any{
			"taskId": taskID, "_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    mcp.StatelessRevision,
				"io.modelcontextprotocol/clientCapabilities": declared["io.modelcontextprotocol/clientCapabilities"],
				"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
			}}})
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", mcp.StatelessRevision)
		req.Header.Set("Mcp-Method", wire.MCPMethodTasksGet) // what go-sdk sets; no Mcp-Name
		resp, err := (&http.Client{Transport: mcp.TaskRoutingTransport(nil)}).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErrorCode(t, string(out)), "the header was added: %s", out)
	})
}

// rpcErrorCode is the code of the JSON-RPC error answered in body (JSON, or one SSE event).
func rpcErrorCode(t *testing.T, body string) int64 {
	t.Helper()
	if i := strings.Index(body, "data: "); i >= 0 && !strings.HasPrefix(strings.TrimSpace(body), "{") {
		body, _, _ = strings.Cut(body[i+len("data: "):], "\n")
	}
	var msg struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &msg), "%s", body)
	require.NotNil(t, msg.Error, "an error: %s", body)
	return msg.Error.Code
}
