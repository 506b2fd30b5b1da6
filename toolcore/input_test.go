package toolcore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// askingExecution is a durable-path execution that collects questions, with answers.
func askingExecution(answers map[string]json.RawMessage) (context.Context, *toolcore.Asking) {
	asking := &toolcore.Asking{}
	return toolcore.WithExecution(context.Background(), toolcore.Execution{ToolCallID: "c1", ToolName: "t", Asking: asking, InputResponses: answers}), asking
}

func TestAskRecordsTheQuestionAndReturnsInputRequired(t *testing.T) {
	ctx, asking := askingExecution(nil)
	_, err := toolcore.Ask(ctx, "proceed", toolcore.InputRequest{Method: toolcore.MethodElicit, Params: json.RawMessage(`{"message":"go?"}`)})
	var ire *toolcore.InputRequiredError
	require.ErrorAs(t, err, &ire)
	assert.Equal(t, "proceed", ire.Key)
	assert.ErrorIs(t, err, toolcore.ErrInputRequired)
	assert.True(t, toolcore.IsInputRequired(fmt.Errorf("wrapped: %w", err)))
	assert.False(t, toolcore.IsInputRequired(errors.New("the tool waits for input")), "only the sentinel counts, not its text")

	// One round carries every question the attempt asked; a key asked twice keeps its first.
	_, err = toolcore.Ask(ctx, "roots", toolcore.InputRequest{Method: toolcore.MethodListRoots})
	require.ErrorIs(t, err, toolcore.ErrInputRequired)
	_, err = toolcore.Ask(ctx, "proceed", toolcore.InputRequest{Method: toolcore.MethodListRoots})
	require.ErrorIs(t, err, toolcore.ErrInputRequired)
	got := asking.Requests()
	assert.Equal(t, []string{"proceed", "roots"}, toolcore.InputKeys(got))
	assert.Equal(t, toolcore.MethodElicit, got["proceed"].Method)
}

func TestAskReturnsTheAnswerOfAnEarlierRound(t *testing.T) {
	ctx, asking := askingExecution(map[string]json.RawMessage{"proceed": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)})
	ok, err := toolcore.Confirm(ctx, "proceed", "delete 3 resources?")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Nil(t, asking.Requests(), "an answered question is not asked again")

	for answer, want := range map[string]bool{
		`{"action":"accept","content":{"confirm":false}}`: false,
		`{"action":"decline"}`:                            false,
		`{"action":"cancel"}`:                             false,
	} {
		ctx, _ := askingExecution(map[string]json.RawMessage{"proceed": json.RawMessage(answer)})
		ok, err := toolcore.Confirm(ctx, "proceed", "go?")
		require.NoError(t, err, answer)
		assert.Equal(t, want, ok, answer)
	}
	ctx, _ = askingExecution(map[string]json.RawMessage{"proceed": json.RawMessage(`{"action":"maybe"}`)})
	_, err = toolcore.Confirm(ctx, "proceed", "go?")
	assert.ErrorContains(t, err, `the answer's action "maybe" is not accept, decline or cancel`)
}

func TestAskRefusesMalformedQuestions(t *testing.T) {
	ctx, asking := askingExecution(nil)
	for name, c := range map[string]struct {
		key string
		req toolcore.InputRequest
	}{
		"blank key":       {"", toolcore.InputRequest{Method: toolcore.MethodListRoots}},
		"key with space":  {"a b", toolcore.InputRequest{Method: toolcore.MethodListRoots}},
		"long key":        {strings.Repeat("k", 65), toolcore.InputRequest{Method: toolcore.MethodListRoots}},
		"unknown method":  {"k", toolcore.InputRequest{Method: "tools/call"}},
		"invalid params":  {"k", toolcore.InputRequest{Method: toolcore.MethodElicit, Params: json.RawMessage(`{`)}},
		"too large":       {"k", toolcore.InputRequest{Method: toolcore.MethodElicit, Params: json.RawMessage(`"` + strings.Repeat("x", toolcore.MaxInputParamsBytes) + `"`)}},
		"toolgate's own":  {"k", toolcore.InputRequest{Method: "toolgate/unknown"}},
		"callback by Ask": {"k", toolcore.InputRequest{Method: toolcore.MethodCallback, Params: json.RawMessage(`{}`)}},
	} {
		_, err := toolcore.Ask(ctx, c.key, c.req)
		require.Error(t, err, name)
		assert.NotErrorIs(t, err, toolcore.ErrInputRequired, name)
	}
	assert.Nil(t, asking.Requests(), "nothing malformed is recorded")

	for i := range toolcore.MaxInputRequests {
		_, err := toolcore.Ask(ctx, fmt.Sprint("q", i), toolcore.InputRequest{Method: toolcore.MethodListRoots})
		require.ErrorIs(t, err, toolcore.ErrInputRequired)
	}
	_, err := toolcore.Ask(ctx, "one-too-many", toolcore.InputRequest{Method: toolcore.MethodListRoots})
	assert.ErrorContains(t, err, "more than 8 questions in one attempt")

	_, err = toolcore.Elicit(ctx, "u", toolcore.Elicitation{Mode: "url", Message: "pay", URL: "http://pay.example"})
	assert.ErrorContains(t, err, "URL mode needs an https URL")
	_, err = toolcore.Sample(ctx, "s", toolcore.SamplingRequest{})
	assert.ErrorContains(t, err, "messages and a positive maxTokens are required")
}

func TestAskWithoutAnyoneToAskFails(t *testing.T) {
	_, err := toolcore.Ask(context.Background(), "k", toolcore.InputRequest{Method: toolcore.MethodListRoots})
	assert.ErrorContains(t, err, "not inside a tool's execution")
	ctx := toolcore.WithExecution(context.Background(), toolcore.Execution{ToolCallID: "c1", ToolName: "t"})
	_, err = toolcore.Ask(ctx, "k", toolcore.InputRequest{Method: toolcore.MethodListRoots})
	assert.ErrorContains(t, err, "this executor has no one to ask")
	_, err = toolcore.Callback(ctx, "k", func(string) error { return nil })
	assert.ErrorContains(t, err, "this executor serves no callbacks")
}

// askingTool asks for a summary from the caller's model and the caller's roots.
var askingTool = toolcore.MustDefine(toolcore.Definition[struct{}]{
	Name:        "summarize",
	Description: "asks the caller's model",
	Validate:    func(toolcore.Arguments) toolcore.Decision[struct{}] { return toolcore.Accept(struct{}{}) },
	Execute: func(ctx context.Context, _ struct{}) (any, error) {
		s, err := toolcore.Sample(ctx, "summary", toolcore.SamplingRequest{MaxTokens: 100,
			Messages: []toolcore.SamplingMessage{{Role: "user", Content: toolcore.TextContent{Text: "summarize"}}}})
		if err != nil {
			return nil, err
		}
		roots, err := toolcore.ListRoots(ctx, "roots")
		if err != nil {
			return nil, err
		}
		return map[string]any{"summary": s.Text(), "roots": len(roots)}, nil
	},
})

func TestExecuteWithInputAnswersInProcess(t *testing.T) {
	reg, err := toolcore.NewRegistry(askingTool)
	require.NoError(t, err)
	call, err := toolcore.NewToolCall("c1", "summarize", []byte(`{}`))
	require.NoError(t, err)
	var asked []string
	res, err := toolcore.ExecuteWith(context.Background(), reg, call, toolcore.ExecuteOptions{
		Input: func(_ context.Context, key string, req toolcore.InputRequest) (json.RawMessage, error) {
			asked = append(asked, key+" "+req.Method)
			if req.Method == toolcore.MethodSample {
				assert.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":"summarize"}}],"maxTokens":100}`, string(req.Params))
				return json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"short"}}`), nil
			}
			return json.RawMessage(`{"roots":[{"uri":"file:///w"}]}`), nil
		},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `{"summary":"short","roots":1}`, res.Content())
	assert.Equal(t, []string{"summary sampling/createMessage", "roots roots/list"}, asked)

	// Without an answerer the question is the tool's error: a linked TOOL_EXECUTION_FAILED.
	res, err = toolcore.Execute(context.Background(), reg, call)
	require.NoError(t, err)
	assert.Equal(t, toolcore.CodeToolExecutionFailed, res.ErrorCode())
	assert.Contains(t, res.ErrorMessage(), "this executor has no one to ask")
}

// fixedMinter mints one known URL.
type fixedMinter struct{ minted *int }

func (m fixedMinter) MintCallback(_ context.Context, key string, ttl time.Duration) (string, string, time.Time, error) {
	*m.minted++
	return "https://cb.example/" + key, "ab12", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(ttl), nil
}

func TestCallbackHandsTheURLOnceAndReturnsWhatArrived(t *testing.T) {
	minted := 0
	asking := &toolcore.Asking{}
	ctx := toolcore.WithExecution(context.Background(), toolcore.Execution{ToolCallID: "c1", ToolName: "t", Asking: asking,
		Callbacks: fixedMinter{&minted}, InputTimeout: time.Hour})
	var handed string
	_, err := toolcore.Callback(ctx, "paid", func(url string) error { handed = url; return nil })
	require.ErrorIs(t, err, toolcore.ErrInputRequired)
	assert.Equal(t, "https://cb.example/paid", handed)
	q := asking.Requests()["paid"]
	assert.Equal(t, toolcore.MethodCallback, q.Method)
	assert.JSONEq(t, `{"expires":"2026-01-01T01:00:00Z","tokenSha256":"ab12"}`, string(q.Params))

	// A hand error is the tool's: nothing is asked.
	asking2 := &toolcore.Asking{}
	ctx2 := toolcore.WithExecution(context.Background(), toolcore.Execution{ToolCallID: "c1", ToolName: "t", Asking: asking2, Callbacks: fixedMinter{&minted}})
	_, err = toolcore.Callback(ctx2, "paid", func(string) error { return errors.New("provider down") })
	assert.EqualError(t, err, "provider down")
	assert.Nil(t, asking2.Requests())

	body, _ := json.Marshal(toolcore.CallbackResult{ContentType: "text/plain", Body: []byte("ok")})
	ctx3 := toolcore.WithExecution(context.Background(), toolcore.Execution{ToolCallID: "c1", ToolName: "t",
		InputResponses: map[string]json.RawMessage{"paid": body}})
	r, err := toolcore.Callback(ctx3, "paid", func(string) error { t.Fatal("the URL is not handed out again"); return nil })
	require.NoError(t, err)
	assert.Equal(t, toolcore.CallbackResult{ContentType: "text/plain", Body: []byte("ok")}, r)
	assert.Equal(t, 2, minted)
}
