package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// A call's tool may ask for input mid-run (docs/talkback.md): call prompts for the answers on a
// terminal (client.Options.OnInput), or prints the questions and the answer command; status
// shows them; answer sends answers. Everything a tool wrote (messages, titles, choices, URLs) is
// escaped with safetext before a human reads it.

// Values of call's --prompt.
const (
	promptAuto   = "auto"   // prompt when stdin is a terminal and the call is not read from it
	promptAlways = "always" // prompt on stdin even when it is not a terminal (scripts, tests)
	promptNever  = "never"  // print the questions and how to answer them
)

// maxAnswerLine bounds one line a human types (a field's value, a sampling reply): an answer's
// JSON is bounded by toolcore.MaxInputResponseBytes anyway.
const maxAnswerLine = toolcore.MaxInputResponseBytes

// errStdinClosed: stdin ended before an answer was typed; the question is left for another
// answerer.
var errStdinClosed = errors.New("stdin closed before the answer")

// lineReader hands out the lines of a reader one at a time to whoever waits, so a prompt can give
// up when its round ends (its ctx) without losing the reader. One goroutine reads, started at the
// first prompt.
type lineReader struct {
	in    io.Reader
	once  sync.Once
	lines chan string
}

func newLineReader(in io.Reader) *lineReader { return &lineReader{in: in, lines: make(chan string)} }

// next returns the next line without its line ending, or errStdinClosed, or ctx's error.
func (r *lineReader) next(ctx context.Context) (string, error) {
	r.once.Do(func() {
		go func() {
			defer close(r.lines)
			sc := bufio.NewScanner(r.in)
			sc.Buffer(make([]byte, 4096), maxAnswerLine)
			for sc.Scan() {
				r.lines <- strings.TrimRight(sc.Text(), "\r")
			}
		}()
	})
	select {
	case line, ok := <-r.lines:
		if !ok {
			return "", errStdinClosed
		}
		return line, nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// inputPrompter asks the human at stdin the questions of a call's rounds and builds the answers:
// an elicitation's form field by field, a sampling reply typed by the human, the current
// directory as the one root. It writes to out (stderr).
type inputPrompter struct {
	out   io.Writer
	lines *lineReader
	dir   string // the current directory, offered as a root
	clear func() // erases the progress bar before a prompt
}

// hook is the client.Options.OnInput of a prompting call.
func (p *inputPrompter) hook(ctx context.Context, ev tgclient.InputEvent) (map[string]json.RawMessage, error) {
	p.clear()
	p.say("toolgate: %s asks for input (round %d) until %s; Ctrl-C cancels the call", ev.ToolName, ev.Round, clock(ev.Deadline))
	if ev.Refused != nil {
		p.say("toolgate: the call refused the answers: %s; asking again", ev.Refused)
	}
	for _, k := range keysOf(ev.Callbacks) {
		p.say("  %s waits for a callback to its URL until %s (nothing to answer here)", k, clock(ev.Callbacks[k]))
	}
	answers := map[string]json.RawMessage{}
	for _, k := range keysOf(ev.Requests) {
		answer, err := p.ask(ctx, k, ev.Requests[k])
		if err != nil {
			return nil, err
		}
		if answer != nil {
			answers[k] = answer
		}
	}
	return answers, nil
}

// say prints one escaped line.
func (p *inputPrompter) say(format string, args ...any) {
	fmt.Fprintln(p.out, safetext.String(fmt.Sprintf(format, args...)))
}

// prompt prints an escaped prompt without a line ending and reads the human's line.
func (p *inputPrompter) prompt(ctx context.Context, format string, args ...any) (string, error) {
	fmt.Fprint(p.out, safetext.String(fmt.Sprintf(format, args...)))
	line, err := p.lines.next(ctx)
	if err != nil {
		fmt.Fprintln(p.out)
	}
	return strings.TrimSpace(line), err
}

// ask asks one question; nil (no error) when the human cannot answer it here.
func (p *inputPrompter) ask(ctx context.Context, key string, q toolcore.InputRequest) (json.RawMessage, error) {
	switch q.Method {
	case toolcore.MethodElicit:
		var el toolcore.Elicitation
		if err := json.Unmarshal(q.Params, &el); err != nil {
			p.say("  %s: a malformed elicitation (%v); not answered", key, err)
			return nil, nil
		}
		return p.elicit(ctx, key, el)
	case toolcore.MethodSample:
		return p.sample(ctx, key, q.Params)
	case toolcore.MethodListRoots:
		return p.roots(ctx, key)
	}
	p.say("  %s: %s cannot be answered here", key, q.Method)
	return nil, nil
}

// elicit asks for an elicitation's action and, on accept, its form's fields.
func (p *inputPrompter) elicit(ctx context.Context, key string, el toolcore.Elicitation) (json.RawMessage, error) {
	p.say("  %s: %s", key, el.Message)
	if el.Mode == "url" {
		p.say("  %s: open %s", key, el.URL)
	}
	var action string
	for action == "" {
		line, err := p.prompt(ctx, "  %s: accept, decline or cancel? [a/d/c]: ", key)
		if err != nil {
			return nil, err
		}
		action = map[string]string{"a": "accept", "accept": "accept", "d": "decline", "decline": "decline", "c": "cancel", "cancel": "cancel"}[strings.ToLower(line)]
	}
	r := toolcore.ElicitResult{Action: action}
	if action == "accept" && el.Mode != "url" {
		form, err := parseForm(el.RequestedSchema)
		if err != nil {
			p.say("  %s: the form cannot be shown (%v); declined", key, err)
			r.Action = "decline"
		} else if r.Content, err = p.fill(ctx, key, form); err != nil {
			return nil, err
		}
	}
	return json.Marshal(r)
}

// fill asks each field of form until its value parses; an empty line leaves an optional field
// out (or takes its default).
func (p *inputPrompter) fill(ctx context.Context, key string, form formSchema) (map[string]any, error) {
	content := map[string]any{}
	for _, f := range form.Fields {
		for {
			line, err := p.prompt(ctx, "  %s.%s %s: ", key, f.Name, f.describe())
			if err != nil {
				return nil, err
			}
			if line == "" && !f.Required {
				if v, ok := f.defaultValue(); ok {
					content[f.Name] = v
				}
				break
			}
			v, err := f.parse(line)
			if err == nil {
				content[f.Name] = v
				break
			}
			p.say("  %s.%s: %v", key, f.Name, err)
		}
	}
	return content, nil
}

// samplingParams is what the prompt shows of a sampling request.
type samplingParams struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	SystemPrompt string `json:"systemPrompt"`
	MaxTokens    int    `json:"maxTokens"`
}

// HumanModel is the model a sampling reply typed at call's prompt names: no model wrote it.
const HumanModel = "human"

// sample shows a sampling request and reads the human's reply: one line, or an empty line to
// decline (an empty reply with stopReason "declined").
func (p *inputPrompter) sample(ctx context.Context, key string, params json.RawMessage) (json.RawMessage, error) {
	var sp samplingParams
	_ = json.Unmarshal(params, &sp) // malformed: shown as empty
	p.say("  %s: the tool asks the caller's model (at most %d tokens); you answer in its place", key, sp.MaxTokens)
	if sp.SystemPrompt != "" {
		p.say("  %s: system: %s", key, sp.SystemPrompt)
	}
	for _, m := range sp.Messages {
		var text toolcore.TextContent
		if json.Unmarshal(m.Content, &text) != nil || text.Type != "text" {
			text.Text = "(" + string(m.Content) + ")"
		}
		p.say("  %s: %s: %s", key, m.Role, text.Text)
	}
	line, err := p.prompt(ctx, "  %s: your reply on one line (empty to decline): ", key)
	if err != nil {
		return nil, err
	}
	return samplingAnswer(line), nil
}

// samplingAnswer is the CreateMessageResult of a reply a human typed; an empty reply declines.
func samplingAnswer(reply string) json.RawMessage {
	stop := "endTurn"
	if reply == "" {
		stop = "declined"
	}
	data, _ := json.Marshal(toolcore.SamplingResult{Role: "assistant", Model: HumanModel, StopReason: stop,
		Content: mustJSON(toolcore.TextContent{Type: "text", Text: reply})})
	return data
}

// roots offers the current directory as the caller's one root.
func (p *inputPrompter) roots(ctx context.Context, key string) (json.RawMessage, error) {
	root := fileRoot(p.dir)
	line, err := p.prompt(ctx, "  %s: the tool asks for your roots: share %s? [y/N]: ", key, root.URI)
	if err != nil {
		return nil, err
	}
	roots := []toolcore.Root{}
	if yes := strings.ToLower(line); yes == "y" || yes == "yes" {
		roots = append(roots, root)
	}
	return json.Marshal(map[string]any{"roots": roots})
}

// fileRoot is dir as an MCP root: a file:// URI and its base name.
func fileRoot(dir string) toolcore.Root {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
	return toolcore.Root{URI: u.String(), Name: filepath.Base(dir)}
}

// inputNotice is the client.Options.OnInput of a call that does not prompt: it prints the
// questions and how to answer them on stderr, once a round, and answers nothing.
func inputNotice(println func(string)) func(context.Context, tgclient.InputEvent) (map[string]json.RawMessage, error) {
	return func(_ context.Context, ev tgclient.InputEvent) (map[string]json.RawMessage, error) {
		if ev.Refused != nil {
			return nil, nil // answered by nobody here: never refused
		}
		println(safetext.String(fmt.Sprintf("toolgate: %s asks for input (round %d) until %s; the call waits for the answers, Ctrl-C cancels it",
			ev.ToolName, ev.Round, clock(ev.Deadline))))
		for _, line := range questionLines(ev.Requests, ev.Callbacks) {
			println("  " + safetext.String(line))
		}
		if len(ev.Requests) > 0 {
			println("  " + safetext.String(answerHint(ev.WorkflowID, ev.Requests)))
		}
		return nil, nil
	}
}

// questionLines are one line per question: its key, method and what it asks (an elicitation's
// message and fields, a sampling request's last message, a callback's expiry). Not escaped.
func questionLines(requests map[string]toolcore.InputRequest, callbacks map[string]time.Time) []string {
	var lines []string
	for _, k := range keysOf(requests) {
		lines = append(lines, k+": "+questionText(requests[k]))
	}
	for _, k := range keysOf(callbacks) {
		lines = append(lines, k+": "+toolcore.MethodCallback+", waits for a request to its URL until "+clock(callbacks[k]))
	}
	return lines
}

// questionText says what one question asks.
func questionText(q toolcore.InputRequest) string {
	text := q.Method
	switch q.Method {
	case toolcore.MethodElicit:
		var el toolcore.Elicitation
		if json.Unmarshal(q.Params, &el) != nil {
			return text + " (malformed)"
		}
		text += " " + strconv.Quote(firstRunes(el.Message, 200))
		if el.Mode == "url" {
			return text + ", open " + el.URL
		}
		if form, err := parseForm(el.RequestedSchema); err == nil && len(form.Fields) > 0 {
			var fields []string
			for _, f := range form.Fields {
				fields = append(fields, f.Name+" ("+f.kind()+")")
			}
			text += ", fields " + strings.Join(fields, ", ")
		}
	case toolcore.MethodSample:
		var sp samplingParams
		if json.Unmarshal(q.Params, &sp) == nil && len(sp.Messages) > 0 {
			var c toolcore.TextContent
			_ = json.Unmarshal(sp.Messages[len(sp.Messages)-1].Content, &c)
			text += " " + strconv.Quote(firstRunes(c.Text, 200))
		}
	case toolcore.MethodCallback:
		var cp toolcore.CallbackParams
		_ = json.Unmarshal(q.Params, &cp)
		text += ", waits for a request to its URL until " + clock(cp.Expires)
	}
	return text
}

// answerHint is the command that answers requests.
func answerHint(workflowID string, requests map[string]toolcore.InputRequest) string {
	var parts []string
	for _, k := range keysOf(requests) {
		switch requests[k].Method {
		case toolcore.MethodElicit:
			parts = append(parts, k+"=accept")
		default:
			parts = append(parts, k+"='<result JSON>'")
		}
	}
	return "answer: toolgate answer " + workflowID + " " + strings.Join(parts, " ") +
		" [--field NAME=VALUE ...] (or KEY=decline, KEY=cancel, KEY='<MCP result JSON>')"
}

// formSchema is an elicitation's requested schema: a flat object of primitive fields, in the
// order the tool wrote them.
type formSchema struct {
	Fields []formField
}

// formField is one property of a form.
type formField struct {
	Name        string
	Required    bool
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []formChoice    `json:"oneOf"`
	Default     json.RawMessage `json:"default"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
}

// formChoice is a titled enum value (2025-11-25's oneOf of const and title).
type formChoice struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// parseForm reads a requested schema, keeping the order of its properties.
func parseForm(raw json.RawMessage) (formSchema, error) {
	if len(raw) == 0 {
		return formSchema{}, nil
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return formSchema{}, fmt.Errorf("requested schema: %w", err)
	}
	var form formSchema
	if len(s.Properties) == 0 || string(s.Properties) == "null" {
		return form, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return formSchema{}, errors.New("requested schema: properties is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return formSchema{}, fmt.Errorf("requested schema: %w", err)
		}
		var f formField
		if err := dec.Decode(&f); err != nil {
			return formSchema{}, fmt.Errorf("requested schema: property %v: %w", tok, err)
		}
		f.Name, _ = tok.(string)
		f.Required = slices.Contains(s.Required, f.Name)
		form.Fields = append(form.Fields, f)
	}
	return form, nil
}

// field returns the form's field named name.
func (s formSchema) field(name string) (formField, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return formField{}, false
}

// choices are a field's allowed values and their labels, or none.
func (f formField) choices() (values []any, labels []string) {
	if len(f.OneOf) > 0 {
		for _, c := range f.OneOf {
			values, labels = append(values, c.Const), append(labels, orDefault(c.Title, fmt.Sprint(c.Const)))
		}
		return values, labels
	}
	for i, v := range f.Enum {
		label := fmt.Sprint(v)
		if i < len(f.EnumNames) && f.EnumNames[i] != "" {
			label = f.EnumNames[i]
		}
		values, labels = append(values, v), append(labels, label)
	}
	return values, labels
}

// kind names the field's type for a human: boolean, string, number, integer, or its choices.
func (f formField) kind() string {
	if values, _ := f.choices(); len(values) > 0 {
		texts := make([]string, len(values))
		for i, v := range values {
			texts[i] = fmt.Sprint(v)
		}
		return "one of " + strings.Join(texts, "|")
	}
	return orDefault(f.Type, "value")
}

// describe is the prompt of a field: its type, whether required, its title and description,
// and how to answer.
func (f formField) describe() string {
	var b strings.Builder
	b.WriteString("(" + orDefault(f.Type, "value"))
	if f.Required {
		b.WriteString(", required")
	}
	b.WriteString(")")
	for _, s := range []string{f.Title, f.Description} {
		if s != "" && s != f.Name {
			b.WriteString(" " + s)
		}
	}
	values, labels := f.choices()
	switch {
	case len(values) > 0:
		for i, l := range labels {
			fmt.Fprintf(&b, " %d) %s", i+1, l)
		}
		fmt.Fprintf(&b, " [1-%d]", len(values))
	case f.Type == "boolean":
		b.WriteString(" [y/n]")
	}
	if len(f.Default) > 0 && !f.Required {
		b.WriteString(" (empty: " + string(f.Default) + ")")
	}
	return b.String()
}

// defaultValue is the field's default, if it has one.
func (f formField) defaultValue() (any, bool) {
	var v any
	if len(f.Default) == 0 || json.Unmarshal(f.Default, &v) != nil {
		return nil, false
	}
	return v, true
}

// parse reads text as the field's value: y/n for a boolean, a number in range, a choice's number
// or value, a string as it is, JSON for another type.
func (f formField) parse(text string) (any, error) {
	if values, labels := f.choices(); len(values) > 0 {
		if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(values) {
			return values[n-1], nil
		}
		for i, v := range values {
			if fmt.Sprint(v) == text || labels[i] == text {
				return v, nil
			}
		}
		return nil, fmt.Errorf("choose 1-%d or one of %s", len(values), strings.Join(labels, ", "))
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(text) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("answer y or n")
	case "number", "integer":
		n, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		if (f.Minimum != nil && n < *f.Minimum) || (f.Maximum != nil && n > *f.Maximum) {
			return nil, fmt.Errorf("%v is out of range [%s, %s]", n, bound(f.Minimum), bound(f.Maximum))
		}
		return n, nil
	case "string", "":
		return text, nil
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("type %s: give a JSON value", f.Type)
	}
	return v, nil
}

func bound(b *float64) string {
	if b == nil {
		return "any"
	}
	return strconv.FormatFloat(*b, 'g', -1, 64)
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// clock formats t for a human: RFC 3339 in UTC, "no deadline" when zero.
func clock(t time.Time) string {
	if t.IsZero() {
		return "no deadline"
	}
	return t.UTC().Format(time.RFC3339)
}

// firstRunes is s cut to n code points, with an ellipsis when cut.
func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// keysOf returns m's keys sorted.
func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// mustJSON encodes v, which cannot fail to encode.
func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// inputLines are status's lines of a call waiting for input: the round, since and until when,
// one line per question, and the command that answers. writeLines escapes them.
func inputLines(workflowID string, in wire.InputState) [][2]string {
	if in.Round == 0 && len(in.Requests) == 0 {
		return [][2]string{{"input", "awaiting input (no worker answered the query; the questions show once one does)"}}
	}
	text := fmt.Sprintf("awaiting input (round %d)", in.Round)
	if !in.Since.IsZero() {
		text += " since " + clock(in.Since)
	}
	lines := [][2]string{{"input", text + " until " + clock(in.Deadline)}}
	answerable, callbacks := tgclient.SplitInputRequests(in.Requests)
	for _, q := range questionLines(answerable, callbacks) {
		lines = append(lines, [2]string{"question", q})
	}
	if len(answerable) > 0 {
		lines = append(lines, [2]string{"answer", strings.TrimPrefix(answerHint(workflowID, answerable), "answer: ")})
	}
	return lines
}
