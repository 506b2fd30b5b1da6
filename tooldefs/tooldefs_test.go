package tooldefs_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/tooldefs"
)

func info(sideEffect string, schema string) toolcore.ToolInfo {
	return toolcore.ToolInfo{
		Name: "lookup", Description: "Look it up.", SideEffect: sideEffect,
		InputSchema:    json.RawMessage(schema),
		DefinitionHash: "sha256:00",
	}
}

const closedSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"q":{"description":"Query.","type":"string"}},"required":["q"],"type":"object"}`

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestMCPAnnotationsFollowTheSideEffect(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"readOnly", `{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true}`},
		{"idempotent", `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true}`},
		{"unsafe", `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got := tooldefs.MCP(info(tt.give, closedSchema))
			assert.Equal(t, tt.want, encode(t, got.Annotations))
		})
	}
	got := encode(t, tooldefs.MCP(info("readOnly", closedSchema)))
	assert.Equal(t, `{"name":"lookup","description":"Look it up.","inputSchema":`+closedSchema+
		`,"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true}}`, got, "MCP keeps $schema")
}

func TestOpenAIShape(t *testing.T) {
	got, err := tooldefs.OpenAI(info("unsafe", closedSchema), tooldefs.OpenAIOptions{})
	require.NoError(t, err)
	assert.Equal(t, `{"type":"function","function":{"name":"lookup","description":"Look it up.",`+
		`"parameters":{"additionalProperties":false,"properties":{"q":{"description":"Query.","type":"string"}},"required":["q"],"type":"object"}}}`,
		encode(t, got), "non-strict by default: no strict member, no $schema")

	strict, err := tooldefs.OpenAI(info("unsafe", closedSchema), tooldefs.OpenAIOptions{Strict: true})
	require.NoError(t, err)
	assert.Contains(t, encode(t, strict), `"strict":true}`)
}

func TestOpenAIStrictRefusesSchemasItWouldNotAccept(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"open object", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, `parameters: "additionalProperties" must be false`},
		{"optional property", `{"type":"object","additionalProperties":false,"properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}`, `property "n" must be required`},
		{"nested open object", `{"type":"object","additionalProperties":false,"properties":{"o":{"type":"object","properties":{}}},"required":["o"]}`, `parameters/properties/o: "additionalProperties" must be false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tooldefs.OpenAI(info("unsafe", tt.schema), tooldefs.OpenAIOptions{Strict: true})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = tooldefs.OpenAI(info("unsafe", tt.schema), tooldefs.OpenAIOptions{})
			assert.NoError(t, err, "non-strict takes any schema")
		})
	}
}

func TestAnthropicShape(t *testing.T) {
	got, err := tooldefs.Anthropic(info("unsafe", closedSchema))
	require.NoError(t, err)
	assert.Equal(t, `{"name":"lookup","description":"Look it up.","input_schema":{"additionalProperties":false,"properties":{"q":{"description":"Query.","type":"string"}},"required":["q"],"type":"object"}}`, encode(t, got))
}

func TestRender(t *testing.T) {
	infos := []toolcore.ToolInfo{info("unsafe", closedSchema)}
	for _, f := range []tooldefs.Format{tooldefs.FormatMCP, tooldefs.FormatOpenAI, tooldefs.FormatAnthropic} {
		out, err := tooldefs.Render(infos, f, tooldefs.OpenAIOptions{})
		require.NoError(t, err, f)
		assert.Contains(t, encode(t, out), `"name":"lookup"`, f)
	}
	_, err := tooldefs.Render(infos, "gemini", tooldefs.OpenAIOptions{})
	assert.ErrorContains(t, err, `unknown format "gemini"`)
}
