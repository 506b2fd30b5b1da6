package tooldefs_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/tooldefs"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"description=The city"`
}

func weatherRegistry() *toolcore.Registry {
	forecast := toolcore.MustDefine(toolcore.Definition[weatherArgs]{
		Name:        "forecast",
		Description: "Tomorrow's weather in a city.",
		Execute: func(_ context.Context, a weatherArgs) (any, error) {
			return map[string]string{"city": a.City, "forecast": "sunny"}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	registry, err := toolcore.NewRegistry(forecast)
	if err != nil {
		panic(err)
	}
	return registry
}

// The registry's tools as an OpenAI Chat Completions tools array (strict mode checked). The same
// works on a worker's catalog listed with client.ListTools.
func ExampleOpenAI() {
	for _, info := range weatherRegistry().Infos() {
		tool, err := tooldefs.OpenAI(info, tooldefs.OpenAIOptions{Strict: true})
		if err != nil { // a schema strict mode would refuse
			fmt.Println(err)
			return
		}
		out, _ := json.Marshal(tool)
		fmt.Println(string(out))
	}
	// Output:
	// {"type":"function","function":{"name":"forecast","description":"Tomorrow's weather in a city.","parameters":{"additionalProperties":false,"properties":{"city":{"description":"The city","type":"string"}},"required":["city"],"type":"object"},"strict":true}}
}

// Anthropic's Messages API tools and MCP tools/list entries, with the MCP hints taken from the
// side-effect class.
func ExampleRender() {
	infos := weatherRegistry().Infos()
	for _, format := range []tooldefs.Format{tooldefs.FormatAnthropic, tooldefs.FormatMCP} {
		tools, err := tooldefs.Render(infos, format, tooldefs.OpenAIOptions{})
		if err != nil {
			fmt.Println(err)
			return
		}
		out, _ := json.Marshal(tools)
		fmt.Println(string(out))
	}
	// Output:
	// [{"name":"forecast","description":"Tomorrow's weather in a city.","input_schema":{"additionalProperties":false,"properties":{"city":{"description":"The city","type":"string"}},"required":["city"],"type":"object"}}]
	// [{"name":"forecast","description":"Tomorrow's weather in a city.","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"city":{"description":"The city","type":"string"}},"required":["city"],"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true}}]
}
