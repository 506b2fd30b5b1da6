package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// cancelWaitTimeout bounds how long a canceled call waits for its workflow to close.
const cancelWaitTimeout = time.Minute

// callHandler answers tools/call for one tool.
type callHandler struct {
	tg               *client.Client
	hasOutputSchema  bool
	progressInterval time.Duration
	// pollAfter and pollRetry are Options.PollAfter and PollRetry.
	pollAfter, pollRetry time.Duration
	// grants are Options.Grants.
	grants Grants
	// needsConsent: the tool declares credentials (toolcore.ToolInfo.Credentials), so its calls
	// may wait for the principal's consent, and only those are watched for it.
	needsConsent bool
	// states issue and check the requestState of 2026-07-28 input_required results.
	states *requestStates
	// interactive: the tool declares it may ask mid-run (toolcore.ToolInfo.Interactive), so its
	// calls' questions are relayed to clients that can answer, and only those are watched.
	interactive bool
	// parts is Options.Parts.
	parts blobs.Store
	// levels are the log levels sessions set (logging.go).
	levels *sessionLevels
}

// toolCall is the tool call of a tools/call request: its ID is the idempotency key in _meta, or
// a fresh one.
func (h *callHandler) toolCall(req *sdk.CallToolRequest) (toolcore.ToolCall, error) {
	callID := newCallID()
	if v, ok := req.Params.Meta[IdempotencyKeyMeta]; ok {
		key, isString := v.(string)
		if !isString || key == "" {
			return toolcore.ToolCall{}, invalidParams(fmt.Sprintf("_meta %q must be a non-empty string", IdempotencyKeyMeta))
		}
		callID = key
	}
	arguments := []byte(req.Params.Arguments)
	if len(arguments) == 0 || string(arguments) == "null" {
		arguments = []byte("{}")
	}
	call, err := toolcore.NewToolCall(callID, req.Params.Name, arguments)
	if err != nil {
		return toolcore.ToolCall{}, protocolError(err)
	}
	return call, nil
}

func (h *callHandler) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	call, err := h.toolCall(req)
	if err != nil {
		return nil, err
	}
	if ctx, err = h.grants.startContext(ctx, req.Params.Meta); err != nil {
		return nil, err
	}
	if h.pollAfter > 0 && req.Extra != nil && req.Extra.CloseSSEStream != nil {
		// The call goes on; its events, the result included, wait in the event store for the
		// client's GET with Last-Event-ID.
		closeStream := req.Extra.CloseSSEStream
		timer := time.AfterFunc(h.pollAfter, func() { closeStream(sdk.CloseSSEStreamArgs{RetryAfter: h.pollRetry}) })
		defer timer.Stop()
	}
	in, err := inputOfRequest(req)
	if err != nil {
		return nil, err
	}
	in.relay = h.interactive || in.state != "" // others' calls never ask: nothing to relay
	var workflowID, runID string
	firstLook := InputFirstLook
	if in.state != "" {
		// A 2026-07-28 retry: answer the round its requestState names, then wait (input.go).
		if workflowID, err = h.resumeInput(ctx, req, call, in); err != nil {
			return nil, err
		}
		in.responses, firstLook = nil, 0
	} else {
		// The start is detached from the request: a request that ends while starting leaves a
		// call that a retry with the same key attaches to.
		workflowID, runID, err = ownerOf(ctx, h.tg).tg.StartRun(context.WithoutCancel(ctx), call)
		if err != nil {
			return nil, protocolError(err)
		}
	}
	var progress *client.ProgressWatch
	if token := req.Params.GetProgressToken(); token != nil || h.wantsLogs(req) {
		progress = h.startProgress(ctx, req, token, workflowID, runID)
	}
	// A wait for the principal's consent is shown to this request's client (consent.go).
	var consent *consentShow
	if h.needsConsent {
		urlMode := !newProtocol(req.Params.Meta) && sessionElicitsURL(req.Session)
		consent = showConsent(ctx, h.tg, req.Session, urlMode, req.Params.GetProgressToken(), nil, workflowID, req.Params.Name)
	}
	// The tool's questions go to this request's client when it can answer them (input.go).
	relay := relayInput(ctx, h.tg, req.Session, workflowID, in, nil, firstLook, InputInterval)
	// Waiting on the run the start returned saves a DescribeWorkflowExecution per call.
	res, asked, err := h.wait(ctx, workflowID, runID, relay)
	relay.Finish()
	consent.Finish(ctx, workflowID)
	if progress != nil {
		// Before the result: the last report, which no poll may have seen.
		progress.Finish(ctx, err == nil && asked == nil)
	}
	if asked != nil && asked.missing != nil {
		if in.state == "" && req.Params.Meta[IdempotencyKeyMeta] == nil {
			h.abandon(ctx, workflowID) // no one can reach this call again
		}
		return nil, missingCapability(req.Params.Name, asked.missing)
	}
	if asked != nil {
		return h.inputRequired(ctx, req.Params.Name, workflowID, asked.round)
	}
	if err != nil && ctx.Err() != nil {
		return nil, h.requestEnded(ctx, workflowID)
	}
	if err != nil {
		return nil, protocolError(err)
	}
	return h.toolResult(res, workflowID), nil
}

// wait waits for the result of workflowID's call (of run runID, or its current run for ""), or,
// for a 2026-07-28 request, for a round of questions its client answers, whichever comes first.
func (h *callHandler) wait(ctx context.Context, workflowID, runID string, relay *inputRelay) (toolcore.Result, *relayOutcome, error) {
	if relay == nil {
		res, err := h.tg.ResultOfRun(ctx, workflowID, runID)
		return res, nil, err
	}
	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	type outcome struct {
		res toolcore.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.tg.ResultOfRun(waitCtx, workflowID, runID)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, nil, o.err
	case o := <-relay.Required():
		return toolcore.Result{}, &o, nil
	}
}

// requestEnded handles a request whose context ended before the outcome. Only the SDK's handling
// of notifications/cancelled ends it with the bare cause context.Canceled: the workflow is
// cancelled and, once it has closed, the request ends with errRequestCancelled, which no client
// gets (cancelreply.go). A 2026-07-28 request whose client closed it (requestGone: its
// cancellation, as that revision has no notifications/cancelled over HTTP) cancels the workflow
// at once. A connection that broke or a server that is closing carries another cause, and then
// the workflow goes on (a 2025-11-25 client resumes its stream or retries with its key).
func (h *callHandler) requestEnded(ctx context.Context, workflowID string) error {
	gone := requestGone(ctx)
	if !gone && context.Cause(ctx) != context.Canceled {
		return context.Cause(ctx)
	}
	waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWaitTimeout)
	defer cancel()
	if err := h.tg.CancelByWorkflowID(waitCtx, workflowID); err != nil && !errors.Is(err, client.ErrCallClosed) {
		return err
	}
	if gone {
		return errRequestGone // nobody reads the answer
	}
	// Wait until the workflow has closed, so the tool has stopped.
	_, _ = h.tg.ResultByWorkflowID(waitCtx, workflowID)
	return errRequestCancelled
}

// toolResult maps a tool-result message to a CallToolResult.
func (h *callHandler) toolResult(res toolcore.Result, workflowID string) *sdk.CallToolResult {
	out := &sdk.CallToolResult{
		Content: append([]sdk.Content{&sdk.TextContent{Text: res.Content()}}, partContents(h.parts, res.Parts())...),
		IsError: res.IsError(),
	}
	out.Meta = sdk.Meta{WorkflowIDMeta: workflowID}
	if h.hasOutputSchema && !res.IsError() {
		var structured map[string]any
		if json.Unmarshal([]byte(res.Content()), &structured) == nil && structured != nil {
			out.StructuredContent = structured
		}
	}
	return out
}

// Error data types of the -32603 errors (the "type" member of the JSON-RPC error's data).
const (
	ErrorTypeNonRecoverable = "NonRecoverableToolError"
	ErrorTypeCanceled       = "Canceled"
	ErrorTypeTerminated     = "Terminated"
	ErrorTypeTimedOut       = "TimedOut"
)

// protocolError maps a failed call to the JSON-RPC error the MCP spec defines for it.
func protocolError(err error) error {
	var contract *toolcore.ContractError
	var fatal *toolcore.NonRecoverableToolError
	switch {
	case errors.As(err, &contract), errors.Is(err, wire.ErrCallConflict):
		return invalidParams(err.Error())
	case errors.As(err, &fatal):
		return internalError(err, ErrorTypeNonRecoverable)
	case errors.Is(err, wire.ErrCallCanceled):
		return internalError(err, ErrorTypeCanceled)
	case errors.Is(err, wire.ErrCallTerminated):
		return internalError(err, ErrorTypeTerminated)
	case errors.Is(err, wire.ErrCallTimedOut):
		return internalError(err, ErrorTypeTimedOut)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

func invalidParams(message string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: message}
}

func internalError(err error, errorType string) error {
	data, _ := json.Marshal(map[string]string{"type": errorType})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error(), Data: data}
}
