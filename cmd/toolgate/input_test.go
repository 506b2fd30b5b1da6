package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// A form of every primitive type, in an order the prompt must keep, and a message a tool wrote
// with a terminal escape sequence in it.
const (
	testSchema = `{"type":"object","properties":{
		"confirm":{"type":"boolean","title":"Confirm","description":"Delete them?"},
		"count":{"type":"integer","minimum":1,"maximum":5},
		"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},
		"size":{"type":"string","enum":["s","m"]},
		"ratio":{"type":"number"},
		"note":{"type":"string","default":"none"}},
		"required":["confirm","count","color"]}`
	testMessage = "Delete 3 resources?\x1b]8;;http://evil\x1b\\"
)

// inputEvent is a round of every kind of question.
func inputEvent(t *testing.T) tgclient.InputEvent {
	t.Helper()
	el, err := json.Marshal(toolcore.Elicitation{Message: testMessage, RequestedSchema: json.RawMessage(testSchema)})
	require.NoError(t, err)
	sample, err := json.Marshal(toolcore.SamplingRequest{MaxTokens: 50, SystemPrompt: "be brief",
		Messages: []toolcore.SamplingMessage{{Role: "user", Content: toolcore.TextContent{Type: "text", Text: "summarize\x1b[2J"}}}})
	require.NoError(t, err)
	deadline := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	return tgclient.InputEvent{WorkflowID: "toolcall-c1", ToolName: "deploy", Round: 2, Deadline: deadline,
		Requests: map[string]toolcore.InputRequest{
			"a.form":    {Method: toolcore.MethodElicit, Params: el},
			"b.summary": {Method: toolcore.MethodSample, Params: sample},
			"c.roots":   {Method: toolcore.MethodListRoots, Params: json.RawMessage(`{}`)},
		},
		Callbacks: map[string]time.Time{"paid": deadline.Add(-time.Hour)},
	}
}

// The prompt asks each question in key order and each form field in the schema's order, asks
// again after a malformed value, and answers with MCP's result shapes; everything the tool wrote
// is shown escaped, and a callback is only shown.
func TestPromptAnswersEveryMethod(t *testing.T) {
	stdin := strings.Join([]string{
		"x", "a", // an unknown action, then accept
		"maybe", "y", // boolean
		"9", "3", // out of range, then an integer in range
		"Green", // a titled choice by its title
		"2",     // an enum by its number
		"0.5",   // number
		"",      // optional with a default
		"It is fine.",
		"yes",
	}, "\n") + "\n"
	var out bytes.Buffer
	p := &inputPrompter{out: &out, lines: newLineReader(strings.NewReader(stdin)), dir: "/home/al ice/proj", clear: func() {}}
	answers, err := p.hook(context.Background(), inputEvent(t))
	require.NoError(t, err)
	assert.JSONEq(t, `{"action":"accept","content":{"confirm":true,"count":3,"color":"g","size":"m","ratio":0.5,"note":"none"}}`, string(answers["a.form"]))
	assert.JSONEq(t, `{"role":"assistant","model":"human","stopReason":"endTurn","content":{"type":"text","text":"It is fine."}}`, string(answers["b.summary"]))
	assert.JSONEq(t, `{"roots":[{"uri":"file:///home/al%20ice/proj","name":"proj"}]}`, string(answers["c.roots"]))
	assert.NotContains(t, answers, "paid", "a callback is never answered here")

	text := out.String()
	assertNoRaw(t, text)
	for _, want := range []string{
		"toolgate: deploy asks for input (round 2) until 2026-12-06T10:00:00Z",
		"  paid waits for a callback to its URL until 2026-12-06T09:00:00Z (nothing to answer here)",
		`  a.form: Delete 3 resources?\u001b]8;;http://evil\u001b\`,
		"  a.form.confirm (boolean, required) Confirm Delete them? [y/n]: ",
		"  a.form.confirm: answer y or n",
		"  a.form.count: 9 is out of range [1, 5]",
		"  a.form.color (string, required) 1) Red 2) Green [1-2]: ",
		`  a.form.note (string) (empty: "none"): `,
		"  b.summary: system: be brief",
		`  b.summary: user: summarize\u001b[2J`,
		"  c.roots: the tool asks for your roots: share file:///home/al%20ice/proj? [y/N]: ",
	} {
		assert.Contains(t, text, want)
	}
	assert.Less(t, strings.Index(text, "a.form.confirm"), strings.Index(text, "a.form.count"), "fields in the schema's order")
	assert.Less(t, strings.Index(text, "a.form.count"), strings.Index(text, "a.form.color"), "fields in the schema's order")
}

// Declining: an elicitation declined or canceled carries no content, an empty sampling reply
// declines, roots not shared are an empty list.
func TestPromptDeclines(t *testing.T) {
	var out bytes.Buffer
	p := &inputPrompter{out: &out, lines: newLineReader(strings.NewReader("d\n\nn\n")), dir: "/tmp", clear: func() {}}
	answers, err := p.hook(context.Background(), inputEvent(t))
	require.NoError(t, err)
	assert.JSONEq(t, `{"action":"decline"}`, string(answers["a.form"]))
	assert.JSONEq(t, `{"role":"assistant","model":"human","stopReason":"declined","content":{"type":"text","text":""}}`, string(answers["b.summary"]))
	assert.JSONEq(t, `{"roots":[]}`, string(answers["c.roots"]))
}

// A prompt gives up, answering nothing, when its round ends (the hook's ctx) or stdin closes:
// the questions are left for another answerer.
func TestPromptGivesUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	never, unwritten := io.Pipe()
	t.Cleanup(func() { _ = unwritten.Close() })
	blocked := &inputPrompter{out: &bytes.Buffer{}, lines: newLineReader(never), clear: func() {}}
	done := make(chan error, 1)
	go func() {
		_, err := blocked.hook(ctx, inputEvent(t))
		done <- err
	}()
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)

	closed := &inputPrompter{out: &bytes.Buffer{}, lines: newLineReader(strings.NewReader("a\n")), clear: func() {}}
	answers, err := closed.hook(context.Background(), inputEvent(t))
	assert.ErrorIs(t, err, errStdinClosed)
	assert.Nil(t, answers)
}

// Without a prompt, the call prints each question and the answer command, escaped, once a round.
func TestInputNoticeShowsHowToAnswer(t *testing.T) {
	var lines []string
	hook := inputNotice(func(s string) { lines = append(lines, s) })
	answers, err := hook(context.Background(), inputEvent(t))
	require.NoError(t, err)
	assert.Nil(t, answers)
	text := strings.Join(lines, "\n")
	assertNoRaw(t, text)
	assert.Equal(t, "toolgate: deploy asks for input (round 2) until 2026-12-06T10:00:00Z; the call waits for the answers, Ctrl-C cancels it", lines[0])
	assert.Contains(t, text, `  a.form: elicitation/create "Delete 3 resources?\x1b]8;;http://evil\x1b\\", fields confirm (boolean), count (integer), color (one of r|g), size (one of s|m), ratio (number), note (string)`)
	assert.Contains(t, text, `  b.summary: sampling/createMessage "summarize\x1b[2J"`)
	assert.Contains(t, text, "  c.roots: roots/list")
	assert.Contains(t, text, "  paid: toolgate/callback, waits for a request to its URL until 2026-12-06T09:00:00Z")
	assert.Contains(t, text, "  answer: toolgate answer toolcall-c1 a.form=accept b.summary='<result JSON>' c.roots='<result JSON>' [--field NAME=VALUE ...]")
}

// answer's KEY=ANSWER arguments: actions, --field values typed by the form's schema, whole JSON
// results; and what it refuses before sending, saying why.
func TestBuildAnswers(t *testing.T) {
	ev := inputEvent(t)
	st := wire.InputState{Waiting: true, Round: 2, Requests: ev.Requests}
	st.Requests["paid"] = toolcore.InputRequest{Method: toolcore.MethodCallback, Params: json.RawMessage(`{}`)}
	tests := []struct {
		name    string
		args    []string
		fields  []string
		want    map[string]string
		wantErr string
	}{
		{name: "accept with typed fields", args: []string{"a.form=accept"}, fields: []string{"confirm=yes", "count=2", "color=1", "ratio=1e-3"},
			want: map[string]string{"a.form": `{"action":"accept","content":{"confirm":true,"count":2,"color":"r","ratio":0.001}}`}},
		{name: "decline and a JSON result", args: []string{"a.form=cancel", `c.roots={"roots":[]}`},
			want: map[string]string{"a.form": `{"action":"cancel"}`, "c.roots": `{"roots":[]}`}},
		{name: "unknown key", args: []string{"nope=decline"}, wantErr: "round 2 asks no question nope (it asks a.form, b.summary, c.roots, paid)"},
		{name: "callback", args: []string{`paid={"body":""}`}, wantErr: "paid waits for a callback: only a request to its URL answers it"},
		{name: "an action for sampling", args: []string{"b.summary=accept"}, wantErr: "b.summary is a sampling/createMessage request: its answer is the JSON result"},
		{name: "not an object", args: []string{"c.roots=[1]"}, wantErr: "c.roots: the answer is accept, decline, cancel or a JSON object"},
		{name: "missing required field", args: []string{"a.form=accept"}, fields: []string{"confirm=y"},
			wantErr: "a.form: the form requires count (integer): give --field count=VALUE"},
		{name: "malformed field", args: []string{"a.form=accept"}, fields: []string{"confirm=perhaps"}, wantErr: "a.form: --field confirm: answer y or n"},
		{name: "unknown field", args: []string{"a.form=accept"}, fields: []string{"colour=r"}, wantErr: "a.form: --field colour: the form has no such field"},
		{name: "fields without accept", args: []string{"a.form=decline"}, fields: []string{"confirm=y"}, wantErr: "--field goes with one KEY=accept"},
		{name: "answered twice", args: []string{"a.form=decline", "a.form=cancel"}, wantErr: "a.form is answered twice"},
		{name: "no equals sign", args: []string{"a.form"}, wantErr: "a.form: an answer is KEY=ANSWER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildAnswers(st, tt.args, tt.fields)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, got, len(tt.want))
			for k, v := range tt.want {
				assert.JSONEq(t, v, string(got[k]), k)
			}
		})
	}
}

// status shows a call's wait for input: the round, each question (escaped), the command that
// answers; and says when no worker answered the query; --json carries the state whole.
func TestStatusOfCallAwaitingInput(t *testing.T) {
	ev := inputEvent(t)
	since := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	in := &wire.InputState{Waiting: true, Round: 2, Requests: ev.Requests, Since: since, Deadline: ev.Deadline}
	in.Requests["paid"] = toolcore.InputRequest{Method: toolcore.MethodCallback, Params: json.RawMessage(`{"expires":"2026-12-06T09:30:00Z","tokenSha256":"ab"}`)}
	st := tgclient.Status{WorkflowID: "toolcall-c1", State: tgclient.Running, Input: in}
	var text bytes.Buffer
	require.NoError(t, writeStatus(&text, st, nil, false))
	assertNoRaw(t, text.String())
	for _, want := range []string{
		"input     awaiting input (round 2) since 2026-12-06T09:00:00Z until 2026-12-06T10:00:00Z\n",
		`question  a.form: elicitation/create "Delete 3 resources?\x1b]8;;http://evil\x1b\\", fields confirm (boolean)`,
		"question  paid: toolgate/callback, waits for a request to its URL until 2026-12-06T09:30:00Z\n",
		"answer    toolgate answer toolcall-c1 a.form=accept b.summary='<result JSON>' c.roots='<result JSON>'",
	} {
		assert.Contains(t, text.String(), want)
	}

	text.Reset()
	st.Input = &wire.InputState{Waiting: true}
	require.NoError(t, writeStatus(&text, st, nil, false))
	assert.Contains(t, text.String(), "input     awaiting input (no worker answered the query; the questions show once one does)\n")
	assert.NotContains(t, text.String(), "answer ")

	text.Reset()
	st.Input = in
	require.NoError(t, writeStatus(&text, st, nil, true))
	var got statusJSON
	require.NoError(t, json.Unmarshal(text.Bytes(), &got))
	require.NotNil(t, got.Input)
	assert.Equal(t, 2, got.Input.Round)
	assert.JSONEq(t, string(in.Requests["a.form"].Params), string(got.Input.Requests["a.form"].Params), "--json carries the question as it is")
}

// --prompt: auto prompts only on a terminal, always needs stdin free of the call, a typo is
// refused.
func TestCallPromptMode(t *testing.T) {
	tests := []struct {
		prompt      string
		callOnStdin bool
		want        bool
		wantErr     bool
	}{
		{prompt: promptAuto, want: false}, // a strings.Reader is no terminal
		{prompt: promptAlways, want: true},
		{prompt: promptAlways, callOnStdin: true, wantErr: true},
		{prompt: promptNever, want: false},
		{prompt: "sometimes", wantErr: true},
	}
	for _, tt := range tests {
		got, err := callOptions{prompt: tt.prompt}.prompting(tt.callOnStdin, strings.NewReader(""))
		assert.Equal(t, tt.wantErr, err != nil, "%s: %v", tt.prompt, err)
		assert.Equal(t, tt.want, got, tt.prompt)
	}
}
