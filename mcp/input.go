package mcp

//lint:file-ignore SA1019 sampling and roots, deprecated at 2026-07-28, are current at 2025-11-25, which this file serves too

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// A tool that asks mid-run (toolcore.Ask, Elicit, Confirm, Sample, ListRoots) ends its attempt
// and its call waits durably for the answers (the update wire.UpdateInput). The MCP front hands
// the questions to the client of the tools/call request, if that client declared it can answer
// them (elicitation, form or url mode, sampling, roots), and sends back what it answers:
//
//   - 2026-07-28: the request ends with an InputRequiredResult (resultType "input_required",
//     inputRequests, and a requestState bound to the call's round, its tool and the principal:
//     requeststate.go); the client's retry of the same tools/call with inputResponses and the
//     requestState answers the round and goes on waiting for the result, or the next round.
//     inputResponses without a requestState answer the questions of the request's own call as
//     it asks them (keys it never asks are ignored).
//   - 2025-11-25: elicitation/create, sampling/createMessage or roots/list on the request's
//     stream, each answer sent to the call as it comes.
//
// Questions the client cannot answer (a method it did not declare, a callback, which only its URL
// answers) are not offered: they stay for another answerer (the Go client's hook, toolgate call,
// an operator), and the call ends TOOL_EXECUTION_FAILED at its tool's InputTimeout without one.
// A request whose client declares none of them, and brings no inputResponses, does not watch its
// call at all.

// Reads of a call's wait for input by a tools/call request whose client can answer.
const (
	// InputInterval is how often such a request reads its call's wait for input: one
	// DescribeWorkflowExecution, and a query only while the call waits.
	InputInterval = time.Second
	// InputFirstLook is when the first read comes after the call starts: a call that ends sooner
	// costs nothing. A retry that answers reads at once.
	InputFirstLook = 200 * time.Millisecond
	// maxInputResponses bounds the inputResponses of one request.
	maxInputResponses = 2 * toolcore.MaxInputRequests
)

// inputCaps are the questions a client declared it answers.
type inputCaps struct {
	form, url, sampling, roots bool
}

// any reports whether the client answers some question.
func (c inputCaps) any() bool { return c.form || c.url || c.sampling || c.roots }

// answers reports whether the client answers q. A callback is answered only by its URL.
func (c inputCaps) answers(q toolcore.InputRequest) bool {
	switch q.Method {
	case toolcore.MethodElicit:
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(q.Params, &p) // malformed: form, which the client then refuses
		if p.Mode == "url" {
			return c.url
		}
		return c.form
	case toolcore.MethodSample:
		return c.sampling
	case toolcore.MethodListRoots:
		return c.roots
	}
	return false
}

// offered returns the questions of requests the client answers.
func (c inputCaps) offered(requests map[string]toolcore.InputRequest) map[string]toolcore.InputRequest {
	out := map[string]toolcore.InputRequest{}
	for k, q := range requests {
		if c.answers(q) {
			out[k] = q
		}
	}
	return out
}

// elicitCaps maps an elicitation capability: an empty one is form mode (the spec's backward
// compatibility), url only when declared.
func elicitCaps(c *inputCaps, declared, form, url bool) {
	c.form = declared && (form || !url)
	c.url = declared && url
}

// metaInputCaps reads the client capabilities a 2026-07-28 request declares in its _meta.
func metaInputCaps(meta map[string]any) inputCaps {
	caps, _ := meta[sdk.MetaKeyClientCapabilities].(map[string]any)
	var c inputCaps
	elicitation, declared := caps["elicitation"].(map[string]any)
	_, form := elicitation["form"]
	_, url := elicitation["url"]
	elicitCaps(&c, declared, form, url)
	_, c.sampling = caps["sampling"].(map[string]any)
	_, c.roots = caps["roots"].(map[string]any)
	return c
}

// sessionInputCaps reads the client capabilities a 2025-11-25 session declared at initialize.
// Roots count as declared when the SDK shows them (listChanged; it drops an empty roots object).
func sessionInputCaps(ss *sdk.ServerSession) inputCaps {
	var c inputCaps
	if ss == nil {
		return c
	}
	init := ss.InitializeParams()
	if init == nil || init.Capabilities == nil {
		return c
	}
	caps := init.Capabilities
	if e := caps.Elicitation; e != nil {
		elicitCaps(&c, true, e.Form != nil, e.URL != nil)
	}
	c.sampling = caps.Sampling != nil
	c.roots = caps.RootsV2 != nil || caps.Roots.ListChanged
	return c
}

// callInput is what a tools/call request brings for its call's questions.
type callInput struct {
	// stateless: a 2026-07-28 request, answered with an InputRequiredResult.
	stateless bool
	caps      inputCaps
	// state is the retry's requestState ("" for none).
	state string
	// responses are the request's inputResponses, as JSON, by key.
	responses map[string]json.RawMessage
	// relay: the request's call may ask (an Interactive tool's, or a retry's), so it is watched.
	relay bool
	// task: the request may become a task, which waits for another answerer: questions its
	// client cannot answer do not end it.
	task bool
}

// inputOfRequest reads req's client capabilities, requestState and inputResponses (only a
// 2026-07-28 request sends the last two), bounded.
func inputOfRequest(req *sdk.CallToolRequest) (callInput, error) {
	p := req.Params
	in := callInput{stateless: newProtocol(p.Meta)}
	if !in.stateless {
		in.caps = sessionInputCaps(req.Session)
		return in, nil
	}
	in.caps = metaInputCaps(p.Meta)
	in.state = p.RequestState
	if len(p.InputResponses) > maxInputResponses {
		return callInput{}, invalidParams(fmt.Sprintf("inputResponses has %d answers, limit %d", len(p.InputResponses), maxInputResponses))
	}
	for k, v := range p.InputResponses {
		data, err := json.Marshal(v)
		switch {
		case err != nil || len(data) == 0 || data[0] != '{':
			return callInput{}, invalidParams(fmt.Sprintf("inputResponses[%q] is not a result object", k))
		case len(data) > toolcore.MaxInputResponseBytes:
			return callInput{}, invalidParams(fmt.Sprintf("inputResponses[%q] has %d bytes, limit %d", k, len(data), toolcore.MaxInputResponseBytes))
		}
		if in.responses == nil {
			in.responses = map[string]json.RawMessage{}
		}
		in.responses[k] = data
	}
	return in, nil
}

// answeredBy is the InputAnswer.By of a request's answers: its principal's scope (never the
// subject itself, which stays out of history).
func answeredBy(ctx context.Context) string {
	return "mcp " + PrincipalScope(callerOf(ctx).key)
}

// resumeInput answers, with a retry's inputResponses, the round its requestState names, and
// returns the call's workflow ID to wait on. The state must verify for this tool and principal
// and name a call of the principal's; an idempotency key, if any, must name the same call. A
// round that has moved on (answered by another retry or answerer) takes no answer: the retry
// just waits. Answers to keys the round does not ask are ignored.
func (h *callHandler) resumeInput(ctx context.Context, req *sdk.CallToolRequest, call toolcore.ToolCall, in callInput) (string, error) {
	st, err := h.states.open(in.state, req.Params.Name, callerOf(ctx).key)
	if err != nil {
		return "", invalidParams(err.Error())
	}
	o := ownerOf(ctx, h.tg)
	if !o.owns(st.WorkflowID) {
		return "", invalidParams(errStateForeign.Error())
	}
	if _, keyed := req.Params.Meta[IdempotencyKeyMeta]; keyed && o.tg.WorkflowID(call.ID()) != st.WorkflowID {
		return "", invalidParams(fmt.Sprintf("requestState names another call than _meta %q", IdempotencyKeyMeta))
	}
	if len(in.responses) == 0 {
		return st.WorkflowID, nil
	}
	waiting, err := h.tg.InputByWorkflowID(ctx, st.WorkflowID)
	switch {
	case errors.Is(err, wire.ErrNotFound):
		return "", invalidParams(errStateMalformed.Error())
	case err != nil:
		return "", protocolError(err)
	case !waiting.Waiting || waiting.Round != st.Round:
		return st.WorkflowID, nil
	}
	answers := answersFor(waiting.Requests, in.responses)
	if len(answers) == 0 {
		return st.WorkflowID, nil
	}
	_, err = h.tg.AnswerInputByWorkflowID(ctx, st.WorkflowID, wire.InputAnswer{Round: st.Round, Responses: answers, By: answeredBy(ctx)})
	switch {
	case errors.Is(err, client.ErrInputRefused):
		return "", invalidParams(err.Error())
	case err != nil && !errors.Is(err, client.ErrNotAwaitingInput):
		return "", protocolError(err)
	}
	return st.WorkflowID, nil
}

// answersFor picks from responses the answers to requests (never a callback's).
func answersFor(requests map[string]toolcore.InputRequest, responses map[string]json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, q := range requests {
		if v, ok := responses[k]; ok && q.Method != toolcore.MethodCallback {
			out[k] = v
		}
	}
	return out
}

// inputRelay relays one call's questions to the client of one request, for as long as the
// request waits for the call's result.
type inputRelay struct {
	tg         *client.Client
	ss         *sdk.ServerSession
	workflowID string
	in         callInput
	by         string
	related    sdk.Meta // the related-task _meta of a 2025-11-25 task's requests, or nil

	// required receives, for a 2026-07-28 request, the first round with questions its client
	// answers, or the capabilities it lacks to answer any of a round's; the request then ends.
	required chan relayOutcome

	mu        sync.Mutex
	watch     *client.InputWatch
	stopped   bool
	first     *time.Timer
	pool      map[string]json.RawMessage // inputResponses not yet sent
	endRound  context.CancelFunc         // ends the asks of the current round
	asks      sync.WaitGroup
	endAsking context.CancelFunc
}

// relayOutcome is how a 2026-07-28 request's wait ends on its call's questions: a round with
// the questions its client answers, or the capabilities it lacks to answer any of a round's.
type relayOutcome struct {
	round   wire.InputState
	missing map[string]any
	// toTask: a task-capable request's round holds only questions its client cannot answer,
	// which the task asks (tasks/get lists them).
	toTask bool
}

// errRelayDone stops the watch once a 2026-07-28 request has its outcome.
var errRelayDone = errors.New("the request hands the round back")

// relayInput starts relaying workflowID's questions to the client of a request (ss for a
// 2025-11-25 session), the first read after delay, then every interval; nil when its call is not
// watched (in.relay false), or a 2025-11-25 client answers nothing and brought no answers.
func relayInput(ctx context.Context, tg *client.Client, ss *sdk.ServerSession, workflowID string, in callInput, related sdk.Meta, delay, interval time.Duration) *inputRelay {
	if !in.relay || (!in.stateless && !in.caps.any() && len(in.responses) == 0) {
		return nil
	}
	askCtx, endAsking := context.WithCancel(ctx)
	r := &inputRelay{tg: tg, ss: ss, workflowID: workflowID, in: in, by: answeredBy(ctx), related: related,
		required: make(chan relayOutcome, 1), pool: maps.Clone(in.responses), endAsking: endAsking, endRound: func() {}}
	start := func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.stopped {
			r.watch = tg.WatchInput(ctx, workflowID, interval, func(_ context.Context, st wire.InputState) error {
				return r.deliver(askCtx, st)
			})
		}
	}
	if delay <= 0 {
		start()
	} else {
		r.first = time.AfterFunc(delay, start)
	}
	return r
}

// Required is how a 2026-07-28 request's wait ends on its call's questions; nil for none.
func (r *inputRelay) Required() <-chan relayOutcome {
	if r == nil {
		return nil
	}
	return r.required
}

// deliver handles one read of the call's wait: a new round (Waiting) or the end of one.
func (r *inputRelay) deliver(ctx context.Context, st wire.InputState) error {
	r.endRound()
	r.endRound = func() {}
	if !st.Waiting {
		return nil
	}
	requests := maps.Clone(st.Requests)
	if answers := answersFor(requests, r.pool); len(answers) > 0 {
		for k := range answers {
			delete(r.pool, k)
		}
		_, err := r.tg.AnswerInputByWorkflowID(ctx, r.workflowID, wire.InputAnswer{Round: st.Round, Responses: answers, By: r.by})
		if err == nil {
			for k := range answers {
				delete(requests, k)
			}
		}
	}
	offer := r.in.caps.offered(requests)
	if len(offer) == 0 {
		if missing := missingCaps(requests); r.in.stateless && !r.in.task && len(missing) > 0 {
			r.required <- relayOutcome{missing: missing}
			return errRelayDone
		}
		if r.in.stateless && r.in.task && len(requests) > 0 {
			r.required <- relayOutcome{toTask: true}
			return errRelayDone
		}
		return nil // answered, or for another answerer
	}
	if r.in.stateless {
		st.Requests = offer
		r.required <- relayOutcome{round: st}
		return errRelayDone
	}
	roundCtx, endRound := context.WithCancel(ctx)
	r.endRound = endRound
	for _, k := range slices.Sorted(maps.Keys(offer)) {
		r.asks.Add(1)
		go func() {
			defer r.asks.Done()
			r.ask(roundCtx, st.Round, k, offer[k])
		}()
	}
	return nil
}

// missingCaps is the client capabilities (a ClientCapabilities object) that would answer the
// questions of requests a client may answer (not callbacks).
func missingCaps(requests map[string]toolcore.InputRequest) map[string]any {
	all := inputCaps{form: true, url: true, sampling: true, roots: true}
	out := map[string]any{}
	for _, q := range requests {
		if !all.answers(q) {
			continue
		}
		switch {
		case q.Method == toolcore.MethodSample:
			out["sampling"] = map[string]any{}
		case q.Method == toolcore.MethodListRoots:
			out["roots"] = map[string]any{}
		case (inputCaps{url: true}).answers(q):
			out["elicitation"] = map[string]any{"url": map[string]any{}}
		default:
			out["elicitation"] = map[string]any{"form": map[string]any{}}
		}
	}
	return out
}

// missingCapability is the -32021 error of a 2026-07-28 request whose call asks questions its
// client declared it cannot answer, none of which it can.
func missingCapability(toolName string, missing map[string]any) error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": missing})
	return &jsonrpc.Error{Code: wire.MCPCodeMissingRequiredClientCapability,
		Message: "tool " + toolName + " asks for input this client does not declare it gives (" + strings.Join(slices.Sorted(maps.Keys(missing)), ", ") +
			"): declare it in _meta[\"" + sdk.MetaKeyClientCapabilities + "\"]",
		Data: data}
}

// ask sends q to the 2025-11-25 client and its answer to the call. A failed request (the client
// refused it, the round ended) leaves the question for another answerer.
func (r *inputRelay) ask(ctx context.Context, round int, key string, q toolcore.InputRequest) {
	answer, err := askSession(ctx, r.ss, q, r.related)
	if err != nil || ctx.Err() != nil {
		return
	}
	_, _ = r.tg.AnswerInputByWorkflowID(ctx, r.workflowID, wire.InputAnswer{Round: round,
		Responses: map[string]json.RawMessage{key: answer}, By: r.by})
}

// askSession sends q to the client of ss and returns its result as JSON.
func askSession(ctx context.Context, ss *sdk.ServerSession, q toolcore.InputRequest, related sdk.Meta) (json.RawMessage, error) {
	var res any
	var err error
	switch q.Method {
	case toolcore.MethodElicit:
		var p sdk.ElicitParams
		if err := json.Unmarshal(q.Params, &p); err != nil {
			return nil, err
		}
		p.Meta = related
		res, err = ss.Elicit(ctx, &p)
	case toolcore.MethodSample:
		var p sdk.CreateMessageParams
		if err := json.Unmarshal(q.Params, &p); err != nil {
			return nil, err
		}
		p.Meta = related
		res, err = ss.CreateMessage(ctx, &p)
	case toolcore.MethodListRoots:
		res, err = ss.ListRoots(ctx, &sdk.ListRootsParams{Meta: related})
	default:
		return nil, fmt.Errorf("method %s is not asked of a client", q.Method)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// Finish stops relaying, before the request answers: the watch stops and questions still asked
// of the client are withdrawn. A nil relay does nothing.
func (r *inputRelay) Finish() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.stopped = true
	if r.first != nil {
		r.first.Stop()
	}
	watch := r.watch
	r.mu.Unlock()
	watch.Stop()
	r.endAsking()
	r.asks.Wait()
}

// inputRequired is the InputRequiredResult of a round: its questions in the SDK's types and the
// requestState of the round.
func (h *callHandler) inputRequired(ctx context.Context, toolName, workflowID string, st wire.InputState) (*sdk.CallToolResult, error) {
	requests := sdk.InputRequestMap{}
	for k, q := range st.Requests {
		ir, err := sdkInputRequest(q)
		if err != nil {
			return nil, fmt.Errorf("input request %q: %w", k, err)
		}
		requests[k] = ir
	}
	return &sdk.CallToolResult{
		InputRequests: requests,
		RequestState:  h.states.issue(workflowID, st.Round, toolName, callerOf(ctx).key, st.Deadline),
		Meta:          sdk.Meta{WorkflowIDMeta: workflowID},
	}, nil
}

// sdkInputRequest is q as the SDK's typed input request.
func sdkInputRequest(q toolcore.InputRequest) (sdk.InputRequest, error) {
	params := q.Params
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	switch q.Method {
	case toolcore.MethodElicit:
		var p sdk.ElicitParams
		return &p, json.Unmarshal(params, &p)
	case toolcore.MethodSample:
		var p sdk.CreateMessageParams
		return &p, json.Unmarshal(params, &p)
	case toolcore.MethodListRoots:
		var p sdk.ListRootsParams
		return &p, json.Unmarshal(params, &p)
	}
	return nil, fmt.Errorf("method %s is not asked of a client", q.Method)
}

// abandon cancels the call of workflowID that nobody can reach any more (a fresh 2026-07-28
// call without an idempotency key, whose client cannot answer its questions); the request does
// not wait for it to close.
func (h *callHandler) abandon(ctx context.Context, workflowID string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refuseTimeout)
	defer cancel()
	_ = h.tg.CancelByWorkflowID(cctx, workflowID) // a call that ended meanwhile needs nothing
}
