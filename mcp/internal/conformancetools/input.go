package conformancetools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/toolcore"
)

// nameSchema is the form of a question for a name.
const nameSchema = `{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}`

// okSchema is the form of a confirmation.
const okSchema = `{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}`

// askName asks the caller's human their name under key and returns it.
func askName(ctx context.Context, key, message string) (string, error) {
	r, err := toolcore.Elicit(ctx, key, toolcore.Elicitation{Message: message, RequestedSchema: json.RawMessage(nameSchema)})
	if err != nil {
		return "", err
	}
	name, _ := r.Content["name"].(string)
	return name, nil
}

// capitalTool is an Interactive tool that asks the caller's model the capital of France and
// returns the answer.
func capitalTool(name, description string) toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[noArgs]{Name: name, Description: description,
		Execute: func(ctx context.Context, _ noArgs) (any, error) {
			answer, err := askCapital(ctx, "capital_question")
			if err != nil {
				return nil, err
			}
			return toolcore.Text("The model answered: " + answer), nil
		},
		Options: interactive})
}

// askCapital asks the caller's model the capital of France under key and returns its answer.
func askCapital(ctx context.Context, key string) (string, error) {
	r, err := toolcore.Sample(ctx, key, toolcore.SamplingRequest{MaxTokens: 100,
		Messages: []toolcore.SamplingMessage{{Role: "user", Content: toolcore.TextContent{Text: "What is the capital of France?"}}}})
	return r.Text(), err
}

// rootURIs returns the URIs of roots, comma-separated.
func rootURIs(roots []toolcore.Root) string {
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", ")
}

// elicited is how the elicitation fixtures of 2025-11-25 report the answer.
func elicited(prefix string, r toolcore.ElicitResult) (any, error) {
	content, err := json.Marshal(r.Content)
	if err != nil {
		return nil, err
	}
	return toolcore.Text(fmt.Sprintf("%saction=%s, content=%s", prefix, r.Action, content)), nil
}

// interactive is the options of a fixture that asks and has no effect.
var interactive = toolcore.Options{SideEffect: toolcore.ReadOnly, Interactive: true}

// inputTools are the fixtures that ask their caller mid-run (toolcore.Ask and its helpers): the
// input-required-result-* scenarios' at 2026-07-28 (answered by retrying with inputResponses),
// the sampling and elicitation scenarios' at 2025-11-25 (requests on the call's stream), the
// diagnostic tools of server-stateless, and the tasks scenarios' that ask.
func inputTools() []toolcore.Tool {
	type promptArgs struct {
		Prompt string `json:"prompt"`
	}
	type messageArgs struct {
		Message string `json:"message"`
	}
	return []toolcore.Tool{
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_input_required_result_elicitation", Description: "Asks the caller's name, then greets them.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				name, err := askName(ctx, "user_name", "What is your name?")
				if err != nil {
					return nil, err
				}
				return toolcore.Text("Hello, " + name + "!"), nil
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_input_required_result_sampling", Description: "Asks the caller's model the capital of France.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				answer, err := askCapital(ctx, "capital_question")
				if err != nil {
					return nil, err
				}
				return toolcore.Text("The model answered: " + answer), nil
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_input_required_result_list_roots", Description: "Asks the caller's roots and names them.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				roots, err := toolcore.ListRoots(ctx, "client_roots")
				if err != nil {
					return nil, err
				}
				return toolcore.Text(fmt.Sprintf("%d roots: %s", len(roots), rootURIs(roots))), nil
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_input_required_result_request_state", Description: "Asks for a confirmation, kept across rounds by the request state.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				r, err := toolcore.Elicit(ctx, "confirm", toolcore.Elicitation{Message: "Please confirm", RequestedSchema: json.RawMessage(okSchema)})
				if err != nil {
					return nil, err
				}
				return toolcore.Text(fmt.Sprintf("state-ok: confirmed %v", r.Content["ok"])), nil
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_input_required_result_tampered_state", Description: "Asks for a confirmation; a tampered request state is refused.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				r, err := toolcore.Elicit(ctx, "confirm", toolcore.Elicitation{Message: "Please confirm", RequestedSchema: json.RawMessage(okSchema)})
				if err != nil {
					return nil, err
				}
				return toolcore.Text(fmt.Sprintf("state-ok: confirmed %v", r.Content["ok"])), nil
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_input_required_result_multiple_inputs", Description: "Asks a name, a greeting and the roots in one round.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				name, nameErr := askName(ctx, "user_name", "What is your name?")
				greeting, greetErr := toolcore.Sample(ctx, "greeting", toolcore.SamplingRequest{MaxTokens: 50,
					Messages: []toolcore.SamplingMessage{{Role: "user", Content: toolcore.TextContent{Text: "Generate a greeting"}}}})
				roots, rootsErr := toolcore.ListRoots(ctx, "client_roots")
				if err := errors.Join(nameErr, greetErr, rootsErr); err != nil {
					return nil, err
				}
				return toolcore.Text(fmt.Sprintf("%s, %s (roots: %s)", greeting.Text(), name, rootURIs(roots))), nil
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_input_required_result_multi_round", Description: "Asks a name, then a favorite color, in two rounds.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				name, err := askName(ctx, "step1", "Step 1: What is your name?")
				if err != nil {
					return nil, err
				}
				r, err := toolcore.Elicit(ctx, "step2", toolcore.Elicitation{Message: "Step 2: What is your favorite color?",
					RequestedSchema: json.RawMessage(`{"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}`)})
				if err != nil {
					return nil, err
				}
				return toolcore.Text(fmt.Sprintf("%s likes %v", name, r.Content["color"])), nil
			},
			Options: interactive}),
		// A toolgate tool does not see its caller's capabilities: it asks what it needs (here only
		// sampling, which the scenario's client declares), and the front refuses with -32021 a
		// question the client cannot answer (server-stateless, test_missing_capability).
		capitalTool("test_input_required_result_capabilities", "Asks the caller's model the capital of France."),
		// server-stateless's diagnostics: a tool relying on the client's sampling, and one that
		// elicits while it runs.
		capitalTool("test_missing_capability", "Needs the caller's sampling capability."),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_streaming_elicitation", Description: "Asks the caller's name while it runs.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				name, err := askName(ctx, "user_name", "What is your name?")
				if err != nil {
					return nil, err
				}
				return toolcore.Text("Hello, " + name + "!"), nil
			},
			Options: interactive}),
		// The tasks scenarios': a task-required tool that asks before its task (SEP-2663's
		// composition), and one that asks two questions at once (partial fulfillment).
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_tool_with_task", Description: "Asks the caller's name, then runs as a task.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				name, err := askName(ctx, "user_name", "What is your name?")
				if err != nil {
					return nil, err
				}
				return toolcore.Text("Hello, " + name + "!"), nil
			},
			Options: interactive}),
		// multi_input runs JobTime before it asks, so the server has made it a task by then (as
		// the suite's fixture does: the task is created, then asks from within).
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "multi_input", Description: "Asks two names at once.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				if err := sleep(ctx, JobTime); err != nil {
					return nil, err
				}
				first, firstErr := askName(ctx, "first", "First name?")
				second, secondErr := askName(ctx, "second", "Second name?")
				if err := errors.Join(firstErr, secondErr); err != nil {
					return nil, err
				}
				return toolcore.Text("Hello, " + first + " and " + second + "!"), nil
			},
			Options: interactive}),
		// 2025-11-25's sampling and elicitation fixtures.
		toolcore.MustDefine(toolcore.Definition[promptArgs]{Name: "test_sampling", Description: "Asks the caller's model the prompt.",
			Execute: func(ctx context.Context, a promptArgs) (any, error) {
				r, err := toolcore.Sample(ctx, "sample", toolcore.SamplingRequest{MaxTokens: 100,
					Messages: []toolcore.SamplingMessage{{Role: "user", Content: toolcore.TextContent{Text: a.Prompt}}}})
				if err != nil {
					return nil, err
				}
				return toolcore.Text("LLM response: " + r.Text()), nil
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[messageArgs]{Name: "test_elicitation", Description: "Asks the caller's human the message.",
			Execute: func(ctx context.Context, a messageArgs) (any, error) {
				r, err := toolcore.Elicit(ctx, "user_info", toolcore.Elicitation{Message: a.Message, RequestedSchema: json.RawMessage(`{
					"type": "object",
					"properties": {
						"username": {"type": "string", "description": "User's response"},
						"email": {"type": "string", "description": "User's email address"}
					},
					"required": ["username", "email"]}`)})
				if err != nil {
					return nil, err
				}
				return elicited("User response: ", r)
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_elicitation_sep1034_defaults", Description: "Asks a form whose fields have defaults (SEP-1034).",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				r, err := toolcore.Elicit(ctx, "defaults", toolcore.Elicitation{Message: "Please review your profile", RequestedSchema: json.RawMessage(`{
					"type": "object",
					"properties": {
						"name": {"type": "string", "default": "John Doe"},
						"age": {"type": "integer", "default": 30},
						"score": {"type": "number", "default": 95.5},
						"status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
						"verified": {"type": "boolean", "default": true}
					}}`)})
				if err != nil {
					return nil, err
				}
				return elicited("Elicitation completed: ", r)
			},
			Options: interactive}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_elicitation_sep1330_enums", Description: "Asks a form of the five enum variants (SEP-1330).",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				r, err := toolcore.Elicit(ctx, "enums", toolcore.Elicitation{Message: "Please choose", RequestedSchema: json.RawMessage(`{
					"type": "object",
					"properties": {
						"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
						"titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
						"legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
						"untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
						"titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}
					}}`)})
				if err != nil {
					return nil, err
				}
				return elicited("Elicitation completed: ", r)
			},
			Options: interactive}),
	}
}
