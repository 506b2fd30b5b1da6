package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.temporal.io/sdk/activity"
)

// Message is one entry of the conversation the model sees.
type Message struct {
	// Role is "user", "assistant" or "tool".
	Role string `json:"role"`
	// Content is the text: the prompt, the model's text, or a tool result's content.
	Content string `json:"content,omitempty"`
	// ToolCalls are the assistant's tool calls, in wire JSON.
	ToolCalls []json.RawMessage `json:"toolCalls,omitempty"`
	// ToolCallID and IsError link a tool message to its call.
	ToolCallID string `json:"toolCallId,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
}

// Turn is what the model answers: text, and tool calls to run before its next turn (none ends
// the run).
type Turn struct {
	Text      string            `json:"text,omitempty"`
	ToolCalls []json.RawMessage `json:"toolCalls,omitempty"`
}

// Model is a language model behind the CallModel activity.
type Model interface {
	Next(ctx context.Context, conversation []Message) (Turn, error)
}

// ModelActivities runs the model as an activity.
type ModelActivities struct {
	Model Model
}

// CallModelName is the activity type of ModelActivities.CallModel.
const CallModelName = "CallModel"

// CallModel asks the model for its next turn.
func (a *ModelActivities) CallModel(ctx context.Context, conversation []Message) (Turn, error) {
	return a.Model.Next(ctx, conversation)
}

// ScriptedModel is a Model whose turns are a function of the conversation: deterministic, no
// network.
type ScriptedModel func(conversation []Message) (Turn, error)

// Next calls the script.
func (m ScriptedModel) Next(_ context.Context, conversation []Message) (Turn, error) {
	return m(conversation)
}

// Script is a scripted conversation: the model's i-th turn is Turns[i] (counting the assistant
// messages so far), whatever the tools answered. In a turn's Text, "{{<call ID>}}" stands for the
// content of that call's tool message, so a final answer can quote the results.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Model is a ScriptedModel that plays s; a turn past the last is an error.
func (s Script) Model() ScriptedModel {
	return func(conversation []Message) (Turn, error) {
		var results []string
		turn := 0
		for _, m := range conversation {
			switch m.Role {
			case "assistant":
				turn++
			case "tool":
				results = append(results, "{{"+m.ToolCallID+"}}", m.Content)
			}
		}
		if turn >= len(s.Turns) {
			return Turn{}, fmt.Errorf("the script has %d turns, the model was asked for turn %d", len(s.Turns), turn+1)
		}
		next := s.Turns[turn]
		next.Text = strings.NewReplacer(results...).Replace(next.Text)
		return next, nil
	}
}

// ArithmeticScript is the example's conversation: the first turn asks for add and echo in one
// round, the second answers with the sum it was given.
var ArithmeticScript = Script{Turns: []Turn{
	{Text: "Let me compute that.", ToolCalls: []json.RawMessage{
		json.RawMessage(`{"type":"toolCall","id":"call-add","name":"add","arguments":{"left":20,"right":22}}`),
		json.RawMessage(`{"type":"toolCall","id":"call-echo","name":"echo","arguments":{"text":"20 + 22"}}`),
	}},
	{Text: "20 + 22: the add tool says {{call-add}}."},
}}

// ArithmeticModel plays ArithmeticScript.
func ArithmeticModel() ScriptedModel { return ArithmeticScript.Model() }

func activityOptions(name string) activity.RegisterOptions {
	return activity.RegisterOptions{Name: name}
}
