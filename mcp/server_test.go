package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
)

// connectInMemory connects a Go SDK client to s over in-memory transports.
func connectInMemory(t *testing.T, s *sdk.Server) *sdk.ClientSession {
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	return connectClient(t, clientT)
}

func connectClient(t *testing.T, transport sdk.Transport) *sdk.ClientSession {
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), transport, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func text(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok, "content is %T", res.Content[0])
	return tc.Text
}

func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var wireErr *jsonrpc.Error
	require.True(t, errors.As(err, &wireErr), "error %v is not a JSON-RPC error", err)
	return wireErr
}

func TestListToolsAnnotations(t *testing.T) {
	f := newFixture(t)
	cs := connectInMemory(t, f.server())
	res, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	byName := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	require.Len(t, byName, len(f.infos))
	echo := byName["echo"]
	assert.True(t, echo.Annotations.ReadOnlyHint)
	assert.True(t, echo.Annotations.IdempotentHint)
	assert.False(t, *echo.Annotations.DestructiveHint)
	count := byName["count"] // Unsafe
	assert.False(t, count.Annotations.ReadOnlyHint)
	assert.False(t, count.Annotations.IdempotentHint)
	assert.True(t, *count.Annotations.DestructiveHint)
	schema, err := json.Marshal(echo.InputSchema)
	require.NoError(t, err)
	assert.Contains(t, string(schema), `"text"`)
}

func TestCallResultsAndErrors(t *testing.T) {
	f := newFixture(t)
	cs := connectInMemory(t, f.server())
	ctx := t.Context()

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.JSONEq(t, `{"text":"hi"}`, text(t, res))
	assert.Contains(t, res.Meta[mcp.WorkflowIDMeta], "mcp/toolcall-mcp-")

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": 42}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "TOOL_ARGUMENTS_INVALID")

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "fails", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "TOOL_EXECUTION_FAILED")

	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "fatal", Arguments: map[string]any{}})
	wireErr := rpcError(t, err)
	assert.EqualValues(t, jsonrpc.CodeInternalError, wireErr.Code)
	assert.JSONEq(t, `{"type":"NonRecoverableToolError"}`, string(wireErr.Data))
	assert.Contains(t, wireErr.Message, "ledger out of balance")

	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{},
		Meta: sdk.Meta{mcp.IdempotencyKeyMeta: 7}})
	assert.EqualValues(t, jsonrpc.CodeInvalidParams, rpcError(t, err).Code)
}

func TestIdempotencyKeyAttachesToRecordedRun(t *testing.T) {
	f := newFixture(t)
	cs := connectInMemory(t, f.server())
	key := "key-" + t.Name()
	call := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"key": key},
		Meta: sdk.Meta{mcp.IdempotencyKeyMeta: key}}
	for range 2 {
		res, err := cs.CallTool(t.Context(), call)
		require.NoError(t, err)
		assert.JSONEq(t, `{"runs":1}`, text(t, res))
		assert.Equal(t, "mcp/toolcall-"+key, res.Meta[mcp.WorkflowIDMeta], "the server's own principal scope")
	}
	assert.Equal(t, 1, f.tools.runsOf(key))

	other := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"key": "other"},
		Meta: sdk.Meta{mcp.IdempotencyKeyMeta: key}}
	_, err := cs.CallTool(t.Context(), other)
	assert.EqualValues(t, jsonrpc.CodeInvalidParams, rpcError(t, err).Code)
}

// The MCP server dies mid-call: the workflow goes on, and the client retrying with the same key
// against a new server gets the outcome of the one run.
func TestCallSurvivesServerRestart(t *testing.T) {
	f := newFixture(t)
	key := "key-" + t.Name()
	gate := f.tools.hold(key)
	call := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"key": key},
		Meta: sdk.Meta{mcp.IdempotencyKeyMeta: key}}

	first := httptest.NewServer(mcp.HTTPHandler(f.server(), mcp.HTTPOptions{}))
	// A session (2025-11-25): a dead server's process cannot act, but this in-process handler
	// outlives its connections, and at 2026-07-28 it would take the dropped request for the
	// client's cancellation (TestStatelessRevisionDroppedRequestCancels).
	cs := connectRevision(t, &sdk.StreamableClientTransport{Endpoint: first.URL}, "2025-11-25")
	failed := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.WithoutCancel(t.Context()), call)
		failed <- err
	}()
	require.Equal(t, key, <-f.tools.started)
	first.CloseClientConnections()
	first.Close()
	require.Error(t, <-failed)

	second := httptest.NewServer(mcp.HTTPHandler(f.server(), mcp.HTTPOptions{}))
	t.Cleanup(second.Close)
	cs2 := connectClient(t, &sdk.StreamableClientTransport{Endpoint: second.URL})
	close(gate)
	res, err := cs2.CallTool(t.Context(), call)
	require.NoError(t, err)
	assert.JSONEq(t, `{"runs":1}`, text(t, res))
	assert.Equal(t, 1, f.tools.runsOf(key))
}

func TestProgressAndCancellation(t *testing.T) {
	f := newFixture(t)
	progress := make(chan *sdk.ProgressNotificationParams, 16)
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
	})
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := f.server().Connect(t.Context(), serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := c.Connect(t.Context(), clientT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "wait", Arguments: map[string]any{}}
		params.SetProgressToken("tok-1")
		_, err := cs.CallTool(ctx, params)
		done <- err
	}()
	p := <-progress
	assert.Equal(t, "tok-1", p.ProgressToken)
	assert.Equal(t, "halfway", p.Message)
	assert.EqualValues(t, 1, p.Progress)
	assert.EqualValues(t, 2, p.Total)
	cancel() // the SDK client sends notifications/cancelled
	require.Error(t, <-done)
	<-f.tools.canceled // the tool saw its context canceled
}

func TestHTTPOriginAndHostChecks(t *testing.T) {
	h := mcp.HTTPHandler(sdk.NewServer(&sdk.Implementation{Name: "x", Version: "1"}, nil),
		mcp.HTTPOptions{AllowedOrigins: []string{"https://agent.example"}, AllowedHosts: []string{"mcp.internal"}})
	for _, tc := range []struct {
		host, origin string
		forbidden    bool
	}{
		{host: "127.0.0.1:8931"},
		{host: "localhost:8931", origin: "http://localhost:3000"},
		{host: "[::1]:8931", origin: "https://agent.example"},
		{host: "mcp.internal:8931"},
		{host: "evil.example:8931", forbidden: true},
		{host: "127.0.0.1:8931", origin: "https://evil.example", forbidden: true},
		{host: "127.0.0.1:8931", origin: "null", forbidden: true},
	} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if tc.forbidden {
			assert.Equal(t, http.StatusForbidden, rec.Code, "%+v", tc)
		} else {
			assert.NotEqual(t, http.StatusForbidden, rec.Code, "%+v", tc)
		}
	}
}
