package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/consenttest"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// consentWait bounds each wait of the consent tests for something the server must do; a ceiling
// against hangs, not a timing goal.
const consentWait = time.Minute

// consentServer serves the tool read_repo over streamable HTTP, every call of which runs
// consenttest's stand-in workflow and waits for consent; signal gives it.
func consentServer(t *testing.T) (url string, signal func(workflowID string)) {
	t.Helper()
	s, signal := consentMCPServer(t)
	srv := httptest.NewServer(mcp.HTTPHandler(s, mcp.HTTPOptions{}))
	t.Cleanup(srv.Close)
	return srv.URL, signal
}

// consentMCPServer is consentServer's MCP server, for any transport.
func consentMCPServer(t *testing.T) (*sdk.Server, func(workflowID string)) {
	t.Helper()
	sdkc := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	stop, err := consenttest.Start(sdkc, queue)
	require.NoError(t, err)
	t.Cleanup(stop)
	tg := tgclient.New(sdkc, tgclient.Options{TaskQueue: queue})
	infos := []toolcore.ToolInfo{{Name: "read_repo", Description: "Read a repository as its principal.", SideEffect: "readOnly",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"provider":{"type":"string"},"url":{"type":"string"}}}`),
		Credentials: []toolcore.Credential{{Provider: consenttest.Request.Provider}}}}
	return mcp.NewServer(tg, infos, mcp.Options{}), func(workflowID string) {
		t.Helper()
		require.NoError(t, sdkc.SignalWorkflow(t.Context(), workflowID, "", wire.SignalConsent, wire.ConsentSignal{Provider: consenttest.Request.Provider}))
	}
}

// receive returns the first value of ch within consentWait.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(consentWait):
		require.FailNow(t, "no "+what+" within "+consentWait.String())
		var zero T
		return zero
	}
}

// A 2025-11-25 client that declared URL-mode elicitation is asked, on its tools/call's stream,
// with one elicitation/create of mode "url" carrying the authorization URL (and no token), and
// told notifications/elicitation/complete with the same elicitationId once the consent came and
// the call went on to its result; a client without it that sent a progressToken reads the URL in
// a progress notification, at 2026-07-28 too (issue 33 item 3).
func TestConsentShownToMCPClientAt20251125(t *testing.T) {
	url, signal := consentServer(t)
	t.Run("URL elicitation", func(t *testing.T) {
		asked := make(chan *sdk.ElicitParams, 4)
		completed := make(chan string, 4)
		c := sdk.NewClient(&sdk.Implementation{Name: "consent-test", Version: "1"}, &sdk.ClientOptions{
			Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
			ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked <- req.Params
				return &sdk.ElicitResult{Action: "accept"}, nil
			},
			ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
				completed <- req.Params.ElicitationID
			},
		})
		cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		type outcome struct {
			res *sdk.CallToolResult
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "read_repo", Arguments: map[string]any{},
				Meta: sdk.Meta{mcp.IdempotencyKeyMeta: "consent-url"}})
			done <- outcome{res, err}
		}()
		e := receive(t, asked, "elicitation/create")
		assert.Equal(t, "url", e.Mode)
		assert.Equal(t, consenttest.Request.URL, e.URL)
		assert.True(t, strings.HasPrefix(e.ElicitationID, "toolgate-consent-"), e.ElicitationID)
		assert.Contains(t, e.Message, "waits for your consent to example (scopes repo read:user) until ")
		assert.Nil(t, e.RequestedSchema)

		signal("mcp/toolcall-consent-url")
		o := receive(t, done, "result")
		require.NoError(t, o.err)
		require.False(t, o.res.IsError, "%s", text(t, o.res))
		assert.JSONEq(t, consenttest.Content, text(t, o.res))
		assert.Equal(t, e.ElicitationID, receive(t, completed, "notifications/elicitation/complete"))
		assert.Empty(t, asked, "asked once")
	})
	t.Run("URL elicitation declined", func(t *testing.T) {
		c := sdk.NewClient(&sdk.Implementation{Name: "consent-test", Version: "1"}, &sdk.ClientOptions{
			Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: "decline"}, nil
			},
		})
		cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		// No signal from the test: the decline alone ends the call, refused, without running.
		ctx, cancel := context.WithTimeout(t.Context(), consentWait)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_repo", Arguments: map[string]any{},
			Meta: sdk.Meta{mcp.IdempotencyKeyMeta: "consent-declined"}})
		require.NoError(t, err)
		require.True(t, res.IsError)
		assert.Contains(t, text(t, res), "refused consent to example")
	})
	for _, revision := range []string{"2025-11-25", mcp.StatelessRevision} {
		t.Run("progress message at "+revision, func(t *testing.T) {
			messages := make(chan string, 16)
			c := sdk.NewClient(&sdk.Implementation{Name: "consent-test", Version: "1"}, &sdk.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
					messages <- req.Params.Message
				},
			})
			cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: revision})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			done := make(chan error, 1)
			go func() {
				params := &sdk.CallToolParams{Name: "read_repo", Arguments: map[string]any{}, Meta: sdk.Meta{mcp.IdempotencyKeyMeta: "consent-progress-" + revision}}
				params.SetProgressToken("tok-1")
				_, err := cs.CallTool(t.Context(), params)
				done <- err
			}()
			msg := receive(t, messages, "progress notification")
			assert.Contains(t, msg, "waits for your consent to example (scopes repo read:user)")
			assert.True(t, strings.HasSuffix(msg, ": open "+consenttest.Request.URL), msg)
			signal("mcp/toolcall-consent-progress-" + revision)
			require.NoError(t, receive(t, done, "result"))
		})
	}
}

// A 2025-11-25 task whose call waits for consent is input_required for a client that declared
// URL elicitation (working with the URL in its statusMessage for one that did not), and its
// tasks/result asks with one URL-mode elicitation tied to the task, then completes it with
// notifications/elicitation/complete once the consent came, before the result (issue 33 item 3).
func TestConsentTaskAskedByTasksResultAt20251125(t *testing.T) {
	s, signal := consentMCPServer(t)
	asked := make(chan *sdk.ElicitParams, 4)
	completed := make(chan string, 4)
	connect := func(urlElicitation bool) *sdk.ClientSession {
		opts := &sdk.ClientOptions{}
		if urlElicitation {
			opts.Capabilities = &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}}
			opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked <- req.Params
				return &sdk.ElicitResult{Action: "accept"}, nil
			}
			opts.ElicitationCompleteHandler = func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
				completed <- req.Params.ElicitationID
			}
		}
		c := sdk.NewClient(&sdk.Implementation{Name: "consent-test", Version: "1"}, opts)
		require.NoError(t, sdk.AddSendingCustomMethod[*extTaskParams, *extTask](c, wire.MCPMethodTasksGet))
		require.NoError(t, sdk.AddSendingCustomMethod[*extTaskParams, *sdk.CallToolResult](c, wire.MCPMethodTasksResult))
		serverT, clientT := sdk.NewInMemoryTransports()
		ss, err := s.Connect(t.Context(), mcp.Transport(serverT), nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ss.Close() })
		cs, err := c.Connect(t.Context(), clientT, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	cs, plain := connect(true), connect(false)
	_, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "read_repo", Arguments: map[string]any{},
		Meta: sdk.Meta{wire.MCPTaskMeta: map[string]any{}, mcp.IdempotencyKeyMeta: "consent-task"}})
	require.NoError(t, err)
	const taskID = "mcp/toolcall-consent-task"
	get := func(cs *sdk.ClientSession) *extTask {
		t.Helper()
		task, err := sdk.CallCustomMethod[*extTaskParams, *extTask](t.Context(), cs, wire.MCPMethodTasksGet, &extTaskParams{TaskID: taskID})
		require.NoError(t, err)
		return task
	}
	deadline := time.Now().Add(consentWait)
	task := get(cs)
	for task.Status != wire.MCPTaskInputRequired {
		require.True(t, time.Now().Before(deadline), "task stayed %s %q", task.Status, task.StatusMessage)
		<-time.After(mcp.TaskPollInterval * time.Millisecond) // every pollInterval, as the task asks
		task = get(cs)
	}
	assert.Contains(t, task.StatusMessage, "waits for your consent to example")
	assert.NotContains(t, task.StatusMessage, consenttest.Request.URL, "the URL goes in the elicitation")
	other := get(plain)
	assert.Equal(t, wire.MCPTaskWorking, other.Status, "without URL elicitation")
	assert.True(t, strings.HasSuffix(other.StatusMessage, ": open "+consenttest.Request.URL), other.StatusMessage)

	done := make(chan error, 1)
	var res *sdk.CallToolResult
	go func() {
		var err error
		res, err = sdk.CallCustomMethod[*extTaskParams, *sdk.CallToolResult](t.Context(), cs, wire.MCPMethodTasksResult, &extTaskParams{TaskID: taskID})
		done <- err
	}()
	e := receive(t, asked, "elicitation/create")
	assert.Equal(t, "url", e.Mode)
	assert.Equal(t, consenttest.Request.URL, e.URL)
	assert.Equal(t, map[string]any{"taskId": taskID}, e.Meta[wire.MCPRelatedTaskMeta])
	signal(taskID)
	require.NoError(t, receive(t, done, "tasks/result"))
	assert.JSONEq(t, consenttest.Content, text(t, res))
	assert.Equal(t, e.ElicitationID, receive(t, completed, "notifications/elicitation/complete"))
	assert.Empty(t, asked, "asked once")
}

// A 2026-07-28 task whose call waits for consent is input_required with one URL-mode elicitation
// among its inputRequests (key wire.MCPConsentInputPrefix + its elicitationId, the same on every
// tasks/get) when the request declares URL elicitation, and working with the URL in its
// statusMessage when it does not; once the consent came the task completes (issue 33 item 3).
func TestConsentShownToMCPTaskAt20260728(t *testing.T) {
	url, signal := consentServer(t)
	caps := func(urlElicitation bool) map[string]any {
		c := map[string]any{"extensions": map[string]any{wire.MCPTasksExtension: map[string]any{}}}
		if urlElicitation {
			c["elicitation"] = map[string]any{"url": map[string]any{}}
		}
		return map[string]any{"io.modelcontextprotocol/clientCapabilities": c}
	}
	get := func(t *testing.T, taskID string, urlElicitation bool) map[string]any {
		t.Helper()
		_, body := post2026(t, url, wire.MCPMethodTasksGet, map[string]any{"taskId": taskID, "_meta": caps(urlElicitation)}, http.Header{"Mcp-Name": {taskID}})
		return rpcResult(t, body)
	}
	until := func(t *testing.T, taskID string, urlElicitation bool, done func(map[string]any) bool) map[string]any {
		t.Helper()
		deadline := time.Now().Add(consentWait)
		for {
			task := get(t, taskID, urlElicitation)
			if done(task) {
				return task
			}
			require.True(t, time.Now().Before(deadline), "task %s stayed %v", taskID, task)
			poll, _ := task["pollIntervalMs"].(float64)
			<-time.After(time.Duration(poll) * time.Millisecond) // every pollIntervalMs, as the task asks
		}
	}
	waits := func(task map[string]any) bool {
		msg, _ := task["statusMessage"].(string)
		return strings.Contains(msg, "consent")
	}

	_, body := post2026(t, url, "tools/call", map[string]any{"name": "read_repo", "arguments": map[string]any{},
		"_meta": caps(true)}, nil)
	created := rpcResult(t, body)
	require.Equal(t, wire.MCPResultTypeTask, created["resultType"], body)
	taskID, _ := created["taskId"].(string)
	require.NotEmpty(t, taskID, body)

	task := until(t, taskID, true, waits)
	assert.Equal(t, wire.MCPTaskInputRequired, task["status"])
	requests, _ := task["inputRequests"].(map[string]any)
	require.Len(t, requests, 1, "%v", task)
	for key, v := range requests {
		req, _ := v.(map[string]any)
		params, _ := req["params"].(map[string]any)
		assert.Equal(t, "elicitation/create", req["method"])
		assert.Equal(t, "url", params["mode"])
		assert.Equal(t, consenttest.Request.URL, params["url"])
		assert.Equal(t, wire.MCPConsentInputPrefix+params["elicitationId"].(string), key)
	}
	again := get(t, taskID, true)
	assert.Equal(t, task["inputRequests"], again["inputRequests"], "one request, one elicitationId")

	plain := get(t, taskID, false)
	assert.Equal(t, wire.MCPTaskWorking, plain["status"], "without URL elicitation")
	assert.NotContains(t, plain, "inputRequests")
	assert.Contains(t, plain["statusMessage"], ": open "+consenttest.Request.URL)

	signal(taskID)
	task = until(t, taskID, true, func(task map[string]any) bool { return task["status"] == wire.MCPTaskCompleted })
	assert.NotContains(t, task, "inputRequests")
	result, _ := task["result"].(map[string]any)
	assert.NotEqual(t, true, result["isError"], "%v", task)
	assert.Contains(t, result["content"], map[string]any{"type": "text", "text": consenttest.Content})
}

// rpcResult is the result of the JSON-RPC response in body (JSON, or one SSE event).
func rpcResult(t *testing.T, body string) map[string]any {
	t.Helper()
	if i := strings.Index(body, "data: "); i >= 0 && !strings.HasPrefix(strings.TrimSpace(body), "{") {
		body, _, _ = strings.Cut(body[i+len("data: "):], "\n")
	}
	var msg struct {
		Result map[string]any `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &msg), "%s", body)
	require.NotNil(t, msg.Result, "a result: %s", body)
	return msg.Result
}
