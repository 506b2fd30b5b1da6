package mcp_test

//lint:file-ignore SA1019 sampling and roots, deprecated at 2026-07-28, are current at 2025-11-25, which these tests serve too

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// askingTools are tools that ask mid-run: proceed asks its human to confirm (an Unsafe tool
// whose effect before the question is checkpointed, so it happens once), capital asks the
// caller's model, rounds asks two questions one after the other.
type askingTools struct {
	effects atomic.Int32 // what proceed did before its question
}

func newAskingTools(t testing.TB) (*askingTools, *toolcore.Registry) {
	at := &askingTools{}
	reg, err := toolcore.NewRegistry(
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "proceed",
			Description: "Prepare, ask whether to proceed, then delete.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				var prepared map[string]any
				if found, err := toolcore.LastCheckpoint(ctx, &prepared); err != nil {
					return nil, err
				} else if !found {
					at.effects.Add(1)
					if err := toolcore.Checkpoint(ctx, map[string]any{"prepared": true}); err != nil {
						return nil, err
					}
				}
				yes, err := toolcore.Confirm(ctx, "proceed", "Delete 3 resources?")
				if err != nil {
					return nil, err
				}
				return map[string]any{"deleted": map[bool]int{true: 3, false: 0}[yes]}, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.Unsafe, Interactive: true},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "capital",
			Description: "Ask the caller's model for the capital of France.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				r, err := toolcore.Sample(ctx, "capital", toolcore.SamplingRequest{MaxTokens: 20,
					Messages: []toolcore.SamplingMessage{{Role: "user", Content: toolcore.TextContent{Text: "What is the capital of France?"}}}})
				if err != nil {
					return nil, err
				}
				return map[string]any{"answer": r.Text(), "model": r.Model}, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly, Interactive: true},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "rounds",
			Description: "Ask a name, then a color.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				var answers []string
				for _, q := range []string{"name", "color"} {
					r, err := toolcore.Elicit(ctx, q, toolcore.Elicitation{Message: "Your " + q + "?",
						RequestedSchema: json.RawMessage(`{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`)})
					if err != nil {
						return nil, err
					}
					v, _ := r.Content["value"].(string)
					answers = append(answers, v)
				}
				return map[string]any{"answers": answers}, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly, Interactive: true},
		}),
	)
	require.NoError(t, err)
	return at, reg
}

// askingServer serves the asking tools over streamable HTTP.
func askingServer(t *testing.T, opts mcp.Options) (*askingTools, string) {
	t.Helper()
	at, reg := newAskingTools(t)
	tg, _ := servingWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	srv := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(tg, infos, opts), mcp.HTTPOptions{}))
	t.Cleanup(srv.Close)
	return at, srv.URL
}

// answeringClient is a go-sdk client that accepts every elicitation with content, answers
// sampling with "Paris", and records what it was asked.
func answeringClient(t *testing.T, url, revision string, content func(*sdk.ElicitParams) map[string]any, asked chan<- string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &sdk.ClientOptions{}
	}
	opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked <- "elicitation: " + req.Params.Message
		return &sdk.ElicitResult{Action: "accept", Content: content(req.Params)}, nil
	}
	opts.CreateMessageHandler = func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
		tc, _ := req.Params.Messages[0].Content.(*sdk.TextContent)
		asked <- "sampling: " + tc.Text
		return &sdk.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &sdk.TextContent{Text: "Paris"}}, nil
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "input-test", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: revision})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// A tool that asks mid-run is answered by the go-sdk client at both revisions: at 2025-11-25
// with elicitation/create and sampling/createMessage on the tools/call's stream, at 2026-07-28
// with an InputRequiredResult the client's multi round-trip retries answer (two rounds for
// rounds). The Unsafe tool's effect before its question happens once (issue 34 item 1).
func TestInputAskedOfMCPClient(t *testing.T) {
	at, url := askingServer(t, mcp.Options{})
	for _, revision := range []string{"2025-11-25", mcp.StatelessRevision} {
		t.Run(revision, func(t *testing.T) {
			asked := make(chan string, 16)
			cs := answeringClient(t, url, revision, func(p *sdk.ElicitParams) map[string]any {
				if strings.Contains(p.Message, "Delete") {
					return map[string]any{"confirm": true}
				}
				return map[string]any{"value": strings.TrimSuffix(strings.TrimPrefix(p.Message, "Your "), "?") + "-answer"}
			}, asked, nil)
			ctx, cancel := context.WithTimeout(t.Context(), consentWait)
			defer cancel()

			before := at.effects.Load()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "proceed", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%s", text(t, res))
			assert.JSONEq(t, `{"deleted":3}`, text(t, res))
			assert.Equal(t, "elicitation: Delete 3 resources?", receive(t, asked, "the confirmation"))
			assert.Equal(t, before+1, at.effects.Load(), "the effect before the question happened once")

			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "capital", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%s", text(t, res))
			assert.JSONEq(t, `{"answer":"Paris","model":"test-model"}`, text(t, res))
			assert.Equal(t, "sampling: What is the capital of France?", receive(t, asked, "the sampling request"))

			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "rounds", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%s", text(t, res))
			assert.JSONEq(t, `{"answers":["name-answer","color-answer"]}`, text(t, res))
			assert.Equal(t, "elicitation: Your name?", receive(t, asked, "the first round"))
			assert.Equal(t, "elicitation: Your color?", receive(t, asked, "the second round"))
			assert.Empty(t, asked, "each question asked once")
		})
	}
}

// At 2026-07-28 the InputRequiredResult carries the questions and a requestState; a retry with a
// tampered state, or one issued for another tool, is refused with -32602 saying why, and the
// call goes on waiting: the genuine retry completes it.
func TestInputRequestStateRefused(t *testing.T) {
	_, url := askingServer(t, mcp.Options{})
	asked := make(chan string, 16)
	cs := answeringClient(t, url, mcp.StatelessRevision, func(*sdk.ElicitParams) map[string]any {
		return map[string]any{"confirm": true}
	}, asked, &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	ctx, cancel := context.WithTimeout(t.Context(), consentWait)
	defer cancel()

	first, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "proceed", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, first.NeedsInput(), "an InputRequiredResult")
	require.Contains(t, first.InputRequests, "proceed")
	el, ok := first.InputRequests["proceed"].(*sdk.ElicitParams)
	require.True(t, ok, "%T", first.InputRequests["proceed"])
	assert.Equal(t, "Delete 3 resources?", el.Message)
	require.NotEmpty(t, first.RequestState)
	answers := sdk.InputResponseMap{"proceed": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}

	tests := []struct {
		name  string
		tool  string
		state string
		want  string
	}{
		{"tampered", "proceed", first.RequestState + "-TAMPERED", "integrity check"},
		{"payload changed", "proceed", "x" + first.RequestState[1:], "integrity check"},
		{"another tool's", "capital", first.RequestState, "another tool"},
		{"no signature", "proceed", strings.Split(first.RequestState, ".")[0], "integrity check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tt.tool, Arguments: map[string]any{},
				InputResponses: answers, RequestState: tt.state})
			rpcErr := rpcError(t, err)
			assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr.Code)
			assert.Contains(t, rpcErr.Message, tt.want)
		})
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "proceed", Arguments: map[string]any{},
		InputResponses: answers, RequestState: first.RequestState})
	require.NoError(t, err)
	require.False(t, res.NeedsInput())
	assert.JSONEq(t, `{"deleted":3}`, text(t, res))
	assert.Equal(t, fmt.Sprint(res.Meta[mcp.WorkflowIDMeta]), fmt.Sprint(first.Meta[mcp.WorkflowIDMeta]), "the retry completed the asking call")
}

// A task whose call waits for input is input_required for a client that can answer: at
// 2026-07-28 tasks/get lists the round's questions in inputRequests (the tool's keys) and
// tasks/update answers them, one round after the other; at 2025-11-25 tasks/result asks them on
// its stream, tied to the task (issue 34 item 1).
func TestInputAskedOfMCPTask(t *testing.T) {
	_, reg := newAskingTools(t)
	tg, _ := servingWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	s := mcp.NewServer(tg, infos, mcp.Options{})
	run := time.Now().UnixNano() // the keys of this run's calls (-count reruns on one server)
	key := func(name string) string { return fmt.Sprintf("%s-%d", name, run) }
	connect := func(t *testing.T, revision string, opts *sdk.ClientOptions) *sdk.ClientSession {
		c := sdk.NewClient(&sdk.Implementation{Name: "input-task-test", Version: "1"}, opts)
		for _, method := range []string{wire.MCPMethodTasksGet, wire.MCPMethodTasksUpdate} {
			require.NoError(t, sdk.AddSendingCustomMethod[*extTaskParams, *extTask](c, method))
		}
		require.NoError(t, sdk.AddSendingCustomMethod[*extTaskParams, *sdk.CallToolResult](c, wire.MCPMethodTasksResult))
		serverT, clientT := sdk.NewInMemoryTransports()
		ss, err := s.Connect(t.Context(), mcp.Transport(serverT), nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ss.Close() })
		cs, err := c.Connect(t.Context(), clientT, &sdk.ClientSessionOptions{ProtocolVersion: revision})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	get := func(t *testing.T, cs *sdk.ClientSession, taskID string) *extTask {
		t.Helper()
		task, err := sdk.CallCustomMethod[*extTaskParams, *extTask](t.Context(), cs, wire.MCPMethodTasksGet, &extTaskParams{TaskID: taskID})
		require.NoError(t, err)
		return task
	}
	until := func(t *testing.T, cs *sdk.ClientSession, taskID string, done func(*extTask) bool) *extTask {
		t.Helper()
		deadline := time.Now().Add(consentWait)
		task := get(t, cs, taskID)
		for !done(task) {
			require.True(t, time.Now().Before(deadline), "task stayed %s %q", task.Status, task.StatusMessage)
			<-time.After(mcp.TaskPollInterval * time.Millisecond) // every pollInterval, as the task asks
			task = get(t, cs, taskID)
		}
		return task
	}

	t.Run(mcp.StatelessRevision, func(t *testing.T) {
		caps := &sdk.ClientCapabilities{Extensions: map[string]any{wire.MCPTasksExtension: map[string]any{}},
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}}
		inline := make(chan string, 4)
		cs := connect(t, mcp.StatelessRevision, &sdk.ClientOptions{Capabilities: caps,
			ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				inline <- req.Params.Message
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "name-inline"}}, nil
			}})
		_, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "rounds", Arguments: map[string]any{},
			Meta: sdk.Meta{mcp.IdempotencyKeyMeta: key("rounds-task")}})
		require.NoError(t, err)
		taskID := "mcp/toolcall-" + key("rounds-task")
		// A question asked within TaskInlineWindow (usually the first) comes as an
		// InputRequiredResult, which the client's multi round-trip retry answers and gets the task;
		// the others through tasks/get and tasks/update.
		answered := map[string]string{}
		select {
		case m := <-inline:
			answered["name"] = "inline: " + m
		default:
		}
		for {
			task := until(t, cs, taskID, func(task *extTask) bool { return len(task.InputRequests) > 0 || terminal(task) })
			if terminal(task) {
				break
			}
			require.Equal(t, wire.MCPTaskInputRequired, task.Status, "%q", task.StatusMessage)
			require.Len(t, task.InputRequests, 1)
			for q, r := range task.InputRequests {
				assert.Equal(t, "elicitation/create", r.Method)
				assert.Equal(t, "Your "+q+"?", r.Params.Message)
				assert.NotContains(t, answered, q, "asked once")
				answered[q] = "task"
				ack, err := sdk.CallCustomMethod[*extTaskParams, *extTask](t.Context(), cs, wire.MCPMethodTasksUpdate, &extTaskParams{TaskID: taskID,
					InputResponses: map[string]any{q: map[string]any{"action": "accept", "content": map[string]any{"value": q + "-task"}}, "unasked": map[string]any{"action": "accept"}}})
				require.NoError(t, err)
				assert.Equal(t, "complete", ack.ResultType)
			}
		}
		assert.Equal(t, "task", answered["color"])
		task := until(t, cs, taskID, terminal)
		require.Equal(t, "completed", task.Status)
		got, isError := extResultText(task)
		require.False(t, isError, got)
		name := "name-task"
		if answered["name"] != "task" {
			assert.Equal(t, "inline: Your name?", answered["name"])
			name = "name-inline"
		}
		assert.JSONEq(t, `{"answers":["`+name+`","color-task"]}`, got)
	})

	t.Run("2025-11-25", func(t *testing.T) {
		asked := make(chan *sdk.ElicitParams, 4)
		cs := connect(t, "2025-11-25", &sdk.ClientOptions{
			ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked <- req.Params
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}})
		_, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "proceed", Arguments: map[string]any{},
			Meta: sdk.Meta{wire.MCPTaskMeta: map[string]any{}, mcp.IdempotencyKeyMeta: key("proceed-task")}})
		require.NoError(t, err)
		taskID := "mcp/toolcall-" + key("proceed-task")
		task := until(t, cs, taskID, func(task *extTask) bool { return task.Status != wire.MCPTaskWorking })
		require.Equal(t, wire.MCPTaskInputRequired, task.Status, "%q", task.StatusMessage)
		assert.Contains(t, task.StatusMessage, "tasks/result asks for it")

		res, err := sdk.CallCustomMethod[*extTaskParams, *sdk.CallToolResult](t.Context(), cs, wire.MCPMethodTasksResult, &extTaskParams{TaskID: taskID})
		require.NoError(t, err)
		assert.JSONEq(t, `{"deleted":3}`, text(t, res))
		e := receive(t, asked, "elicitation/create")
		assert.Equal(t, "Delete 3 resources?", e.Message)
		assert.Equal(t, map[string]any{"taskId": taskID}, e.Meta[wire.MCPRelatedTaskMeta])
		assert.Empty(t, asked, "asked once")
	})
}

// A 2026-07-28 tools/call whose tool asks only what its client did not declare it answers ends
// with -32021 naming the capabilities it lacks (the suite's server-stateless).
func TestInputMissingCapability(t *testing.T) {
	_, url := askingServer(t, mcp.Options{})
	c := sdk.NewClient(&sdk.Implementation{Name: "input-test", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: mcp.StatelessRevision})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), consentWait)
	defer cancel()
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "capital", Arguments: map[string]any{}})
	rpcErr := rpcError(t, err)
	assert.EqualValues(t, wire.MCPCodeMissingRequiredClientCapability, rpcErr.Code)
	assert.Contains(t, rpcErr.Message, "sampling")
	assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{}}}`, string(rpcErr.Data))
}

// The TypeScript SDK client (1.x, 2025-11-25) answers a tool's confirmation and sampling
// request on the tools/call's stream (interop/mcp-ask.mjs).
func TestInputAskedOfTypeScriptClient(t *testing.T) {
	_, url := askingServer(t, mcp.Options{})
	cmd := typeScriptClient(t, "unused", []string{"MCP_URL=" + url})
	cmd.Args = []string{cmd.Args[0], "mcp-ask.mjs"}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node mcp-ask.mjs: %s", stderr.String())
	var report struct {
		Asked []struct {
			Method  string `json:"method"`
			Message string `json:"message"`
		} `json:"asked"`
		Proceed, Capital tsToolResult
	}
	require.NoError(t, json.Unmarshal([]byte(stdout.String()), &report), "report: %s", stdout.String())
	require.Len(t, report.Asked, 2, "each question asked once")
	assert.Equal(t, "elicitation/create", report.Asked[0].Method)
	assert.Equal(t, "Delete 3 resources?", report.Asked[0].Message)
	assert.Equal(t, "sampling/createMessage", report.Asked[1].Method)
	assert.Equal(t, "What is the capital of France?", report.Asked[1].Message)
	require.False(t, report.Proceed.IsError)
	require.Len(t, report.Proceed.Content, 1)
	assert.JSONEq(t, `{"deleted":3}`, report.Proceed.Content[0].Text)
	require.Len(t, report.Capital.Content, 1)
	assert.JSONEq(t, `{"answer":"Paris","model":"ts-model"}`, report.Capital.Content[0].Text)
}

// A requestState is the principal's it was issued to: bob retrying alice's round with her state
// is refused -32602 and answers nothing; alice's own retry completes the call.
func TestInputRequestStateOfAnotherPrincipalRefused(t *testing.T) {
	_, reg := newAskingTools(t)
	tg, _ := servingWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	s := newRSASigner(t, "")
	verifier, err := mcp.JWTVerifier(mcp.JWTOptions{Audience: testResource, Keys: []crypto.PublicKey{s.key.Public()}})
	require.NoError(t, err)
	srv := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(tg, infos, mcp.Options{}), mcp.HTTPOptions{Verifier: verifier, Resource: testResource}))
	t.Cleanup(srv.Close)
	session := func(sub string) *sdk.ClientSession {
		c := sdk.NewClient(&sdk.Implementation{Name: "input-" + sub, Version: "1"}, &sdk.ClientOptions{
			Capabilities:   &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}},
			MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
		cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL,
			HTTPClient: &http.Client{Transport: bearerTransport(tokenFor(t, s, sub))}}, &sdk.ClientSessionOptions{ProtocolVersion: mcp.StatelessRevision})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	alice, bob := session("alice"), session("bob")
	ctx, cancel := context.WithTimeout(t.Context(), consentWait)
	defer cancel()

	first, err := alice.CallTool(ctx, &sdk.CallToolParams{Name: "proceed", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, first.NeedsInput())
	answers := sdk.InputResponseMap{"proceed": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}}
	_, err = bob.CallTool(ctx, &sdk.CallToolParams{Name: "proceed", Arguments: map[string]any{}, InputResponses: answers, RequestState: first.RequestState})
	rpcErr := rpcError(t, err)
	assert.EqualValues(t, jsonrpc.CodeInvalidParams, rpcErr.Code)
	assert.Contains(t, rpcErr.Message, "another principal")

	answers["proceed"] = &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
	res, err := alice.CallTool(ctx, &sdk.CallToolParams{Name: "proceed", Arguments: map[string]any{}, InputResponses: answers, RequestState: first.RequestState})
	require.NoError(t, err)
	assert.JSONEq(t, `{"deleted":3}`, text(t, res), "bob's answer never reached the call")
}
