package conformancetools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp/internal/conformancetools"
	"github.com/toolgate/toolgate/toolcore"
)

// answers are what the suite's clients answer each method.
var answers = map[string]string{
	toolcore.MethodElicit:    `{"action": "accept", "content": {"name": "Alice", "color": "blue", "ok": true}}`,
	toolcore.MethodSample:    `{"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "test-model"}`,
	toolcore.MethodListRoots: `{"roots": [{"uri": "file:///work", "name": "work"}]}`,
}

// The fixtures that ask ask what the suite's scenarios expect (their keys and methods are what
// the scenarios answer), and finish with the answers.
func TestInputFixturesAskWhatTheScenariosAnswer(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []string // key and method of each question, in order
		text string   // in the result
	}{
		{"elicitation", "test_input_required_result_elicitation", []string{"user_name " + toolcore.MethodElicit}, "Hello, Alice!"},
		{"sampling", "test_input_required_result_sampling", []string{"capital_question " + toolcore.MethodSample}, "Paris"},
		{"roots", "test_input_required_result_list_roots", []string{"client_roots " + toolcore.MethodListRoots}, "file:///work"},
		{"request state", "test_input_required_result_request_state", []string{"confirm " + toolcore.MethodElicit}, "state-ok"},
		{"tampered state", "test_input_required_result_tampered_state", []string{"confirm " + toolcore.MethodElicit}, "state-ok"},
		{"multiple", "test_input_required_result_multiple_inputs",
			[]string{"client_roots " + toolcore.MethodListRoots, "greeting " + toolcore.MethodSample, "user_name " + toolcore.MethodElicit}, "Paris, Alice"},
		{"multi round", "test_input_required_result_multi_round", []string{"step1 " + toolcore.MethodElicit, "step2 " + toolcore.MethodElicit}, "Alice likes blue"},
		{"capabilities", "test_input_required_result_capabilities", []string{"capital_question " + toolcore.MethodSample}, "Paris"},
		{"missing capability", "test_missing_capability", []string{"capital_question " + toolcore.MethodSample}, "Paris"},
		{"streaming elicitation", "test_streaming_elicitation", []string{"user_name " + toolcore.MethodElicit}, "Hello, Alice!"},
		{"task", "test_tool_with_task", []string{"user_name " + toolcore.MethodElicit}, "Hello, Alice!"},
		{"two at once", "multi_input", []string{"first " + toolcore.MethodElicit, "second " + toolcore.MethodElicit}, "Hello, Alice and Alice!"},
		{"sampling 2025", "test_sampling", []string{"sample " + toolcore.MethodSample}, "LLM response: Paris"},
		{"elicitation 2025", "test_elicitation", []string{"user_info " + toolcore.MethodElicit}, "User response: action=accept"},
		{"defaults", "test_elicitation_sep1034_defaults", []string{"defaults " + toolcore.MethodElicit}, "Elicitation completed: action=accept"},
		{"enums", "test_elicitation_sep1330_enums", []string{"enums " + toolcore.MethodElicit}, "Elicitation completed: action=accept"},
	}
	reg, err := conformancetools.Registry(conformancetools.Options{})
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			args := map[string]string{"test_sampling": `{"prompt": "p"}`, "test_elicitation": `{"message": "m"}`}[tt.give]
			if args == "" {
				args = `{}`
			}
			call, err := toolcore.NewToolCall("call-1", tt.give, []byte(args))
			require.NoError(t, err)
			res, err := toolcore.ExecuteWith(t.Context(), reg, call, toolcore.ExecuteOptions{
				Input: func(_ context.Context, key string, req toolcore.InputRequest) (json.RawMessage, error) {
					asked = append(asked, key+" "+req.Method)
					return json.RawMessage(answers[req.Method]), nil
				},
			})
			require.NoError(t, err)
			sort.Strings(asked)
			assert.Equal(t, tt.want, asked)
			assert.False(t, res.IsError(), res.Content())
			assert.Contains(t, res.Content(), tt.text)
		})
	}
}

// The arguments the suite sends are accepted; test_elicitation and test_sampling pass theirs on.
func TestFixturesTakeTheSuitesArguments(t *testing.T) {
	reg, err := conformancetools.Registry(conformancetools.Options{})
	require.NoError(t, err)
	for _, name := range []string{"test_simple_text", "test_error_handling", "greet", "test_custom_header", "json_schema_2020_12_tool"} {
		_, ok := reg.Get(name)
		assert.True(t, ok, "the registry has %s", name)
	}
	var prompt string
	call, err := toolcore.NewToolCall("call-2", "test_sampling", []byte(`{"prompt": "Test prompt for sampling"}`))
	require.NoError(t, err)
	_, err = toolcore.ExecuteWith(t.Context(), reg, call, toolcore.ExecuteOptions{
		Input: func(_ context.Context, _ string, req toolcore.InputRequest) (json.RawMessage, error) {
			var p toolcore.SamplingRequest
			require.NoError(t, json.Unmarshal(req.Params, &p))
			prompt = p.Messages[0].Content.Text
			return json.RawMessage(answers[req.Method]), nil
		},
	})
	require.NoError(t, err)
	assert.Equal(t, "Test prompt for sampling", prompt)

	call, err = toolcore.NewToolCall("call-3", "test_simple_text", []byte(`{}`))
	require.NoError(t, err)
	res, err := toolcore.Execute(t.Context(), reg, call)
	require.NoError(t, err)
	assert.Equal(t, conformancetools.SimpleText, res.Content())
}

// The content fixtures' bytes are what they say: a 1x1 PNG and a RIFF WAVE.
func TestContentFixtureBytes(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(conformancetools.RedPixelPNG()))
	require.NoError(t, err)
	assert.Equal(t, 1, img.Bounds().Dx())
	r, g, b, a := img.At(0, 0).RGBA()
	assert.Equal(t, []uint32{0xffff, 0, 0, 0xffff}, []uint32{r, g, b, a})
	wav := conformancetools.SilentWAV()
	require.Len(t, wav, 44+8)
	assert.Equal(t, "RIFF", string(wav[:4]))
	assert.Equal(t, "WAVE", string(wav[8:12]))
	assert.Equal(t, "data", string(wav[36:40]))
}
