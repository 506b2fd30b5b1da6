package tooldefs

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/toolgate/toolgate/toolcore"
)

// MCPTool is an MCP Tool, as a tools/list result lists it.
type MCPTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  MCPAnnotations  `json:"annotations"`
}

// MCPAnnotations are the MCP ToolAnnotations toolgate can vouch for.
type MCPAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
}

// OpenAITool is an OpenAI Chat Completions function tool.
type OpenAITool struct {
	Type     string         `json:"type"` // always "function"
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function of an OpenAITool.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict is set only when strict mode was asked for (and the schema qualifies).
	Strict *bool `json:"strict,omitempty"`
}

// OpenAIOptions select OpenAI variants. The zero value gives non-strict tools.
type OpenAIOptions struct {
	// Strict asks for strict mode (structured outputs for arguments). Optional: default false.
	Strict bool
}

// AnthropicTool is an Anthropic Messages API tool.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// MCP renders info as an MCP Tool.
func MCP(info toolcore.ToolInfo) MCPTool {
	a := MCPAnnotations{DestructiveHint: true}
	switch info.SideEffect {
	case toolcore.ReadOnly.String():
		a = MCPAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	case toolcore.Idempotent.String():
		a.IdempotentHint = true
	}
	return MCPTool{
		Name:         info.Name,
		Description:  info.Description,
		InputSchema:  slices.Clone(info.InputSchema),
		OutputSchema: slices.Clone(info.OutputSchema),
		Annotations:  a,
	}
}

// OpenAI renders info as an OpenAI function tool. With opts.Strict, a schema that strict mode
// would refuse is an error naming the first reason.
func OpenAI(info toolcore.ToolInfo, opts OpenAIOptions) (OpenAITool, error) {
	params, err := withoutDialect(info.InputSchema)
	if err != nil {
		return OpenAITool{}, fmt.Errorf("tool %q: %w", info.Name, err)
	}
	fn := OpenAIFunction{Name: info.Name, Description: info.Description, Parameters: params}
	if opts.Strict {
		if reason := strictReason(params); reason != "" {
			return OpenAITool{}, fmt.Errorf("tool %q cannot use OpenAI strict mode: %s", info.Name, reason)
		}
		strict := true
		fn.Strict = &strict
	}
	return OpenAITool{Type: "function", Function: fn}, nil
}

// Anthropic renders info as an Anthropic tool.
func Anthropic(info toolcore.ToolInfo) (AnthropicTool, error) {
	schema, err := withoutDialect(info.InputSchema)
	if err != nil {
		return AnthropicTool{}, fmt.Errorf("tool %q: %w", info.Name, err)
	}
	return AnthropicTool{Name: info.Name, Description: info.Description, InputSchema: schema}, nil
}

// Format names an output format of Render.
type Format string

// Formats of Render.
const (
	FormatMCP       Format = "mcp"
	FormatOpenAI    Format = "openai"
	FormatAnthropic Format = "anthropic"
)

// Render renders every info in format, in the given order, as a JSON-encodable slice.
func Render(infos []toolcore.ToolInfo, format Format, opts OpenAIOptions) (any, error) {
	switch format {
	case FormatMCP:
		out := make([]MCPTool, 0, len(infos))
		for _, info := range infos {
			out = append(out, MCP(info))
		}
		return out, nil
	case FormatOpenAI:
		out := make([]OpenAITool, 0, len(infos))
		for _, info := range infos {
			t, err := OpenAI(info, opts)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	case FormatAnthropic:
		out := make([]AnthropicTool, 0, len(infos))
		for _, info := range infos {
			t, err := Anthropic(info)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown format %q (want mcp, openai or anthropic)", format)
}

// withoutDialect returns schema without its top-level "$schema" member, keys in the same order.
func withoutDialect(schema json.RawMessage) (json.RawMessage, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(schema, &members); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	if _, ok := members["$schema"]; !ok {
		return slices.Clone(schema), nil
	}
	delete(members, "$schema")
	return marshalSorted(members)
}

// marshalSorted encodes members with sorted keys and without HTML escaping.
func marshalSorted(members map[string]json.RawMessage) (json.RawMessage, error) {
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		out = append(out, kb...)
		out = append(out, ':')
		out = append(out, members[k]...)
	}
	return append(out, '}'), nil
}

// strictReason says why schema does not meet OpenAI strict mode's object rules, or "".
func strictReason(schema json.RawMessage) string {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return "schema is not JSON"
	}
	return strictWalk(v, "parameters")
}

func strictWalk(v any, at string) string {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok || x["type"] == "object" {
			if x["additionalProperties"] != false {
				return fmt.Sprintf(`%s: "additionalProperties" must be false`, at)
			}
			required := map[string]bool{}
			if list, ok := x["required"].([]any); ok {
				for _, r := range list {
					if s, ok := r.(string); ok {
						required[s] = true
					}
				}
			}
			names := make([]string, 0, len(props))
			for name := range props {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				if !required[name] {
					return fmt.Sprintf("%s: property %q must be required (strict mode has no optional properties)", at, name)
				}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if r := strictWalk(x[k], at+"/"+k); r != "" {
				return r
			}
		}
	case []any:
		for i, e := range x {
			if r := strictWalk(e, fmt.Sprintf("%s/%d", at, i)); r != "" {
				return r
			}
		}
	}
	return ""
}
