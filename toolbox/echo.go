package toolbox

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/toolcore"
)

// echoArgs are echo's validated arguments.
type echoArgs struct {
	Text string `json:"text"`
}

// echoResult is echo's output: the text it was given.
type echoResult struct {
	Text string `json:"text"`
}

func echoTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[echoArgs]{
		Name:        NameEcho,
		Description: `Return the given text unchanged: {"text":"hi"} gives {"text":"hi"}.`,
		Validate:    validateEcho,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["text"],` +
			`"properties":{"text":{"type":"string","description":"The text to return."}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["text"],` +
			`"properties":{"text":{"type":"string","description":"The text given."}}}`),
		Execute: func(_ context.Context, a echoArgs) (any, error) {
			return echoResult(a), nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
}

func validateEcho(args toolcore.Arguments) toolcore.Decision[echoArgs] {
	f, reason := readFields(args, "text")
	if reason != "" {
		return toolcore.Reject[echoArgs](reason)
	}
	text, present, reason := f.str("text")
	switch {
	case reason != "":
		return toolcore.Reject[echoArgs](reason)
	case !present:
		return toolcore.Reject[echoArgs](fmt.Sprintf("%q is required", "text"))
	}
	return toolcore.Accept(echoArgs{Text: text})
}
