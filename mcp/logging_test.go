//lint:file-ignore SA1019 logging is deprecated by 2026-07-28 (SEP-2577) and still served in its deprecation window and at 2025-11-25

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

// chattyFixture is a worker serving "chatty", a tool that logs at four levels among two progress
// reports: debug d, progress 1, info i, warning w (with data), progress 2, error e.
func chattyFixture(t *testing.T) *fixture {
	chatty := toolcore.MustDefine(toolcore.Definition[struct{}]{Name: "chatty", Description: "Logs among its progress.",
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		Execute: func(ctx context.Context, _ struct{}) (any, error) {
			toolcore.Log(ctx, toolcore.LogDebug, "d", nil)
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 1, Total: 2})
			toolcore.Log(ctx, toolcore.LogInfo, "i", nil)
			toolcore.Log(ctx, toolcore.LogWarning, "w", map[string]int{"k": 1})
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 2, Total: 2})
			toolcore.Log(ctx, toolcore.LogError, "e", nil)
			return "done", nil
		}})
	reg, err := toolcore.NewRegistry(chatty)
	require.NoError(t, err)
	tg, queue := servingWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	return &fixture{tg: tg, infos: infos, queue: queue}
}

// chattyServer is the MCP server of chattyFixture.
func chattyServer(t *testing.T) *sdk.Server { return chattyFixture(t).server() }

// heard records, in wire order (as the client reads them off its connection), a client's
// progress and log notifications and the responses it receives.
type heard struct {
	sdk.Transport
	mu     sync.Mutex
	events []string
}

func (h *heard) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := h.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &heardConn{Connection: conn, h: h}, nil
}

type heardConn struct {
	sdk.Connection
	h *heard
}

func (c *heardConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	event := ""
	switch m := msg.(type) {
	case *jsonrpc.Request:
		switch m.Method {
		case "notifications/progress":
			var p sdk.ProgressNotificationParams
			if json.Unmarshal(m.Params, &p) == nil {
				event = fmt.Sprintf("progress %v/%v", p.Progress, p.Total)
			}
		case "notifications/message":
			var p sdk.LoggingMessageParams
			if json.Unmarshal(m.Params, &p) == nil {
				event = logEvent(string(p.Level), p.Logger, p.Data)
			}
		}
	case *jsonrpc.Response:
		event = "response"
	}
	if event != "" {
		c.h.mu.Lock()
		c.h.events = append(c.h.events, event)
		c.h.mu.Unlock()
	}
	return msg, nil
}

func (h *heard) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.events
	h.events = nil
	return out
}

// logEvent is how a test names a log notification: "<level> <logger> <data JSON>".
func logEvent(level, logger string, data any) string {
	b, _ := json.Marshal(data)
	return fmt.Sprintf("%s %s %s", level, logger, b)
}

// A tool's log messages reach a go-sdk client of 2025-11-25 as notifications/message (logger: the
// tool's name), in order with the call's progress notifications and all before the result, at
// the level its session set with logging/setLevel and above; a session that set none gets none.
func TestLogsReachTheClientInOrderWithProgress(t *testing.T) {
	s := chattyServer(t)
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	h := &heard{Transport: clientT}
	cs, err := c.Connect(t.Context(), h, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	require.NotNil(t, cs.InitializeResult().Capabilities.Logging, "the server declares logging")

	call := func(token string) {
		params := &sdk.CallToolParams{Name: "chatty", Arguments: map[string]any{}}
		if token != "" {
			params.SetProgressToken(token)
		}
		res, err := cs.CallTool(t.Context(), params)
		require.NoError(t, err)
		require.False(t, res.IsError, "%s", text(t, res))
	}

	h.take()
	call("") // no level set: no messages
	assert.Equal(t, []string{"response"}, h.take(), "a session that set no level gets no messages")

	require.NoError(t, cs.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "info"}))
	h.take()
	call("p")
	assert.Equal(t, []string{
		"progress 1/2",
		logEvent("info", "chatty", "i"),
		logEvent("warning", "chatty", map[string]any{"message": "w", "data": map[string]int{"k": 1}}),
		"progress 2/2",
		logEvent("error", "chatty", "e"),
		"response",
	}, h.take(), "info and above, in the order the tool made them, before the result")

	require.NoError(t, cs.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "error"}))
	h.take()
	call("") // logs without a progress token
	assert.Equal(t, []string{logEvent("error", "chatty", "e"), "response"}, h.take(), "setLevel filters")

	// A go-sdk client of 2026-07-28 asks per request, in _meta.
	serverT, clientT = sdk.NewInMemoryTransports()
	ss, err = s.Connect(t.Context(), serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	now := &heard{Transport: clientT}
	cs, err = c.Connect(t.Context(), now, &sdk.ClientSessionOptions{ProtocolVersion: mcp.StatelessRevision})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	now.take()
	params := &sdk.CallToolParams{Name: "chatty", Arguments: map[string]any{}, Meta: sdk.Meta{sdk.MetaKeyLogLevel: "warning"}}
	params.SetProgressToken("q")
	res, err := cs.CallTool(t.Context(), params)
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", text(t, res))
	assert.Equal(t, []string{
		"progress 1/2",
		logEvent("warning", "chatty", map[string]any{"message": "w", "data": map[string]int{"k": 1}}),
		"progress 2/2",
		logEvent("error", "chatty", "e"),
		"response",
	}, now.take(), "warning and above, for this request")
}

// At 2026-07-28 (no sessions, no logging/setLevel) a request's _meta log level asks for its
// tool's messages at that level and above, in order with its progress; a request without one
// gets none, and logging/setLevel is Method not found.
func TestLogsAtTheStatelessRevisionFollowTheRequestsLevel(t *testing.T) {
	srv := httptest.NewServer(mcp.HTTPHandler(chattyServer(t), mcp.HTTPOptions{}))
	t.Cleanup(srv.Close)
	events := func(body string) []string {
		var out []string
		for _, line := range strings.Split(body, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Level    string  `json:"level"`
					Logger   string  `json:"logger"`
					Data     any     `json:"data"`
					Progress float64 `json:"progress"`
				} `json:"params"`
				Result json.RawMessage `json:"result"`
			}
			require.NoError(t, json.Unmarshal([]byte(data), &msg), data)
			switch {
			case msg.Method == "notifications/message":
				out = append(out, logEvent(msg.Params.Level, msg.Params.Logger, msg.Params.Data))
			case msg.Method == "notifications/progress":
				out = append(out, fmt.Sprintf("progress %v", msg.Params.Progress))
			case msg.Result != nil:
				out = append(out, "result")
			}
		}
		return out
	}
	callWith := func(meta map[string]any) []string {
		resp, body := post2026(t, srv.URL, "tools/call", map[string]any{"name": "chatty", "arguments": map[string]any{}, "_meta": meta}, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		return events(body)
	}
	assert.Equal(t, []string{
		"progress 1",
		logEvent("warning", "chatty", map[string]any{"message": "w", "data": map[string]int{"k": 1}}),
		"progress 2",
		logEvent("error", "chatty", "e"),
		"result",
	}, callWith(map[string]any{"progressToken": "p", sdk.MetaKeyLogLevel: "warning"}))
	assert.Equal(t, []string{"progress 1", "progress 2", "result"}, callWith(map[string]any{"progressToken": "p"}),
		"no level, no messages")

	resp, body := post2026(t, srv.URL, "logging/setLevel", map[string]any{"level": "debug"}, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, body)
	assert.Contains(t, body, `-32601`)
}

// The TypeScript SDK's client gets a tool's log messages in order with its progress, over stdio
// and streamable HTTP, from a real `toolgate mcp`.
func TestTypeScriptClientLogs(t *testing.T) {
	f := chattyFixture(t)
	for name, env := range transports(t, f) {
		t.Run(name, func(t *testing.T) {
			var report struct {
				Events []map[string]any `json:"events"`
				Result tsToolResult     `json:"result"`
			}
			runTypeScriptClient(t, "logs", env, &report)
			assert.False(t, report.Result.IsError)
			assert.Equal(t, []map[string]any{
				{"progress": 1.0, "total": 2.0},
				{"level": "info", "logger": "chatty", "data": "i"},
				{"level": "warning", "logger": "chatty", "data": map[string]any{"message": "w", "data": map[string]any{"k": 1.0}}},
				{"progress": 2.0, "total": 2.0},
				{"level": "error", "logger": "chatty", "data": "e"},
			}, report.Events)
		})
	}
}
