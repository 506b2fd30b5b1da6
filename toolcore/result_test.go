package toolcore_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

func TestResultMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		give func(call toolcore.ToolCall) toolcore.Result
		want string
	}{
		{
			name: "success",
			give: func(c toolcore.ToolCall) toolcore.Result { return toolcore.SuccessResult(c, `{"sum":42}`) },
			want: `{"id":"tool-result-call-add-1","role":"toolResult","toolCallId":"call-add-1","toolName":"add","content":"{\"sum\":42}","isError":false}`,
		},
		{
			name: "error",
			give: func(c toolcore.ToolCall) toolcore.Result {
				return toolcore.ErrorResult(c, toolcore.CodeToolArgumentsInvalid, "left must be a number")
			},
			want: `{"id":"tool-result-call-add-1","role":"toolResult","toolCallId":"call-add-1","toolName":"add","content":"{\"error\":{\"code\":\"TOOL_ARGUMENTS_INVALID\",\"message\":\"left must be a number\"}}","isError":true}`,
		},
		{
			name: "no HTML escaping, JSON escapes kept",
			give: func(c toolcore.ToolCall) toolcore.Result { return toolcore.SuccessResult(c, "<a&b>\n\t\"é\"\u2028") },
			want: `{"id":"tool-result-call-add-1","role":"toolResult","toolCallId":"call-add-1","toolName":"add","content":"<a&b>\n\t\"é\"\u2028","isError":false}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.give(contractCall(t, "add", `{"left":20,"right":22}`, "call-add-1"))

			got, err := res.MarshalJSON()

			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// json.Marshal re-escapes <, > and & in what MarshalJSON returns (encoding/json compacts a
// marshaler's output with HTML escaping); the decoded result is the same.
func TestResultThroughJSONMarshalIsHTMLEscapedButEqual(t *testing.T) {
	res := toolcore.SuccessResult(contractCall(t, "add", `{}`, "call-1"), "<a&b>")

	data, err := json.Marshal(res)
	require.NoError(t, err)
	var back toolcore.Result
	require.NoError(t, json.Unmarshal(data, &back))

	assert.Contains(t, string(data), `\u003ca\u0026b\u003e`)
	assert.Equal(t, res, back)
}

func TestResultJSONRoundTrip(t *testing.T) {
	call := contractCall(t, "add", `{}`, "call-add-1")
	tests := []struct {
		name string
		give toolcore.Result
	}{
		{name: "success", give: toolcore.SuccessResult(call, `{"sum":42}`)},
		{name: "error", give: toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed, "boom <&>")},
		{name: "not found", give: toolcore.NotFoundResult(call)},
		{name: "capped", give: toolcore.SuccessResult(call, strings.Repeat("x", 5000))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.give)
			require.NoError(t, err)

			var got toolcore.Result
			require.NoError(t, json.Unmarshal(data, &got))

			assert.Equal(t, tt.give, got)
		})
	}
}

func TestResultUnmarshalJSONIsStrict(t *testing.T) {
	const valid = `{"id":"tool-result-c1","role":"toolResult","toolCallId":"c1","toolName":"add","content":"x","isError":false}`
	tests := []struct {
		name    string
		give    string
		wantMsg string
	}{
		{name: "not an object", give: `[]`, wantMsg: "not a JSON object"},
		{name: "malformed", give: `{"id":`, wantMsg: "decode tool result"},
		{name: "unknown field", give: strings.Replace(valid, `"isError":false`, `"isError":false,"extra":1`, 1), wantMsg: `unknown field "extra"`},
		{name: "duplicate field", give: strings.Replace(valid, `"content":"x"`, `"content":"x","content":"y"`, 1), wantMsg: `duplicate field "content"`},
		{name: "missing field", give: strings.Replace(valid, `,"isError":false`, ``, 1), wantMsg: `missing field "isError"`},
		{name: "null string", give: strings.Replace(valid, `"content":"x"`, `"content":null`, 1), wantMsg: `"content" must be a string`},
		{name: "object string", give: strings.Replace(valid, `"content":"x"`, `"content":{}`, 1), wantMsg: `"content" must be a string`},
		{name: "string isError", give: strings.Replace(valid, `"isError":false`, `"isError":"false"`, 1), wantMsg: `"isError" must be a boolean`},
		{name: "trailing data", give: valid + `{}`, wantMsg: "trailing data"},
		{name: "wrong role", give: strings.Replace(valid, `"toolResult"`, `"assistant"`, 1), wantMsg: `role "assistant" is not "toolResult"`},
		{name: "unlinked id", give: strings.Replace(valid, `"tool-result-c1"`, `"tool-result-c2"`, 1), wantMsg: "does not link"},
		{name: "blank call id", give: `{"id":"tool-result- ","role":"toolResult","toolCallId":" ","toolName":"add","content":"x","isError":false}`, wantMsg: `"toolCallId" must not be blank`},
		{name: "blank tool name", give: strings.Replace(valid, `"toolName":"add"`, `"toolName":""`, 1), wantMsg: `"toolName" must not be blank`},
		{name: "content over the cap", give: strings.Replace(valid, `"content":"x"`, `"content":"`+strings.Repeat("x", 4097)+`"`, 1), wantMsg: "exceeds 4096 code points"},
		{name: "error without a code", give: strings.Replace(valid, `"isError":false`, `"isError":true`, 1), wantMsg: "holds no known error code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := toolcore.SuccessResult(contractCall(t, "keep", `{}`, "keep-1"), "kept")
			got := before

			err := got.UnmarshalJSON([]byte(tt.give))

			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.Equal(t, before, got, "a failed decode leaves the result unchanged")
		})
	}
}

func TestErrorResultContent(t *testing.T) {
	call := contractCall(t, "add", `{}`, "call-1")
	tests := []struct {
		name     string
		code     toolcore.ErrorCode
		message  string
		want     string
		wantCode toolcore.ErrorCode
	}{
		{name: "arguments invalid", code: toolcore.CodeToolArgumentsInvalid, message: "left must be a number",
			want: `{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"left must be a number"}}`, wantCode: toolcore.CodeToolArgumentsInvalid},
		{name: "blank message", code: toolcore.CodeToolExecutionFailed, message: "  ",
			want: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"tool failed without a message"}}`, wantCode: toolcore.CodeToolExecutionFailed},
		{name: "invalid code", code: 0, message: "x",
			want: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"x"}}`, wantCode: toolcore.CodeToolExecutionFailed},
		{name: "quotes and newlines", code: toolcore.CodeToolValidationFailed, message: "say \"hi\"\n",
			want: `{"error":{"code":"TOOL_VALIDATION_FAILED","message":"say \"hi\"\n"}}`, wantCode: toolcore.CodeToolValidationFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := toolcore.ErrorResult(call, tt.code, tt.message)

			assert.True(t, res.IsError())
			assert.Equal(t, tt.want, res.Content())
			assert.Equal(t, tt.wantCode, res.ErrorCode())
		})
	}
}

func TestErrorResultStaysCompleteJSON(t *testing.T) {
	tests := []struct {
		name    string
		message string
	}{
		{name: "long", message: strings.Repeat("m", 100000)},
		{name: "escape-heavy", message: strings.Repeat("\x01", 5000)},
		{name: "invalid UTF-8", message: strings.Repeat("\xff", 5000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := toolcore.ErrorResult(contractCall(t, "add", `{}`, "call-1"), toolcore.CodeToolExecutionFailed, tt.message)

			assert.LessOrEqual(t, utf8.RuneCountInString(res.Content()), toolcore.MaxContentCodePoints)
			assert.True(t, json.Valid([]byte(res.Content())), "error content is never cut mid-JSON")
			assert.Equal(t, toolcore.CodeToolExecutionFailed, res.ErrorCode())
			assert.True(t, strings.HasSuffix(res.ErrorMessage(), "…"))
		})
	}
}

func TestNotFoundResult(t *testing.T) {
	res := toolcore.NotFoundResult(contractCall(t, "nope", `{}`, "call-1"))

	assert.Equal(t, `{"error":{"code":"TOOL_NOT_FOUND","message":"Unknown Tool \"nope\""}}`, res.Content())
	assert.Equal(t, `Unknown Tool "nope"`, res.ErrorMessage())
	assert.Equal(t, "nope", res.ToolName())
	assert.Equal(t, "tool-result-call-1", res.ID())
}

func TestUnknownToolOnQueueMessage(t *testing.T) {
	numbered := func(n int) []string {
		names := make([]string, 0, n)
		for i := n; i > 0; i-- {
			names = append(names, fmt.Sprintf("t%02d", i))
		}
		return names
	}
	long64 := func(prefix byte) string { return string(prefix) + strings.Repeat("x", 63) }
	var wide []string // 20 names of 64 bytes: more than the message bound holds
	for c := byte('a'); c < 'a'+20; c++ {
		wide = append(wide, long64(c))
	}
	tests := []struct {
		name  string
		tool  string
		queue string
		tools []string
		want  string
	}{
		{
			name: "tools sorted", tool: "forecast", queue: "weather", tools: []string{"echo", "add", "lookup"},
			want: `Unknown Tool "forecast" on task queue "weather"; this worker has: add, echo, lookup`,
		},
		{
			name: "no tools", tool: "forecast", queue: "weather", tools: nil,
			want: `Unknown Tool "forecast" on task queue "weather"; this worker has no tools`,
		},
		{
			name: "exactly 20", tool: "x", queue: "q", tools: numbered(20),
			want: `Unknown Tool "x" on task queue "q"; this worker has: ` +
				"t01, t02, t03, t04, t05, t06, t07, t08, t09, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19, t20",
		},
		{
			name: "more than 20", tool: "x", queue: "q", tools: numbered(25),
			want: `Unknown Tool "x" on task queue "q"; this worker has: ` +
				"t01, t02, t03, t04, t05, t06, t07, t08, t09, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19, t20 and 5 more",
		},
		{
			name: "long queue is cut", tool: "x", queue: strings.Repeat("q", 300), tools: []string{"add"},
			want: `Unknown Tool "x" on task queue "` + strings.Repeat("q", toolcore.MaxNameBytes-len("…")) + `…"; this worker has: add`,
		},
		{
			name: "invalid UTF-8 is replaced", tool: "x\xff", queue: "q\xfe", tools: []string{"add"},
			want: "Unknown Tool \"x\uFFFD\" on task queue \"q\uFFFD\"; this worker has: add",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, toolcore.UnknownToolOnQueueMessage(tt.tool, tt.queue, tt.tools))
		})
	}

	t.Run("wide names stop before the message bound", func(t *testing.T) {
		msg := toolcore.UnknownToolOnQueueMessage(strings.Repeat("n", toolcore.MaxNameBytes), strings.Repeat("q", 1000), wide)
		assert.LessOrEqual(t, utf8.RuneCountInString(msg), toolcore.MaxErrorTextCodePoints)
		assert.Regexp(t, ` and \d+ more$`, msg, "the count of the unlisted tools is never cut")
		assert.Contains(t, msg, long64('a'), "at least one tool is listed")
	})

	t.Run("tools are not modified", func(t *testing.T) {
		tools := []string{"b", "a"}
		toolcore.UnknownToolOnQueueMessage("x", "q", tools)
		assert.Equal(t, []string{"b", "a"}, tools)
	})
}

func TestNotFoundOnQueueResult(t *testing.T) {
	res := toolcore.NotFoundOnQueueResult(contractCall(t, "nope", `{}`, "call-1"), "weather", []string{"echo", "add"})

	assert.Equal(t, `{"error":{"code":"TOOL_NOT_FOUND","message":"Unknown Tool \"nope\" on task queue \"weather\"; this worker has: add, echo"}}`, res.Content())
	assert.Equal(t, toolcore.CodeToolNotFound, res.ErrorCode())
	assert.True(t, strings.HasPrefix(res.ErrorMessage(), toolcore.UnknownToolMessage("nope")), "starts like the in-process message")
	assert.Equal(t, "tool-result-call-1", res.ID())
}

func TestLinkContent(t *testing.T) {
	call := contractCall(t, "add", `{}`, "call-1")
	capped := strings.Repeat("x", toolcore.MaxContentCodePoints-utf8.RuneCountInString(toolcore.TruncationMarker)) + toolcore.TruncationMarker
	tests := []struct {
		name    string
		content string
		isError bool
		want    string
	}{
		{name: "small", content: `{"sum":42}`, want: `{"sum":42}`},
		{name: "error flag kept", content: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"x"}}`, isError: true, want: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"x"}}`},
		{name: "exactly the cap", content: strings.Repeat("é", toolcore.MaxContentCodePoints), want: strings.Repeat("é", toolcore.MaxContentCodePoints)},
		{name: "over the cap", content: strings.Repeat("x", 1<<20), want: capped},
		{name: "invalid UTF-8", content: "a\xffb", want: "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := toolcore.LinkContent(call, tt.content, tt.isError)

			assert.Equal(t, tt.want, res.Content())
			assert.Equal(t, tt.isError, res.IsError())
			assert.Equal(t, "call-1", res.ToolCallID())
		})
	}
}

func TestResultErrorCodeOfSuccessIsZero(t *testing.T) {
	res := toolcore.SuccessResult(contractCall(t, "add", `{}`, "call-1"), `{"error":{"code":"TOOL_NOT_FOUND","message":"x"}}`)

	assert.Equal(t, toolcore.ErrorCode(0), res.ErrorCode())
	assert.Empty(t, res.ErrorMessage())
	assert.False(t, res.IsZero())
	assert.True(t, toolcore.Result{}.IsZero())
}
