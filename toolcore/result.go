package toolcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Result is an immutable tool-result message linked to its call. It encodes to the wire shape
// {"id":"tool-result-<callId>","role":"toolResult","toolCallId":"...","toolName":"...","content":"...","isError":false}.
//
// Its content is valid UTF-8 of at most MaxContentCodePoints code points. An error result's
// content is {"error":{"code":"<ErrorCode>","message":"<text>"}}.
//
// A success result may carry parts (Parts): claims of the images, audio, resources and other
// parts a Rich output returned, encoded after isError as "parts":[...], a field omitted when
// there are none (so a result without parts keeps the six-field shape byte for byte).
type Result struct {
	toolCallID string
	toolName   string
	content    string
	isError    bool
	parts      []PartClaim
}

// ResultRole is the role of every tool-result message.
const ResultRole = "toolResult"

// ResultIDPrefix prefixes the call id to form the result's id.
const ResultIDPrefix = "tool-result-"

func (r Result) ID() string         { return ResultIDPrefix + r.toolCallID }
func (r Result) ToolCallID() string { return r.toolCallID }
func (r Result) ToolName() string   { return r.toolName }
func (r Result) Content() string    { return r.content }
func (r Result) IsError() bool      { return r.isError }

// IsZero reports whether r is the zero value (no result).
func (r Result) IsZero() bool { return r.toolCallID == "" }

// errorBody is the decoded content of an error result.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r Result) errorBody() (errorBody, bool) {
	var b errorBody
	if !r.isError || json.Unmarshal([]byte(r.content), &b) != nil {
		return errorBody{}, false
	}
	return b, true
}

// ErrorCode returns the code of an error result, parsed from its content; 0 for a success (or an
// error content that holds no known code).
func (r Result) ErrorCode() ErrorCode {
	b, ok := r.errorBody()
	if !ok {
		return 0
	}
	return parseErrorCode(b.Error.Code)
}

// ErrorMessage returns the message of an error result, parsed from its content; "" for a success.
func (r Result) ErrorMessage() string {
	b, _ := r.errorBody()
	return b.Error.Message
}

// wireResult is the wire shape; the field order is the encoding order.
type wireResult struct {
	ID         string      `json:"id"`
	Role       string      `json:"role"`
	ToolCallID string      `json:"toolCallId"`
	ToolName   string      `json:"toolName"`
	Content    string      `json:"content"`
	IsError    bool        `json:"isError"`
	Parts      []PartClaim `json:"parts,omitempty"`
}

// MarshalJSON encodes the wire shape, fields in the documented order, with encoding/json's string
// escaping without HTML escaping (so <, > and & stay as they are), no insignificant space.
func (r Result) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(wireResult{
		ID:         r.ID(),
		Role:       ResultRole,
		ToolCallID: r.toolCallID,
		ToolName:   r.toolName,
		Content:    r.content,
		IsError:    r.isError,
		Parts:      r.parts,
	}); err != nil {
		return nil, fmt.Errorf("encode tool result: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// maxResultBytes bounds the JSON UnmarshalJSON accepts; a valid result is far smaller.
const maxResultBytes = 1 << 20

// UnmarshalJSON strictly decodes the wire shape and checks the linkage (id, role).
//
// Strictly: one JSON object with exactly the six fields, each once, of the right JSON type (no
// null), and optionally "parts" (1 to MaxParts valid claims, no unknown field), nothing after it; role "toolResult"; id "tool-result-" + toolCallId; non-blank
// toolCallId and toolName; content of at most MaxContentCodePoints; an error result's content
// holds a known error code. On error r is unchanged.
func (r *Result) UnmarshalJSON(data []byte) error {
	w, err := decodeWireResult(data)
	if err != nil {
		return fmt.Errorf("decode tool result: %w", err)
	}
	*r = w
	return nil
}

// resultFields are the wire names of the six fields, in encoding order, then the optional
// "parts".
var resultFields = [...]string{"id", "role", "toolCallId", "toolName", "content", "isError", "parts"}

// partsField is the index of the optional "parts" in resultFields.
const partsField = len(resultFields) - 1

func decodeWireResult(data []byte) (Result, error) {
	if len(data) > maxResultBytes {
		return Result{}, fmt.Errorf("%d bytes exceed %d", len(data), maxResultBytes)
	}
	s := &scanner{data: data}
	s.skipWS()
	if s.pos >= len(data) || data[s.pos] != '{' {
		return Result{}, errors.New("not a JSON object")
	}
	var w wireResult
	strs := [...]*string{&w.ID, &w.Role, &w.ToolCallID, &w.ToolName, &w.Content}
	var seen [len(resultFields)]bool
	s.maxDepth = 3 // "parts": an array of flat objects
	err := s.eachMember(func(key []byte) error {
		i := slices.Index(resultFields[:], string(key))
		switch {
		case i < 0:
			return fmt.Errorf("unknown field %s", quoteShort(string(key)))
		case seen[i]:
			return fmt.Errorf("duplicate field %q", key)
		}
		seen[i] = true
		kind := kindOf(data[s.pos])
		if i == partsField {
			raw, err := s.value(nil)
			if err != nil {
				return err
			}
			w.Parts, err = decodeClaims(raw)
			return err
		}
		if i == len(strs) { // isError
			if kind != kindBool {
				return errors.New(`"isError" must be a boolean`)
			}
			w.IsError = data[s.pos] == 't'
			_, err := s.value(nil)
			return err
		}
		if kind != kindString {
			return fmt.Errorf("%q must be a string", key)
		}
		text, _, err := s.str()
		*strs[i] = string(text)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	if s.skipWS(); s.pos < len(data) {
		return Result{}, errors.New("trailing data after the object")
	}
	for i, key := range resultFields[:partsField] {
		if !seen[i] {
			return Result{}, fmt.Errorf("missing field %q", key)
		}
	}
	r := Result{toolCallID: w.ToolCallID, toolName: w.ToolName, content: w.Content, isError: w.IsError, parts: w.Parts}
	switch {
	case w.Role != ResultRole:
		return Result{}, fmt.Errorf("role %s is not %q", quoteShort(w.Role), ResultRole)
	case strings.TrimSpace(w.ToolCallID) == "":
		return Result{}, errors.New(`"toolCallId" must not be blank`)
	case len(w.ToolCallID) > MaxIDBytes:
		return Result{}, fmt.Errorf(`"toolCallId" exceeds %d bytes`, MaxIDBytes)
	case w.ID != r.ID():
		return Result{}, fmt.Errorf("id %s does not link to toolCallId %s", quoteShort(w.ID), quoteShort(w.ToolCallID))
	case strings.TrimSpace(w.ToolName) == "":
		return Result{}, errors.New(`"toolName" must not be blank`)
	case len(w.ToolName) > MaxNameBytes:
		return Result{}, fmt.Errorf(`"toolName" exceeds %d bytes`, MaxNameBytes)
	case utf8.RuneCountInString(w.Content) > MaxContentCodePoints:
		return Result{}, fmt.Errorf(`"content" exceeds %d code points`, MaxContentCodePoints)
	case w.IsError && r.ErrorCode() == 0:
		return Result{}, errors.New(`error "content" holds no known error code`)
	case w.IsError && len(w.Parts) > 0:
		return Result{}, errors.New(`an error result carries no "parts"`)
	}
	return r, nil
}

// SuccessResult links bounded content (already serialized) to call. content is capped again
// (invalid UTF-8 bytes become U+FFFD first).
func SuccessResult(call ToolCall, content string) Result {
	return LinkContent(call, content, false)
}

// ErrorResult links an error result {"error":{"code":...,"message":...}} to call; the content
// obeys the same cap.
//
// The message is bounded like ErrorText (invalid UTF-8 replaced, at most MaxErrorTextCodePoints,
// blank becomes DefaultErrorText) and, if its JSON escaping would still overflow the cap, cut
// further, so error content is always complete JSON. An invalid code is TOOL_EXECUTION_FAILED.
func ErrorResult(call ToolCall, code ErrorCode, message string) Result {
	if !code.valid() {
		code = CodeToolExecutionFailed
	}
	return Result{
		toolCallID: call.ID(),
		toolName:   call.Name(),
		content:    errorContent(code, boundText(message, DefaultErrorText)),
		isError:    true,
	}
}

// errorContent serializes {"error":{"code":code,"message":msg}}, halving msg until the content
// fits MaxContentCodePoints without truncation.
func errorContent(code ErrorCode, msg string) string {
	for {
		content, ok := serializeErrorContent(code, msg)
		if ok || msg == "" {
			return content
		}
		runes := []rune(strings.TrimSuffix(msg, ErrorTextEllipsis))
		msg = string(runes[:len(runes)/2]) + ErrorTextEllipsis
		if len(runes) == 0 {
			msg = ""
		}
	}
}

// serializeErrorContent runs Serialize on the error body; ok is false when the content was
// truncated. If Serialize fails (it cannot for strings), encoding/json renders the body.
func serializeErrorContent(code ErrorCode, msg string) (content string, ok bool) {
	body := map[string]any{"error": map[string]any{"code": code.String(), "message": msg}}
	content, err := Serialize(body)
	if err != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(body) // strings and maps of strings always encode
		content = strings.TrimSuffix(buf.String(), "\n")
	}
	fits := !strings.HasSuffix(content, TruncationMarker) && utf8.RuneCountInString(content) <= MaxContentCodePoints
	return content, fits
}

// UnknownToolMessage is the TOOL_NOT_FOUND message for name: Unknown Tool "<name>".
func UnknownToolMessage(name string) string { return `Unknown Tool "` + name + `"` }

// NotFoundResult is the TOOL_NOT_FOUND result: Unknown Tool "<name>".
func NotFoundResult(call ToolCall) Result {
	return ErrorResult(call, CodeToolNotFound, UnknownToolMessage(call.Name()))
}

// MaxListedTools bounds the tool names UnknownToolOnQueueMessage lists.
const MaxListedTools = 20

// moreToolsReserve is the room kept for the " and N more" tail when listing tools.
const moreToolsReserve = len(" and 99999999999 more")

// UnknownToolOnQueueMessage is the TOOL_NOT_FOUND message a worker records: it starts with
// UnknownToolMessage(name) and names the task queue the call ran on and the tools the worker's
// registry has, so a call started on the wrong queue is diagnosable from its result alone:
//
//	Unknown Tool "forecast" on task queue "weather"; this worker has: add, echo and 3 more
//	Unknown Tool "forecast" on task queue "empty"; this worker has no tools
//
// The tools are listed sorted (tools need not be), at most MaxListedTools of them, then
// " and N more". The name, the queue and each listed tool are cut to MaxNameBytes (ending with
// ErrorTextEllipsis), and tools stop being listed before the message would exceed
// MaxErrorTextCodePoints, so the message is never cut by ErrorResult's bound. The same inputs
// always give the same text: it is safe in workflow code.
func UnknownToolOnQueueMessage(name, taskQueue string, tools []string) string {
	var b strings.Builder
	b.WriteString(UnknownToolMessage(cutName(name)))
	b.WriteString(` on task queue "` + cutName(taskQueue) + `"; `)
	if len(tools) == 0 {
		b.WriteString("this worker has no tools")
		return b.String()
	}
	b.WriteString("this worker has: ")
	sorted := slices.Sorted(slices.Values(tools))
	n := utf8.RuneCountInString(b.String())
	listed := 0
	for _, tool := range sorted {
		item := cutName(tool)
		if listed > 0 {
			item = ", " + item
		}
		size := utf8.RuneCountInString(item)
		if listed == MaxListedTools || n+size+moreToolsReserve > MaxErrorTextCodePoints {
			break
		}
		b.WriteString(item)
		n += size
		listed++
	}
	if more := len(sorted) - listed; more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	return b.String()
}

// NotFoundOnQueueResult is the TOOL_NOT_FOUND result a worker on taskQueue whose registry has
// tools records: UnknownToolOnQueueMessage(call.Name(), taskQueue, tools).
func NotFoundOnQueueResult(call ToolCall, taskQueue string, tools []string) Result {
	return ErrorResult(call, CodeToolNotFound, UnknownToolOnQueueMessage(call.Name(), taskQueue, tools))
}

// cutName makes s valid UTF-8 of at most MaxNameBytes bytes; a longer s ends with
// ErrorTextEllipsis.
func cutName(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	if len(s) <= MaxNameBytes {
		return s
	}
	end := MaxNameBytes - len(ErrorTextEllipsis)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + ErrorTextEllipsis
}

// LinkContent rebuilds a result from parts that crossed a boundary (activity to workflow):
// content is capped again (invalid UTF-8 bytes become U+FFFD first).
func LinkContent(call ToolCall, content string, isError bool) Result {
	return Result{
		toolCallID: call.ID(),
		toolName:   call.Name(),
		content:    capContent(content),
		isError:    isError,
	}
}
