package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/wire"
)

// connectRevision connects a go-sdk client speaking revision (empty: the SDK's default,
// 2025-11-25 with a session) over transport.
func connectRevision(t *testing.T, transport sdk.Transport, revision string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "revision-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), transport, &sdk.ClientSessionOptions{ProtocolVersion: revision})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// listAndCall lists cs's tools and calls echo, as every revision must serve them.
func listAndCall(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	names := make([]string, 0, len(tools.Tools))
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.Contains(t, names, "echo")
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", text(t, res))
	assert.JSONEq(t, `{"text":"hi"}`, text(t, res))
}

// post2026 POSTs one 2026-07-28 request (per-request _meta, Mcp-Method and Mcp-Name headers) to
// url with extra headers, and returns the response and its body.
func post2026(t *testing.T, url, method string, params map[string]any, header http.Header) (*http.Response, string) {
	t.Helper()
	resp, body, err := post2026Context(t.Context(), url, method, params, header)
	require.NoError(t, err)
	return resp, body
}

// post2026Context is post2026 within ctx, returning the error of a request that did not complete.
// A "_meta" in params adds to the revision's.
func post2026Context(ctx context.Context, url, method string, params map[string]any, header http.Header) (*http.Response, string, error) {
	if params == nil {
		params = map[string]any{}
	}
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.StatelessRevision,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
	}
	if extra, ok := params["_meta"].(map[string]any); ok {
		maps.Copy(meta, extra)
	}
	params["_meta"] = meta
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.StatelessRevision)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp, string(out), err
}

// One endpoint serves both revisions, negotiated per request (contract 10.29): a go-sdk client of
// 2026-07-28 (server/discover, per-request _meta, no session) and one of 2025-11-25 (initialize,
// a session) list and call against the same HTTPHandler; a 2026-07-28 request carrying a live
// session's Mcp-Session-Id is served without it and leaves the session alone; GET of 2026-07-28
// is 405 (no standalone stream without sessions).
func TestHTTPServesBothRevisions(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(mcp.HTTPHandler(f.server(), mcp.HTTPOptions{}))
	t.Cleanup(srv.Close)

	now := connectRevision(t, &sdk.StreamableClientTransport{Endpoint: srv.URL}, mcp.StatelessRevision)
	assert.Equal(t, mcp.StatelessRevision, now.InitializeResult().ProtocolVersion)
	listAndCall(t, now)
	assert.Empty(t, now.ID(), "a 2026-07-28 client has no session")

	before := connectRevision(t, &sdk.StreamableClientTransport{Endpoint: srv.URL}, "2025-11-25")
	assert.Equal(t, "2025-11-25", before.InitializeResult().ProtocolVersion)
	require.NotEmpty(t, before.ID(), "a 2025-11-25 client has a session")
	listAndCall(t, before)

	resp, body := post2026(t, srv.URL, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "stateless"}},
		http.Header{"Mcp-Session-Id": {before.ID()}})
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `stateless`)
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"), "a 2026-07-28 answer names no session")
	listAndCall(t, before) // the session named by the ignored header still works

	get, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Protocol-Version", mcp.StatelessRevision)
	getResp, err := http.DefaultClient.Do(get)
	require.NoError(t, err)
	_ = getResp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, getResp.StatusCode)

	// Capabilities toolgate does not declare are Method not found at both revisions (10.32).
	resp, body = post2026(t, srv.URL, "prompts/list", nil, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, body)
	assert.Contains(t, body, `-32601`)
	_, err = before.ListPrompts(t.Context(), nil)
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, int64(jsonrpc.CodeMethodNotFound), rpcErr.Code)
}

// A 2026-07-28 client that drops its tools/call POST mid-call cancels the call, as that
// revision's cancellation rules say (contract 10.29; issue 34 item 5): the tool sees its context
// canceled, the workflow closes canceled, and a retry with the same idempotency key gets that
// outcome, the tool run once. A request answered before it closed cancels nothing.
func TestStatelessRevisionDroppedRequestCancels(t *testing.T) {
	f := newFixture(t)
	handler := mcp.HTTPHandler(f.server(), mcp.HTTPOptions{})
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	f.tools.hold("dropped")
	call := map[string]any{"name": "count", "arguments": map[string]any{"key": "dropped"},
		"_meta": map[string]any{wire.MCPIdempotencyKeyMeta: "dropped-2026"}}

	ctx, drop := context.WithCancel(t.Context())
	dropped := make(chan error, 1)
	go func() {
		_, _, err := post2026Context(ctx, srv.URL, "tools/call", maps.Clone(call), nil)
		dropped <- err
	}()
	require.Equal(t, "dropped", <-f.tools.started)
	drop()
	require.Error(t, <-dropped)
	_, err := f.tg.ResultByWorkflowID(t.Context(), "mcp/toolcall-dropped-2026")
	require.ErrorIs(t, err, wire.ErrCallCanceled, "the dropped request cancelled its call")

	_, body, err := post2026Context(t.Context(), srv.URL, "tools/call", maps.Clone(call), nil)
	require.NoError(t, err)
	assert.Contains(t, body, `"Canceled"`, "the key attaches to the cancelled run: %s", body)
	assert.Equal(t, 1, f.tools.runsOf("dropped"))

	// A completed request, its connection closed after the answer: the call stays completed.
	done := map[string]any{"name": "count", "arguments": map[string]any{"key": "answered"},
		"_meta": map[string]any{wire.MCPIdempotencyKeyMeta: "answered-2026"}}
	_, body, err = post2026Context(t.Context(), srv.URL, "tools/call", done, nil)
	require.NoError(t, err)
	assert.Contains(t, body, `\"runs\":1`)
	srv.CloseClientConnections()
	res, err := f.tg.ResultByWorkflowID(t.Context(), "mcp/toolcall-answered-2026")
	require.NoError(t, err)
	assert.False(t, res.IsError())
}

// Every protection in front of the 2025-11-25 handler guards 2026-07-28 requests too (contract
// 10.30): Host (403), Origin (403), the body bound (413), the bearer token (401 with a challenge)
// and the cap on live sessions (a stateless request is a session while it runs: 429 here, where
// its principal holds the live session).
func TestHTTPStatelessRevisionProtections(t *testing.T) {
	f := newFixture(t)
	const token = "a-static-token-of-the-test"
	verifier, err := mcp.StaticTokenVerifier(token)
	require.NoError(t, err)
	srv := httptest.NewServer(mcp.HTTPHandler(f.server(), mcp.HTTPOptions{Verifier: verifier, MaxBodyBytes: 4096, MaxSessions: 1}))
	t.Cleanup(srv.Close)
	bearer := http.Header{"Authorization": {"Bearer " + token}}

	resp, body := post2026(t, srv.URL, "tools/list", nil, bearer)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)

	resp, _ = post2026(t, srv.URL, "tools/list", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("WWW-Authenticate"))

	resp, _ = post2026(t, srv.URL, "tools/list", nil, http.Header{"Authorization": {"Bearer " + token}, "Origin": {"https://evil.example"}})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	resp, _ = post2026(t, srv.URL, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": strings.Repeat("x", 8192)}}, bearer)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(`{}`))
	require.NoError(t, err)
	req.Host = "evil.example"
	req.Header.Set("Mcp-Protocol-Version", mcp.StatelessRevision)
	hostResp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = hostResp.Body.Close()
	assert.Equal(t, http.StatusForbidden, hostResp.StatusCode)

	// One live 2025-11-25 session fills MaxSessions: a 2026-07-28 request waits for room too
	// (429: its principal holds the one session there is, principalcaps.go).
	authed := &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearerTransport(token)}}
	connectRevision(t, authed, "2025-11-25")
	resp, _ = post2026(t, srv.URL, "tools/list", nil, bearer)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
}

// A go-sdk client of 2026-07-28 lists and calls through a real `toolgate mcp` over stdio
// (contract 10.31): stdio has no sessions to drop, the revision is negotiated per request.
func TestStdioServesStatelessRevision(t *testing.T) {
	f := newFixture(t)
	args := mcpCommand(t, f)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = childEnv()
	cs := connectRevision(t, &sdk.CommandTransport{Command: cmd}, mcp.StatelessRevision)
	assert.Equal(t, mcp.StatelessRevision, cs.InitializeResult().ProtocolVersion)
	listAndCall(t, cs)
}

// bearerTransport adds a bearer token to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
