package toolcore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

type schemaItem struct {
	Name string `json:"name" jsonschema:"description=The item's name"`
}

type schemaArgs struct {
	Left  json.Number  `json:"left" jsonschema:"description=Left operand"`
	Right int64        `json:"right"`
	Unit  string       `json:"unit,omitempty" jsonschema:"enum=s,enum=ms"`
	Items []schemaItem `json:"items,omitempty"`
}

type recursiveNode struct {
	Value int64          `json:"value"`
	Next  *recursiveNode `json:"next,omitempty"`
}

func schemaTool[A any](t *testing.T, d toolcore.Definition[A]) toolcore.Tool {
	t.Helper()
	d.Name, d.Description = "tool", "A tool."
	d.Execute = func(context.Context, A) (any, error) { return "ran", nil }
	tool, err := toolcore.Define(d)
	require.NoError(t, err)
	return tool
}

// validateArgs runs the tool's validator on arguments; it returns the accepted JSON or the reason.
func validateArgs(t *testing.T, tool toolcore.Tool, args string) (accepted, reason string) {
	t.Helper()
	call, err := toolcore.ParseToolCall([]byte(`{"type":"toolCall","id":"c1","name":"tool","arguments":` + args + `}`))
	require.NoError(t, err)
	raw, res, ok := tool.Validate(call)
	if ok {
		return string(raw), ""
	}
	var content struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &content))
	require.Equal(t, "TOOL_ARGUMENTS_INVALID", content.Error.Code, res.Content())
	return "", content.Error.Message
}

func TestGeneratedInputSchema(t *testing.T) {
	tool := schemaTool(t, toolcore.Definition[schemaArgs]{})
	want := `{"$defs":{"schemaItem":{"additionalProperties":false,"properties":{"name":{"description":"The item's name","type":"string"}},"required":["name"],"type":"object"}},` +
		`"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,` +
		`"properties":{"items":{"items":{"$ref":"#/$defs/schemaItem"},"type":"array"},"left":{"description":"Left operand","type":"number"},` +
		`"right":{"type":"integer"},"unit":{"enum":["s","ms"],"type":"string"}},"required":["left","right"],"type":"object"}`
	assert.JSONEq(t, want, string(tool.InputSchema()))
	assert.Equal(t, want, string(tool.InputSchema()), "canonical: keys sorted, no whitespace, no $id")
	again := schemaTool(t, toolcore.Definition[schemaArgs]{})
	assert.Equal(t, tool.InputSchema(), again.InputSchema(), "generation is deterministic")
	assert.Equal(t, tool.DefinitionHash(), again.DefinitionHash())
	assert.Nil(t, tool.OutputSchema())
}

func TestGeneratedSchemaOfRecursiveAndNonObjectTypes(t *testing.T) {
	rec := schemaTool(t, toolcore.Definition[recursiveNode]{})
	assert.Contains(t, string(rec.InputSchema()), `"next":{"$ref":"#"}`)
	accepted, reason := validateArgs(t, rec, `{"value":1,"next":{"value":2}}`)
	assert.Empty(t, reason)
	assert.Equal(t, `{"value":1,"next":{"value":2}}`, accepted)
	_, reason = validateArgs(t, rec, `{"value":1,"next":{"value":"x"}}`)
	assert.Equal(t, `"next/value": expected integer, got string`, reason)

	for _, tool := range []toolcore.Tool{
		schemaTool(t, toolcore.Definition[toolcore.Arguments]{Validate: toolcore.Accept[toolcore.Arguments]}),
		schemaTool(t, toolcore.Definition[int]{Validate: func(toolcore.Arguments) toolcore.Decision[int] { return toolcore.Accept(1) }}),
	} {
		assert.Equal(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, string(tool.InputSchema()))
	}
}

func TestSchemaValidatorReasons(t *testing.T) {
	tool := schemaTool(t, toolcore.Definition[schemaArgs]{})
	tests := []struct {
		name       string
		give       string
		wantReason string
		wantValue  string
	}{
		{name: "accepted", give: `{"left":1.5,"right":2}`, wantValue: `{"left":1.5,"right":2}`},
		{name: "integer beyond 2^53 stays exact", give: `{"left":9007199254740993,"right":9007199254740993}`, wantValue: `{"left":9007199254740993,"right":9007199254740993}`},
		{name: "wrong type", give: `{"left":"a","right":1}`, wantReason: `"left": expected number, got string`},
		{name: "missing", give: `{"right":1}`, wantReason: `"left" is required`},
		{name: "both missing", give: `{}`, wantReason: `"left", "right" are required`},
		{name: "fraction for an integer", give: `{"left":1,"right":1.5}`, wantReason: `"right": expected integer, got number`},
		{name: "1.0 is not an integer (exact rules of Arguments.Decode)", give: `{"left":1,"right":1.0}`, wantReason: `"right" must be an integer, got 1.0`},
		{name: "beyond int64", give: `{"left":1,"right":9223372036854775808}`, wantReason: `"right" must be an integer between -9223372036854775808 and 9223372036854775807, got 9223372036854775808`},
		{name: "unknown argument", give: `{"left":1,"right":1,"x":2}`, wantReason: `unknown argument "x"`},
		{name: "unknown arguments sorted", give: `{"left":1,"right":1,"x":2,"a":1}`, wantReason: `unknown arguments "a", "x"`},
		{name: "enum", give: `{"left":1,"right":1,"unit":"h"}`, wantReason: `"unit": must be one of "s", "ms", got "h"`},
		{name: "nested", give: `{"left":1,"right":1,"items":[{"name":"a"},{"name":3}]}`, wantReason: `"items/1/name": expected string, got number`},
		{name: "parent location first", give: `{"right":"x"}`, wantReason: `"left" is required`},
		{name: "huge exponent refused before the schema runs", give: `{"left":1e99999,"right":1}`, wantReason: `"left": the exponent of 1e99999 is beyond ±999`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			accepted, reason := validateArgs(t, tool, tt.give)
			assert.Equal(t, tt.wantReason, reason)
			assert.Equal(t, tt.wantValue, accepted)
		})
	}
}

func TestSchemaValidatorReasonIsStable(t *testing.T) {
	tool := schemaTool(t, toolcore.Definition[schemaArgs]{})
	_, first := validateArgs(t, tool, `{"left":"a","right":"b","unit":7,"zz":1,"items":3}`)
	for range 50 {
		_, reason := validateArgs(t, tool, `{"left":"a","right":"b","unit":7,"zz":1,"items":3}`)
		require.Equal(t, first, reason)
	}
	assert.Equal(t, `unknown argument "zz"`, first, "the root location sorts before its members")
}

func TestCheckSchemaThenValidate(t *testing.T) {
	var seen []string
	tool := schemaTool(t, toolcore.Definition[schemaArgs]{
		CheckSchema: true,
		Validate: func(args toolcore.Arguments) toolcore.Decision[schemaArgs] {
			seen = append(seen, string(args.Raw()))
			return toolcore.Reject[schemaArgs]("validator says no")
		},
	})
	_, reason := validateArgs(t, tool, `{"left":"a","right":1}`)
	assert.Equal(t, `"left": expected number, got string`, reason)
	assert.Empty(t, seen, "Validate does not run when the schema rejects")
	_, reason = validateArgs(t, tool, `{"left":1,"right":1}`)
	assert.Equal(t, "validator says no", reason)

	alone := schemaTool(t, toolcore.Definition[schemaArgs]{
		Validate: func(toolcore.Arguments) toolcore.Decision[schemaArgs] { return toolcore.Accept(schemaArgs{}) },
	})
	accepted, reason := validateArgs(t, alone, `{"left":"a"}`)
	assert.Empty(t, reason, "without CheckSchema, Validate alone decides")
	assert.Equal(t, `{"left":0,"right":0}`, accepted)
}

func TestExplicitSchemas(t *testing.T) {
	in := `{ "type": "object", "properties": {"q": {"type": "string", "minLength": 1}}, "required": ["q"] }`
	tool := schemaTool(t, toolcore.Definition[toolcore.Arguments]{
		InputSchema:  json.RawMessage(in),
		OutputSchema: json.RawMessage(`{"type":"object"}`),
	})
	assert.Equal(t, `{"properties":{"q":{"minLength":1,"type":"string"}},"required":["q"],"type":"object"}`, string(tool.InputSchema()))
	assert.Equal(t, `{"type":"object"}`, string(tool.OutputSchema()))
	_, reason := validateArgs(t, tool, `{"q":""}`)
	assert.Equal(t, `"q": must have at least 1 characters, got 0`, reason)
	accepted, reason := validateArgs(t, tool, `{"q":"x"}`)
	assert.Empty(t, reason)
	assert.Equal(t, `{"q":"x"}`, accepted)

	out := tool.InputSchema()
	out[0] = 'X'
	assert.Equal(t, byte('{'), tool.InputSchema()[0], "InputSchema returns a copy")
}

func TestDefineRefusesBadSchemas(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		output  string
		wantMsg string
	}{
		{name: "not JSON", input: `{"type":`, wantMsg: "input schema"},
		{name: "not an object", input: `true`, wantMsg: "input schema must be a JSON object"},
		{name: "duplicate key", input: `{"type":"object","type":"object"}`, wantMsg: "duplicate"},
		{name: "does not compile", input: `{"type":"object","properties":{"a":{"type":"nope"}}}`, wantMsg: "input schema does not compile"},
		{name: "bad pattern", input: `{"type":"object","properties":{"a":{"pattern":"("}}}`, wantMsg: "input schema does not compile"},
		{name: "dangling $ref", input: `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, wantMsg: "input schema does not compile"},
		{name: "external $ref is not loaded", input: `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, wantMsg: "external schema references are not loaded"},
		{name: "top-level type not object", input: `{"type":"string"}`, wantMsg: `top-level "type" must be "object", got "string"`},
		{name: "top-level type missing", input: `{"properties":{}}`, wantMsg: `top-level "type" must be "object"`},
		{name: "output does not compile", input: `{"type":"object"}`, output: `{"type":7}`, wantMsg: "output schema does not compile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := toolcore.Definition[toolcore.Arguments]{
				Name: "tool", Description: "A tool.",
				Execute:     func(context.Context, toolcore.Arguments) (any, error) { return nil, nil },
				InputSchema: json.RawMessage(tt.input),
			}
			if tt.output != "" {
				d.OutputSchema = json.RawMessage(tt.output)
			}
			_, err := toolcore.Define(d)
			var ce *toolcore.ContractError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, toolcore.CodeInvalidToolDefinition, ce.Code)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestDefinitionHash(t *testing.T) {
	base := toolcore.Definition[toolcore.Arguments]{InputSchema: json.RawMessage(`{"type":"object"}`)}
	tool := schemaTool(t, base)
	// sha256 of {"inputSchema":{"type":"object"},"maxAttempts":1,"name":"tool","sideEffect":"unsafe"}
	assert.Equal(t, "sha256:aac95d2673ac4875d50443d368ff2e0afc0239bb27e2471740e4237300ef4929", tool.DefinitionHash())

	same := base
	same.InputSchema = json.RawMessage(` { "type" : "object" } `)
	same.Options.Timeout = 5 // timeouts are not part of the hash
	assert.Equal(t, tool.DefinitionHash(), schemaTool(t, same).DefinitionHash(), "whitespace and timeouts do not change the hash")

	changes := map[string]toolcore.Definition[toolcore.Arguments]{
		"schema":      {InputSchema: json.RawMessage(`{"type":"object","required":["a"]}`)},
		"side effect": {InputSchema: base.InputSchema, Options: toolcore.Options{SideEffect: toolcore.ReadOnly}},
	}
	for name, d := range changes {
		assert.NotEqual(t, tool.DefinitionHash(), schemaTool(t, d).DefinitionHash(), name)
	}
	assert.Empty(t, toolcore.Tool{}.DefinitionHash())
}

func TestToolInfo(t *testing.T) {
	tool := schemaTool(t, toolcore.Definition[toolcore.Arguments]{
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Options:     toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	infos := reg.Infos()
	require.Len(t, infos, 1)
	raw, err := json.Marshal(infos[0])
	require.NoError(t, err)
	assert.Equal(t, `{"name":"tool","description":"A tool.","sideEffect":"readOnly","inputSchema":{"type":"object"},"definitionHash":"`+tool.DefinitionHash()+`"}`, string(raw))
	assert.Equal(t, toolcore.ToolInfo{}, toolcore.Tool{}.Info())
}
