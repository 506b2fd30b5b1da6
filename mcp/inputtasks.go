package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Tasks whose call waits for answers to its tool's questions (input.go). A task is
// input_required only for a client that can answer at least one of the round's questions; else it
// stays working with a statusMessage saying what it waits for (another answerer may give it).
//
//   - 2026-07-28 (the tasks extension): tasks/get lists the questions the request's _meta
//     declares it answers in inputRequests, under the tool's own keys; tasks/update with
//     inputResponses answers any of them (a subset too: the task stays input_required with the
//     rest), acknowledged at once; keys the round does not ask are ignored.
//   - 2025-11-25: tasks/get says input_required, and tasks/result, the spec's side channel, sends
//     the questions to the client (elicitation/create, sampling/createMessage, roots/list tied to
//     the task by its related-task _meta) and their answers to the call while it waits.

// inputMessage is the statusMessage of a task waiting for answers.
func inputMessage(st wire.InputState, forClient bool) string {
	if forClient {
		return fmt.Sprintf("waiting for your input (round %d)", st.Round)
	}
	return fmt.Sprintf("waiting for input another answerer gives (round %d, until %s)", st.Round, st.Deadline.UTC().Format(time.RFC3339))
}

// addInput marks a running 2026-07-28 task whose call waits for answers: input_required with the
// questions the request's client answers among its inputRequests, else working with a status
// message.
func (t *tasks) addInput(st client.Status, meta map[string]any, m map[string]any) {
	in := st.Input
	if in == nil || !in.Waiting {
		return
	}
	if !in.Since.IsZero() {
		m["lastUpdatedAt"] = in.Since.UTC().Format(time.RFC3339Nano)
	}
	offer := metaInputCaps(meta).offered(in.Requests)
	if len(offer) == 0 {
		m["statusMessage"] = inputMessage(*in, false)
		return
	}
	requests, _ := m["inputRequests"].(map[string]any)
	if requests == nil {
		requests = map[string]any{}
	}
	for k, q := range offer {
		params := q.Params
		if len(params) == 0 {
			params = json.RawMessage(`{}`)
		}
		requests[k] = map[string]any{"method": q.Method, "params": params}
	}
	m["status"] = wire.MCPTaskInputRequired
	m["statusMessage"] = inputMessage(*in, true)
	m["inputRequests"] = requests
}

// answerTaskInput sends the answers among responses to the questions st's call waits for (the
// current round's; never a callback's). Keys it does not ask are ignored, as is a call that does
// not wait; a refused answer is invalid params.
func (t *tasks) answerTaskInput(ctx context.Context, st client.Status, responses map[string]json.RawMessage) error {
	if len(responses) == 0 {
		return nil
	}
	if len(responses) > maxInputResponses {
		return invalidParams(fmt.Sprintf("inputResponses has %d answers, limit %d", len(responses), maxInputResponses))
	}
	waiting, err := t.tg.InputByWorkflowID(ctx, st.WorkflowID)
	if err != nil || !waiting.Waiting {
		return nil // nothing asked (or no worker to say): nothing to answer
	}
	answers := answersFor(waiting.Requests, responses)
	if len(answers) == 0 {
		return nil
	}
	_, err = t.tg.AnswerInputByWorkflowID(ctx, st.WorkflowID, wire.InputAnswer{Round: waiting.Round, Responses: answers, By: answeredBy(ctx)})
	switch {
	case errors.Is(err, client.ErrInputRefused):
		return invalidParams(err.Error())
	case err != nil && !errors.Is(err, client.ErrNotAwaitingInput):
		return protocolError(err)
	}
	return nil
}

// inputTask marks a running 2025-11-25 task whose call waits for answers: input_required when
// the client of ss answers one of the questions (tasks/result asks them), else working with a
// status message.
func inputTask(ss *sdk.ServerSession, st client.Status, task *Task) {
	in := st.Input
	if in == nil || !in.Waiting {
		return
	}
	if !in.Since.IsZero() {
		task.LastUpdatedAt = in.Since.UTC().Format(time.RFC3339Nano)
	}
	if len(sessionInputCaps(ss).offered(in.Requests)) == 0 {
		task.StatusMessage = inputMessage(*in, false)
		return
	}
	task.Status = wire.MCPTaskInputRequired
	task.StatusMessage = inputMessage(*in, true) + ": tasks/result asks for it"
}

// relayTaskInput relays the questions of a 2025-11-25 task's call to the client waiting in
// tasks/result (ss), tied to the task; nil when the tool never asks or the client answers
// nothing.
func (t *tasks) relayTaskInput(ctx context.Context, ss *sdk.ServerSession, st client.Status) *inputRelay {
	if ss == nil || !t.infos[st.ToolName].Interactive {
		return nil
	}
	related := sdk.Meta{wire.MCPRelatedTaskMeta: map[string]any{"taskId": st.WorkflowID}}
	return relayInput(ctx, t.tg, ss, st.WorkflowID, callInput{caps: sessionInputCaps(ss), relay: true}, related, 0, InputInterval)
}

// inlineInputInterval is how often a task-capable 2026-07-28 request reads its call's wait for
// input within TaskInlineWindow.
const inlineInputInterval = 100 * time.Millisecond

// resultTypeInputRequired is the resultType of an InputRequiredResult (SEP-2322).
const resultTypeInputRequired = "input_required"

// resumeTaskV2 answers the round a task-capable 2026-07-28 retry's requestState names and
// answers with the call's task: input gathered by InputRequiredResults ends in a task, never in
// an inline result (SEP-2663's composition with SEP-2322).
func (t *tasks) resumeTaskV2(ctx context.Context, req *sdk.CallToolRequest) (sdk.Result, error) {
	h, ok := t.handlers[req.Params.Name]
	if !ok {
		return nil, invalidParams(fmt.Sprintf("unknown tool %q", req.Params.Name))
	}
	call, err := h.toolCall(req)
	if err != nil {
		return nil, err
	}
	in, err := inputOfRequest(req)
	if err != nil {
		return nil, err
	}
	workflowID, err := h.resumeInput(ctx, req, call, in)
	if err != nil {
		return nil, err
	}
	st, err := t.tg.StatusByWorkflowID(ctx, workflowID)
	if err != nil {
		return nil, protocolError(err)
	}
	m := t.taskV2(st)
	m["resultType"] = wire.MCPResultTypeTask
	return complete(m)
}

// inlineOrAsk is inlineResult for the call of a task-capable 2026-07-28 request: when its tool
// may ask and, within TaskInlineWindow, asks questions the request's client answers, the request
// ends with the InputRequiredResult (asked) instead of a task; the retry with the answers gets
// the task (resumeTaskV2).
func (t *tasks) inlineOrAsk(ctx context.Context, h *callHandler, req *sdk.CallToolRequest, workflowID, runID string) (res toolcore.Result, asked sdk.Result, done bool, err error) {
	if !h.interactive {
		res, done, err = t.inlineResult(ctx, workflowID, runID)
		return res, nil, done, err
	}
	in, err := inputOfRequest(req)
	if err != nil {
		in = callInput{stateless: true, caps: metaInputCaps(req.Params.Meta)} // answers it cannot read are dropped
	}
	in.relay, in.task = true, true
	waitCtx, stop := inlineWindow(ctx, t.tg, workflowID, true)
	defer stop()
	relay := relayInput(waitCtx, t.tg, req.Session, workflowID, in, nil, 0, inlineInputInterval)
	res, o, err := h.wait(waitCtx, workflowID, runID, relay)
	relay.Finish()
	switch {
	case o != nil && o.missing == nil && !o.toTask:
		ir, err := h.inputRequired(ctx, req.Params.Name, workflowID, o.round)
		if err != nil {
			return toolcore.Result{}, nil, true, err
		}
		m := resultMap(ir)
		m["resultType"] = resultTypeInputRequired
		delete(m, "content")
		asked, err := complete(m)
		return toolcore.Result{}, asked, true, err
	case o != nil, err != nil && waitCtx.Err() != nil:
		return toolcore.Result{}, nil, false, nil
	}
	return res, nil, true, err
}
