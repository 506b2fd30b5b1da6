package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// remoteServer is an MCP server written with the Go SDK, with what its tools observed.
type remoteServer struct {
	mu   sync.Mutex
	runs map[string]int // tool name -> runs
	keys []string       // idempotency keys received in _meta
	// started receives the name of a tool as it starts; canceled once per wait that saw its
	// request canceled.
	started  chan string
	canceled chan struct{}
	// dropFirst names tools whose first tools/call loses its connection before any answer.
	dropFirst map[string]bool
}

func (s *remoteServer) ran(name string, req *sdk.CallToolRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[name]++
	if key, ok := req.Params.Meta[mcp.IdempotencyKeyMeta].(string); ok {
		s.keys = append(s.keys, key)
	}
}

func (s *remoteServer) runsOf(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[name]
}

// newRemoteServer serves the remote tools over streamable HTTP; tools in dropFirst lose the
// connection of their first call (a transport failure) before the server sees it.
func newRemoteServer(t *testing.T, dropFirst ...string) (*remoteServer, string) {
	rs := &remoteServer{runs: map[string]int{}, started: make(chan string, 16), canceled: make(chan struct{}, 16),
		dropFirst: map[string]bool{}}
	for _, name := range dropFirst {
		rs.dropFirst[name] = true
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	object := func(props string) map[string]any {
		var schema map[string]any
		require.NoError(t, json.Unmarshal([]byte(`{"type":"object","properties":{`+props+`},"additionalProperties":false}`), &schema))
		return schema
	}
	s.AddTool(&sdk.Tool{Name: "notes.read", Description: "Read a note.", InputSchema: object(`"id":{"type":"integer","minimum":1}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			rs.ran("notes.read", req)
			var args struct{ ID int }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("note %d", args.ID)}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "put", Description: "Write a value (idempotent).", InputSchema: object(`"v":{"type":"string"}`),
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			rs.ran("put", req)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "{}"}},
				StructuredContent: map[string]any{"stored": true}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "pay", Description: "Pay (no annotations: unsafe).", InputSchema: object(``)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			rs.ran("pay", req)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "paid"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "full", Description: "Fail with isError.", InputSchema: object(``),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			rs.ran("full", req)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "disk full"}}, IsError: true}, nil
		})
	s.AddTool(&sdk.Tool{Name: "wait", Description: "Report progress, then wait until canceled.", InputSchema: object(``),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			rs.ran("wait", req)
			rs.started <- "wait"
			if token := req.Params.GetProgressToken(); token != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 3, Message: "one of three"})
			}
			<-ctx.Done()
			rs.canceled <- struct{}{}
			return nil, ctx.Err()
		})
	s.AddTool(&sdk.Tool{Name: "finish", Description: "Report progress three times, the last just before returning.",
		InputSchema: object(``), Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			rs.ran("finish", req)
			if token := req.Params.GetProgressToken(); token != nil {
				for i := 1; i <= 3; i++ {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: 3, Message: fmt.Sprintf("%d of three", i)})
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "finished"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "stats", Description: "Count (structured output).", InputSchema: object(``),
		OutputSchema: object(`"count":{"type":"integer"}`), Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			rs.ran("stats", req)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"count":3}`}},
				StructuredContent: map[string]any{"count": 3}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "picture", Description: "Text, an image and a binary resource.", InputSchema: object(``),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			rs.ran("picture", req)
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a chart"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG")},
				&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF0")},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///x.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///x.txt", MIMEType: "text/plain", Text: "embedded text"}},
			}}, nil
		})
	var dropped sync.Map
	inner := mcp.HTTPHandler(s, mcp.HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && rs.dropFirst[msg.Params.Name] {
			if _, already := dropped.LoadOrStore(msg.Params.Name, true); !already {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close()
				}
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return rs, srv.URL
}

// mountedWorker mounts the MCP server at target under prefix on a worker of its own and returns
// a toolgate client for it.
func mountedWorker(t *testing.T, prefix string, transport mcp.NewTransport) *tgclient.Client {
	// A short heartbeat timeout sends the progress sooner (heartbeats are throttled to a fraction
	// of it).
	remote, err := mcp.Mount(t.Context(), prefix, transport, mcp.MountOptions{HeartbeatTimeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = remote.Close() })
	reg, err := toolcore.NewRegistry(remote.Tools()...)
	require.NoError(t, err)
	tg, _ := servingWorker(t, reg)
	return tg
}

func execute(t *testing.T, tg *tgclient.Client, id, name, args string) toolcore.Result {
	t.Helper()
	call, err := toolcore.NewToolCall(id, name, []byte(args))
	require.NoError(t, err)
	res, err := tg.Execute(t.Context(), call)
	require.NoError(t, err)
	return res
}

func TestMountSideEffectsFromAnnotations(t *testing.T) {
	for _, tc := range []struct {
		annotations *sdk.ToolAnnotations
		want        toolcore.SideEffect
	}{
		{nil, toolcore.Unsafe},
		{&sdk.ToolAnnotations{}, toolcore.Unsafe},
		{&sdk.ToolAnnotations{ReadOnlyHint: true}, toolcore.ReadOnly},
		{&sdk.ToolAnnotations{IdempotentHint: true}, toolcore.Idempotent},
		{&sdk.ToolAnnotations{DestructiveHint: new(bool)}, toolcore.Unsafe},
	} {
		assert.Equal(t, tc.want, mcp.SideEffectOf(tc.annotations), "%+v", tc.annotations)
	}
}

func TestMountGoServer(t *testing.T) {
	rs, url := newRemoteServer(t)
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	tg := mountedWorker(t, "go", transport)

	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	byName := map[string]toolcore.ToolInfo{}
	for _, info := range infos {
		byName[info.Name] = info
	}
	require.Contains(t, byName, "go_notes_read", "'.' of a remote name becomes '_'")
	assert.Equal(t, "readOnly", byName["go_notes_read"].SideEffect)
	assert.Equal(t, "idempotent", byName["go_put"].SideEffect)
	assert.Equal(t, "unsafe", byName["go_pay"].SideEffect)
	assert.Contains(t, string(byName["go_notes_read"].InputSchema), `"minimum":1`)

	res := execute(t, tg, "note-1", "go_notes_read", `{"id":7}`)
	assert.False(t, res.IsError())
	assert.Equal(t, "note 7", res.Content(), "the remote text as it is")

	res = execute(t, tg, "put-1", "go_put", `{"v":"x"}`)
	assert.Equal(t, `{"stored":true}`, res.Content(), "structuredContent is the content")

	// The remote input schema is checked in workflow code: the remote tool never sees the call.
	res = execute(t, tg, "note-bad", "go_notes_read", `{"id":0}`)
	assert.True(t, res.IsError())
	assert.Contains(t, res.Content(), "TOOL_ARGUMENTS_INVALID")
	assert.Equal(t, 1, rs.runsOf("notes.read"))

	res = execute(t, tg, "full-1", "go_full", `{}`)
	assert.True(t, res.IsError())
	assert.Contains(t, res.Content(), "TOOL_EXECUTION_FAILED")
	assert.Contains(t, res.Content(), "disk full", "the remote error text is for the model")
	assert.Equal(t, 1, rs.runsOf("full"), "an isError result is not retried")

	rs.mu.Lock()
	assert.Contains(t, rs.keys, "toolcall-note-1", "the call's idempotency key reaches the remote server")
	rs.mu.Unlock()
}

// A transport failure is retried for a remote Idempotent tool (after a reconnect) and never for
// an Unsafe one.
func TestMountTransportFailureRetriesOnlySafeTools(t *testing.T) {
	rs, url := newRemoteServer(t, "put", "pay")
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	tg := mountedWorker(t, "go", transport)

	res := execute(t, tg, "put-retried", "go_put", `{"v":"x"}`)
	assert.False(t, res.IsError(), res.Content())
	assert.Equal(t, 1, rs.runsOf("put"))

	res = execute(t, tg, "pay-once", "go_pay", `{}`)
	assert.True(t, res.IsError())
	assert.Contains(t, res.Content(), "TOOL_EXECUTION_FAILED")
	assert.Equal(t, 0, rs.runsOf("pay"), "an Unsafe tool is not retried after a transport failure")

	res = execute(t, tg, "pay-next", "go_pay", `{}`)
	assert.False(t, res.IsError(), "the next call reconnects: %s", res.Content())
}

// Cancelling a toolgate call reaches the remote call; the remote progress reaches the caller.
func TestMountProgressAndCancellation(t *testing.T) {
	rs, url := newRemoteServer(t)
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	tg := mountedWorker(t, "go", transport)

	call, err := toolcore.NewToolCall("wait-1", "go_wait", []byte(`{}`))
	require.NoError(t, err)
	workflowID, err := tg.Start(t.Context(), call)
	require.NoError(t, err)
	require.Equal(t, "wait", <-rs.started)
	var progress toolcore.Progress
	require.Eventually(t, func() bool {
		p, ok, err := tg.ProgressByWorkflowID(t.Context(), workflowID)
		progress = p
		return err == nil && ok
	}, time.Minute, 50*time.Millisecond, "the remote progress reaches the call")
	assert.Equal(t, toolcore.Progress{Completed: 1, Total: 3, Message: "one of three"}, progress)
	require.NoError(t, tg.CancelByWorkflowID(t.Context(), workflowID))
	<-rs.canceled // the remote handler saw its request canceled
	_, err = tg.ResultByWorkflowID(t.Context(), workflowID)
	require.ErrorIs(t, err, wire.ErrCallCanceled)
}

// sdkExampleServer is the path of one of the TypeScript SDK's example servers in interop/.
func sdkExampleServer(t *testing.T, name string) string {
	path, err := filepath.Abs(filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", name))
	require.NoError(t, err)
	typeScriptClient(t, "", nil) // fails the test naming `make setup` when Node or the SDK is missing
	return path
}

// The TypeScript SDK's stdio example server (progressExample.js: count to n with progress),
// spawned by the mount as a command.
func TestMountTypeScriptExampleServerStdio(t *testing.T) {
	transport, err := mcp.Target("node " + sdkExampleServer(t, "progressExample.js"))
	require.NoError(t, err)
	tg := mountedWorker(t, "ts", transport)

	res := execute(t, tg, "ts-count-3", "ts_count", `{"n":3}`)
	assert.False(t, res.IsError(), res.Content())
	assert.Equal(t, "Counted to 3", res.Content())
	res = execute(t, tg, "ts-count-0", "ts_count", `{"n":0}`)
	assert.True(t, res.IsError())
	assert.Contains(t, res.Content(), "TOOL_ARGUMENTS_INVALID", "the remote zod schema, checked in workflow code")

	call, err := toolcore.NewToolCall("ts-count-100", "ts_count", []byte(`{"n":100}`))
	require.NoError(t, err)
	workflowID, err := tg.Start(t.Context(), call)
	require.NoError(t, err)
	var progress toolcore.Progress
	require.Eventually(t, func() bool {
		p, ok, err := tg.ProgressByWorkflowID(t.Context(), workflowID)
		progress = p
		return err == nil && ok
	}, time.Minute, 50*time.Millisecond, "the remote progress reaches the call")
	assert.EqualValues(t, 100, progress.Total)
	assert.Contains(t, progress.Message, "Counting")
	require.NoError(t, tg.CancelByWorkflowID(t.Context(), workflowID))
	_, err = tg.ResultByWorkflowID(t.Context(), workflowID)
	require.ErrorIs(t, err, wire.ErrCallCanceled)
}

// The TypeScript SDK's streamable HTTP example server (simpleStreamableHttp.js), mounted by URL.
func TestMountTypeScriptExampleServerHTTP(t *testing.T) {
	script := sdkExampleServer(t, "simpleStreamableHttp.js")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	cmd := exec.Command("node", script)
	cmd.Env = childEnv(fmt.Sprintf("MCP_PORT=%d", port))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	for !strings.Contains(lines.Text(), "listening on port") {
		require.True(t, lines.Scan(), "the example server exited before listening")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	transport, err := mcp.Target(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	require.NoError(t, err)
	tg := mountedWorker(t, "tsweb", transport)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	sideEffects := map[string]string{}
	for _, info := range infos {
		sideEffects[info.Name] = info.SideEffect
	}
	assert.Equal(t, "unsafe", sideEffects["tsweb_greet"])
	assert.Equal(t, "readOnly", sideEffects["tsweb_multi-greet"])

	res := execute(t, tg, "tsweb-greet", "tsweb_greet", `{"name":"Ada"}`)
	assert.False(t, res.IsError(), res.Content())
	assert.Equal(t, "Hello, Ada!", res.Content())
	res = execute(t, tg, "tsweb-greet-bad", "tsweb_greet", `{}`)
	assert.True(t, res.IsError())
	assert.Contains(t, res.Content(), "TOOL_ARGUMENTS_INVALID")
}

// Over streamable HTTP too, the remote's last progress report, sent just before its result, is
// the call's last report: the mount counts the notifications in the response stream as they are
// read and returns once each is reported.
func TestMountHTTPLastProgressArrives(t *testing.T) {
	_, url := newRemoteServer(t)
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	tg := mountedWorker(t, "go", transport)
	for i := range 10 {
		call, err := toolcore.NewToolCall(fmt.Sprintf("finish-%d", i), "go_finish", []byte(`{}`))
		require.NoError(t, err)
		workflowID, err := tg.Start(t.Context(), call)
		require.NoError(t, err)
		res, err := tg.ResultByWorkflowID(t.Context(), workflowID)
		require.NoError(t, err)
		require.Equal(t, "finished", res.Content())
		last, ok, err := tg.FinalProgress(t.Context(), workflowID, "")
		require.NoError(t, err)
		require.True(t, ok, "call %d has a last report", i)
		assert.Equal(t, toolcore.Progress{Completed: 3, Total: 3, Message: "3 of three"}, last, "call %d", i)
	}
}

// A remote structuredContent is the content (JSON) and, with the remote outputSchema, reaches
// toolgate mcp's clients as structuredContent.
func TestMountedStructuredContent(t *testing.T) {
	_, url := newRemoteServer(t)
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	tg := mountedWorker(t, "go", transport)
	res := execute(t, tg, "stats-1", "go_stats", `{}`)
	require.False(t, res.IsError(), res.Content())
	assert.JSONEq(t, `{"count":3}`, res.Content())

	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	cs := connectInMemory(t, mcp.NewServer(tg, infos, mcp.Options{}))
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "go_stats", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, out.IsError)
	assert.Equal(t, map[string]any{"count": float64(3)}, out.StructuredContent)
	assert.JSONEq(t, `{"count":3}`, text(t, out))
}

// Images, audio and embedded blobs of a remote result are listed without their bytes: each says
// its type, MIME type and size; text contents are kept.
func TestMountedBinaryContentIsDescribed(t *testing.T) {
	_, url := newRemoteServer(t)
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	tg := mountedWorker(t, "go", transport)
	res := execute(t, tg, "picture-1", "go_picture", `{}`)
	require.False(t, res.IsError(), res.Content())
	assert.JSONEq(t, `[
		{"type":"text","text":"a chart"},
		{"type":"image","mimeType":"image/png","omittedBytes":4},
		{"type":"audio","mimeType":"audio/wav","omittedBytes":5},
		{"type":"resource","resource":{"uri":"file:///x.bin","mimeType":"application/octet-stream","omittedBytes":3}},
		{"type":"resource","resource":{"uri":"file:///x.txt","mimeType":"text/plain","text":"embedded text"}}
	]`, res.Content())
	assert.NotContains(t, res.Content(), `"data"`, "no base64 reaches the model")
}
