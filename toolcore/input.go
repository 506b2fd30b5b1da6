package toolcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/wire"
)

// Methods of the questions a running tool may ask (InputRequest.Method). The first three are
// MCP's client requests, so the MCP front hands them to the caller as they are; the last is
// toolgate's own: a URL the tool gives an external system, answered by that system's request.
const (
	MethodElicit    = "elicitation/create"
	MethodSample    = "sampling/createMessage"
	MethodListRoots = "roots/list"
	MethodCallback  = "toolgate/callback"
)

// Bounds of the questions of one call.
const (
	// MaxInputRequests bounds the questions one attempt asks before it ends waiting.
	MaxInputRequests = 8
	// MaxInputParamsBytes bounds the JSON params of one question.
	MaxInputParamsBytes = 16 << 10
	// MaxInputResponseBytes bounds the JSON of one answer.
	MaxInputResponseBytes = 64 << 10
	// MaxInputResponsesBytes bounds the answers of all of a call's rounds together: each
	// attempt after a question carries them all.
	MaxInputResponsesBytes = 256 << 10
)

// inputKeyPattern is what a question's key looks like: the tool's own name for it, stable across
// attempts, so the attempt that runs with the answers finds its answer by the same key.
var inputKeyPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// InputRequest is one question a running tool asks whoever called it, in MCP's shape: Method is
// one of the Method constants and Params that request's params (MCP's ElicitRequestParams,
// CreateMessageRequestParams, ListRootsRequestParams; for MethodCallback, CallbackParams). It is
// wire.InputRequest, the shape history records.
type InputRequest = wire.InputRequest

// ErrInputRequired is wrapped by the error Ask (and the typed helpers) return when the question
// has no answer yet: the tool returns it (wrapped or not) and the executor ends the attempt
// asking. On the durable path the call then waits, holding no worker slot, and the tool runs
// again from its start with every answer so far: Ask returns the answer, and LastCheckpoint
// the asking attempt's last checkpoint, so effects made before the question are not made twice.
var ErrInputRequired = errors.New("the tool waits for input")

// InputRequiredError is the error Ask returns for a question without an answer. It wraps
// ErrInputRequired.
type InputRequiredError struct {
	// Key of the question asked.
	Key string
}

func (e *InputRequiredError) Error() string {
	return "the tool waits for input " + quoteShort(e.Key)
}

// Unwrap returns ErrInputRequired.
func (e *InputRequiredError) Unwrap() error { return ErrInputRequired }

// Asking collects the questions of one attempt; the durable executor makes one per attempt
// and, when the tool returns an error wrapping ErrInputRequired, ends the attempt with them.
// Safe for concurrent use.
type Asking struct {
	mu       sync.Mutex
	requests map[string]InputRequest
}

// Requests returns a copy of the questions asked so far, by key (nil for none).
func (a *Asking) Requests() map[string]InputRequest {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.requests) == 0 {
		return nil
	}
	out := make(map[string]InputRequest, len(a.requests))
	for k, r := range a.requests {
		out[k] = InputRequest{Method: r.Method, Params: slices.Clone(r.Params)}
	}
	return out
}

// add records req under key; a key asked twice keeps its first request.
func (a *Asking) add(key string, req InputRequest) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.requests[key]; ok {
		return nil
	}
	if len(a.requests) >= MaxInputRequests {
		return fmt.Errorf("ask %s: more than %d questions in one attempt", quoteShort(key), MaxInputRequests)
	}
	if a.requests == nil {
		a.requests = map[string]InputRequest{}
	}
	a.requests[key] = InputRequest{Method: req.Method, Params: slices.Clone(req.Params)}
	return nil
}

// Ask asks the caller req under key and returns the answer: the JSON result of the MCP request
// (ElicitResult, CreateMessageResult, ListRootsResult; a CallbackResult for MethodCallback).
//
// When an earlier round answered key, Ask returns that answer at once. Otherwise, with an
// executor that answers in process (ExecuteOptions.Input), it asks and waits; on the durable
// path it records the question and returns an *InputRequiredError, which the tool must return
// (it may ask further questions first: one round carries them all). Keys are the tool's own,
// ^[A-Za-z0-9_.:-]{1,64}$, stable across attempts. Asking again under an answered key returns the
// same answer: ask a new key for a new question.
func Ask(ctx context.Context, key string, req InputRequest) (json.RawMessage, error) {
	if err := checkInputRequest(key, req); err != nil {
		return nil, err
	}
	e := executionFrom(ctx)
	if e == nil {
		return nil, fmt.Errorf("ask %s: not inside a tool's execution", quoteShort(key))
	}
	if answer, ok := e.InputResponses[key]; ok {
		return slices.Clone(answer), nil
	}
	switch {
	case e.Input != nil:
		answer, err := e.Input(ctx, key, req)
		if err != nil {
			return nil, err
		}
		if len(answer) > MaxInputResponseBytes {
			return nil, fmt.Errorf("ask %s: the answer's %d bytes exceed %d", quoteShort(key), len(answer), MaxInputResponseBytes)
		}
		return answer, nil
	case e.Asking != nil:
		if err := e.Asking.add(key, req); err != nil {
			return nil, err
		}
		return nil, &InputRequiredError{Key: key}
	}
	return nil, fmt.Errorf("ask %s: this executor has no one to ask (a Local tool, or in process without ExecuteOptions.Input)", quoteShort(key))
}

// checkInputRequest rejects a malformed key or request before anything is recorded.
func checkInputRequest(key string, req InputRequest) error {
	switch {
	case !inputKeyPattern.MatchString(key):
		return fmt.Errorf("ask %s: a key is ^[A-Za-z0-9_.:-]{1,64}$", quoteShort(key))
	case req.Method != MethodElicit && req.Method != MethodSample && req.Method != MethodListRoots && req.Method != MethodCallback:
		return fmt.Errorf("ask %s: unknown method %s", quoteShort(key), quoteShort(req.Method))
	case len(req.Params) > MaxInputParamsBytes:
		return fmt.Errorf("ask %s: params of %d bytes exceed %d", quoteShort(key), len(req.Params), MaxInputParamsBytes)
	case len(req.Params) > 0 && !json.Valid(req.Params):
		return fmt.Errorf("ask %s: params are not valid JSON", quoteShort(key))
	case req.Method == MethodCallback && !mintedCallback(req.Params):
		return fmt.Errorf("ask %s: a callback is asked with Callback, which mints its URL", quoteShort(key))
	}
	return nil
}

// mintedCallback reports whether params are a minted callback's (a token hash and an expiry).
func mintedCallback(params json.RawMessage) bool {
	var p CallbackParams
	return json.Unmarshal(params, &p) == nil && p.TokenSHA256 != "" && !p.Expires.IsZero()
}

// askInto is Ask with req built from params and the answer decoded into out.
func askInto(ctx context.Context, key, method string, params any, out any) error {
	raw, err := encodeAccepted(params)
	if err != nil {
		return fmt.Errorf("ask %s: %w", quoteShort(key), err)
	}
	answer, err := Ask(ctx, key, InputRequest{Method: method, Params: raw})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("ask %s: decode the answer: %w", quoteShort(key), err)
	}
	return nil
}

// Elicitation asks the caller's human (MCP elicitation/create). Form mode (the default) shows
// Message and asks for RequestedSchema's fields (a flat object schema of primitive properties);
// URL mode sends the human to URL (an https page of the tool's, for what must not pass through
// the client: a payment, a login).
type Elicitation struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

// ElicitResult is the human's answer: Action "accept" (with Content for a form), "decline" or
// "cancel".
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Accepted reports whether the human accepted.
func (r ElicitResult) Accepted() bool { return r.Action == "accept" }

// Elicit asks the caller's human el under key (see Ask).
func Elicit(ctx context.Context, key string, el Elicitation) (ElicitResult, error) {
	switch {
	case strings.TrimSpace(el.Message) == "":
		return ElicitResult{}, fmt.Errorf("elicit %s: a message is required", quoteShort(key))
	case el.Mode == "url" && !strings.HasPrefix(el.URL, "https://"):
		return ElicitResult{}, fmt.Errorf("elicit %s: URL mode needs an https URL", quoteShort(key))
	case el.Mode == "url" && el.ElicitationID == "":
		el.ElicitationID = key
	case el.Mode == "" || el.Mode == "form":
		if len(el.RequestedSchema) == 0 {
			el.RequestedSchema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
	case el.Mode != "url":
		return ElicitResult{}, fmt.Errorf("elicit %s: mode %s is neither form nor url", quoteShort(key), quoteShort(el.Mode))
	}
	var r ElicitResult
	if err := askInto(ctx, key, MethodElicit, el, &r); err != nil {
		return ElicitResult{}, err
	}
	if r.Action != "accept" && r.Action != "decline" && r.Action != "cancel" {
		return ElicitResult{}, fmt.Errorf("elicit %s: the answer's action %s is not accept, decline or cancel", quoteShort(key), quoteShort(r.Action))
	}
	return r, nil
}

// confirmSchema is Confirm's form: one required boolean.
const confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm","description":"Proceed?"}},"required":["confirm"]}`

// Confirm asks the caller's human to confirm message under key (a form with one boolean) and
// reports true only when they accepted with confirm true.
func Confirm(ctx context.Context, key, message string) (bool, error) {
	r, err := Elicit(ctx, key, Elicitation{Message: message, RequestedSchema: json.RawMessage(confirmSchema)})
	if err != nil {
		return false, err
	}
	yes, _ := r.Content["confirm"].(bool)
	return r.Accepted() && yes, nil
}

// SamplingMessage is one message of a sampling request: Role "user" or "assistant", text
// content.
type SamplingMessage struct {
	Role    string      `json:"role"`
	Content TextContent `json:"content"`
}

// TextContent is MCP's text content block.
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// SamplingRequest asks the caller's model for a completion (MCP sampling/createMessage).
type SamplingRequest struct {
	Messages     []SamplingMessage `json:"messages"`
	SystemPrompt string            `json:"systemPrompt,omitempty"`
	MaxTokens    int               `json:"maxTokens"`
}

// SamplingResult is the caller's model's answer; Text returns its text.
type SamplingResult struct {
	Role       string          `json:"role"`
	Model      string          `json:"model,omitempty"`
	StopReason string          `json:"stopReason,omitempty"`
	Content    json.RawMessage `json:"content"`
}

// Text returns the answer's text content ("" for another content type).
func (r SamplingResult) Text() string {
	var c TextContent
	if json.Unmarshal(r.Content, &c) != nil || c.Type != "text" {
		return ""
	}
	return c.Text
}

// Sample asks the caller's model req under key (see Ask). A message's text content is typed
// "text" for the caller.
func Sample(ctx context.Context, key string, req SamplingRequest) (SamplingResult, error) {
	if len(req.Messages) == 0 || req.MaxTokens <= 0 {
		return SamplingResult{}, fmt.Errorf("sample %s: messages and a positive maxTokens are required", quoteShort(key))
	}
	for i := range req.Messages {
		req.Messages[i].Content.Type = "text"
	}
	var r SamplingResult
	err := askInto(ctx, key, MethodSample, req, &r)
	return r, err
}

// Root is one of the caller's roots (a file:// URI and a name).
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ListRoots asks the caller for its roots under key (see Ask).
func ListRoots(ctx context.Context, key string) ([]Root, error) {
	var r struct {
		Roots []Root `json:"roots"`
	}
	err := askInto(ctx, key, MethodListRoots, struct{}{}, &r)
	return r.Roots, err
}

// CallbackParams is the recorded question of a callback: when its URL expires and the SHA-256
// (hex) of the token in it. The token itself is never recorded: only the URL the tool handed
// out can answer.
type CallbackParams struct {
	Expires     time.Time `json:"expires"`
	TokenSHA256 string    `json:"tokenSha256"`
}

// CallbackResult is what arrived at a callback URL: the request's content type and body (at
// most MaxCallbackBodyBytes).
type CallbackResult struct {
	ContentType string `json:"contentType,omitempty"`
	Body        []byte `json:"body"`
}

// MaxCallbackBodyBytes bounds a callback's body (base64 in the answer stays under
// MaxInputResponseBytes).
const MaxCallbackBodyBytes = 32 << 10

// CallbackMinter makes the URL of a callback for an execution: an unguessable, expiring,
// single-use URL the worker serves (package callbacks), its token's SHA-256 (hex), and when it
// expires.
type CallbackMinter interface {
	MintCallback(ctx context.Context, key string, ttl time.Duration) (url, tokenSHA256 string, expires time.Time, err error)
}

// Callback waits under key for an external system to call back: on the round it is first asked,
// it mints a URL (unguessable, expiring after the tool's InputTimeout, single use), calls hand
// with it (the tool gives it to the system: a webhook registration, a payment's return URL) and
// returns an *InputRequiredError, which the tool returns; the call then waits, holding no worker
// slot, and the tool runs again with what arrived, which Callback returns without calling hand.
// A hand error is returned as it is (nothing is asked). Only the durable path serves callbacks.
func Callback(ctx context.Context, key string, hand func(url string) error) (CallbackResult, error) {
	e := executionFrom(ctx)
	if e != nil {
		if raw, ok := e.InputResponses[key]; ok {
			var r CallbackResult
			if err := json.Unmarshal(raw, &r); err != nil {
				return CallbackResult{}, fmt.Errorf("callback %s: decode what arrived: %w", quoteShort(key), err)
			}
			return r, nil
		}
	}
	if e == nil || e.Asking == nil || e.Callbacks == nil {
		return CallbackResult{}, fmt.Errorf("callback %s: this executor serves no callbacks (the durable path with a worker's callback endpoint does)", quoteShort(key))
	}
	if !inputKeyPattern.MatchString(key) {
		return CallbackResult{}, fmt.Errorf("callback %s: a key is ^[A-Za-z0-9_.:-]{1,64}$", quoteShort(key))
	}
	url, hash, expires, err := e.Callbacks.MintCallback(ctx, key, e.InputTimeout)
	if err != nil {
		return CallbackResult{}, fmt.Errorf("callback %s: %w", quoteShort(key), err)
	}
	if err := hand(url); err != nil {
		return CallbackResult{}, err
	}
	params, err := json.Marshal(CallbackParams{Expires: expires.UTC(), TokenSHA256: hash})
	if err != nil {
		return CallbackResult{}, err
	}
	_, err = Ask(ctx, key, InputRequest{Method: MethodCallback, Params: params})
	return CallbackResult{}, err
}

// InputKeys returns the keys of requests (questions, or answers) in order, for messages.
func InputKeys[V any](requests map[string]V) []string {
	return slices.Sorted(maps.Keys(requests))
}

// IsInputRequired reports whether err's chain holds ErrInputRequired (walked safely, as
// IsTransient does: a tool's error methods may panic or cycle).
func IsInputRequired(err error) bool {
	return walkChain(err, func(e error) bool {
		if _, ok := e.(*InputRequiredError); ok {
			return true
		}
		return e == ErrInputRequired
	})
}
