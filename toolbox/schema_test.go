package toolbox

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// TestToolboxSchemasDescribeEveryArgument checks what the model reads: every tool has an object
// input schema and an output schema, and every argument has a description.
func TestToolboxSchemasDescribeEveryArgument(t *testing.T) {
	tools, err := Tools(Config{Root: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, tools, 7)
	for _, tool := range tools {
		var in struct {
			Type       string                                  `json:"type"`
			Properties map[string]struct{ Description string } `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(tool.InputSchema(), &in), tool.Name())
		assert.Equal(t, "object", in.Type, tool.Name())
		assert.NotEmpty(t, in.Properties, tool.Name())
		for name, p := range in.Properties {
			assert.NotEmpty(t, p.Description, "%s.%s", tool.Name(), name)
		}
		assert.NotNil(t, tool.OutputSchema(), tool.Name())
		assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, tool.DefinitionHash())
	}
}

// schemaOnly defines a tool that checks only tool's input schema, to compare verdicts.
func schemaOnly(t *testing.T, tool toolcore.Tool) toolcore.Tool {
	t.Helper()
	s, err := toolcore.Define(toolcore.Definition[toolcore.Arguments]{
		Name: tool.Name(), Description: tool.Description(), InputSchema: tool.InputSchema(),
		Execute: func(context.Context, toolcore.Arguments) (any, error) { return nil, nil },
	})
	require.NoError(t, err)
	return s
}

// TestToolboxSchemasAgreeWithValidators: the schema shown to the model accepts what the
// validator accepts and refuses the plainly wrong shapes the validator refuses.
func TestToolboxSchemasAgreeWithValidators(t *testing.T) {
	tools, err := Tools(Config{Root: t.TempDir()})
	require.NoError(t, err)
	byName := map[string]toolcore.Tool{}
	for _, tool := range tools {
		byName[tool.Name()] = tool
	}
	tests := []struct {
		tool   string
		args   string
		accept bool
	}{
		{NameAdd, `{"left":20,"right":22}`, true},
		{NameAdd, `{"left":9007199254740993,"right":0.5}`, true},
		{NameAdd, `{"left":"20","right":22}`, false},
		{NameAdd, `{"left":1}`, false},
		{NameAdd, `{"left":1,"right":2,"third":3}`, false},
		{NameEcho, `{"text":"hi"}`, true},
		{NameEcho, `{"text":1}`, false},
		{NameSleep, `{"seconds":3}`, true},
		{NameSleep, `{"seconds":2.0}`, true},
		{NameSleep, `{"seconds":3601}`, false},
		{NameSleep, `{"seconds":1.5}`, false},
		{NameSleep, `{"seconds":-1}`, false},
		{NameHTTPGet, `{"url":"https://example.com/"}`, true},
		{NameHTTPGet, `{"url":""}`, false},
		{NameReadFile, `{"path":"a.txt"}`, true},
		{NameReadFile, `{"path":"a.txt","offset":10}`, true},
		{NameReadFile, `{"path":"a.txt","offset":-1}`, false},
		{NameReadFile, `{"offset":1}`, false},
		{NameListDir, `{}`, true},
		{NameListDir, `{"path":"."}`, true},
		{NameListDir, `{"path":""}`, false},
		{NameWriteFile, `{"path":"a.txt","content":""}`, true},
		{NameWriteFile, `{"path":"a.txt"}`, false},
		{NameWriteFile, `{"path":"","content":"x"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			call, err := toolcore.NewToolCall("c1", tt.tool, []byte(tt.args))
			require.NoError(t, err)
			_, res, validatorOK := byName[tt.tool].Validate(call)
			_, schemaRes, schemaOK := schemaOnly(t, byName[tt.tool]).Validate(call)
			assert.Equal(t, tt.accept, validatorOK, "validator: %s", res.Content())
			assert.Equal(t, tt.accept, schemaOK, "schema: %s", schemaRes.Content())
		})
	}
}
