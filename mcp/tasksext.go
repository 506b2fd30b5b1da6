package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/workflowservice/v1"
	temporalclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// The tasks extension of MCP 2026-07-28 (SEP-2663). A request follows that revision when its
// _meta names it (SEP-2575: there is no session to remember it), and it may use tasks only when
// its own _meta declares the extension. Task creation is server-directed: tools/call of a tool
// whose task support is not forbidden answers with a flat CreateTaskResult once the workflow has
// started (so tasks/get resolves it); tasks/get returns the DetailedTask with the result or
// error inlined; a call waiting for approval is input_required when its tool lets the caller's
// human decide (toolcore.Options.ApprovalByCaller), and tasks/update delivers the decision as
// the workflow's approval update. Like the 2025-11-25 tasks, every answer reads Temporal.

// mcpNameHeader is the SEP-2243 routing header that names a request's target: for tasks/get,
// tasks/update and tasks/cancel, the task (SEP-2663).
const mcpNameHeader = "Mcp-Name"

// approvalWaitQueryTimeout bounds the approval query of a task that runs no tool: a worker that
// does not answer leaves the task "working".
const approvalWaitQueryTimeout = 2 * time.Second

// maxApprovalArgumentsBytes bounds the arguments an approval request quotes.
const maxApprovalArgumentsBytes = 2048

// requestMeta is req's params _meta; nil without params (a notification's params may be a
// typed nil).
func requestMeta(req sdk.Request) map[string]any {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// newProtocol reports whether a request's _meta names 2026-07-28 or later (SEP-2575).
func newProtocol(meta map[string]any) bool {
	v, _ := meta[sdk.MetaKeyProtocolVersion].(string)
	return v >= StatelessRevision
}

// declaresTasks reports whether a request's _meta declares the tasks extension among its
// client capabilities.
func declaresTasks(meta map[string]any) bool {
	caps, _ := meta[sdk.MetaKeyClientCapabilities].(map[string]any)
	extensions, _ := caps["extensions"].(map[string]any)
	_, ok := extensions[wire.MCPTasksExtension]
	return ok
}

// missingTasksCapability is the SEP-2575 error of a request that needs the tasks extension.
func missingTasksCapability(why string) error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{
		"extensions": map[string]any{wire.MCPTasksExtension: map[string]any{}},
	}})
	return &jsonrpc.Error{Code: wire.MCPCodeMissingRequiredClientCapability,
		Message: why + ": declare the " + wire.MCPTasksExtension + " extension in _meta[\"" + sdk.MetaKeyClientCapabilities + "\"].extensions",
		Data:    data}
}

func methodNotFound(message string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: message}
}

// toolTaskSupport is a tool's execution.taskSupport: forbidden when a TaskSupportForbidden glob
// matches its name, else required when a TaskSupportRequired glob does, else optional (every
// toolgate call is durable, so any of them can be a task).
func toolTaskSupport(name string, opts Options) string {
	for _, glob := range opts.TaskSupportForbidden {
		if ok, _ := path.Match(glob, name); ok {
			return wire.MCPTaskSupportForbidden
		}
	}
	for _, glob := range opts.TaskSupportRequired {
		if ok, _ := path.Match(glob, name); ok {
			return wire.MCPTaskSupportRequired
		}
	}
	return wire.MCPTaskSupportOptional
}

// CheckTaskSupportGlobs returns an error naming the first malformed glob (path.Match syntax).
func CheckTaskSupportGlobs(globs []string) error {
	for _, glob := range globs {
		if _, err := path.Match(glob, ""); err != nil {
			return fmt.Errorf("task support glob %q: %w", glob, err)
		}
	}
	return nil
}

type taskUpdateParams struct {
	sdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// inputResponse is one answer of tasks/update: the client's answer to an elicitation/create.
type inputResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// complete is a 2026-07-28 result: m with resultType "complete" unless m names another.
func complete(m map[string]any) (sdk.Result, error) {
	if _, ok := m["resultType"]; !ok {
		m["resultType"] = wire.MCPResultTypeComplete
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &rawResult{raw: data}, nil
}

// middlewareV2 answers the requests of 2026-07-28 clients that concern tasks, and passes the
// others on.
func (t *tasks) middlewareV2(ctx context.Context, method string, req sdk.Request, meta map[string]any, next sdk.MethodHandler) (sdk.Result, error) {
	switch method {
	case "server/discover":
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		return reencode(res, func(m map[string]any) {
			m["resultType"] = wire.MCPResultTypeComplete
			caps, _ := m["capabilities"].(map[string]any)
			if caps == nil {
				caps = map[string]any{}
				m["capabilities"] = caps
			}
			delete(caps, "tasks") // the 2025-11-25 slot; the extension replaces it
			extensions, _ := caps["extensions"].(map[string]any)
			if extensions == nil {
				extensions = map[string]any{}
				caps["extensions"] = extensions
			}
			extensions[wire.MCPTasksExtension] = map[string]any{}
		})
	case "tools/list":
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		return reencode(res, func(m map[string]any) {
			m["resultType"] = wire.MCPResultTypeComplete
			t.addTaskSupport(m)
		})
	case "tools/call":
		call, ok := req.(*sdk.CallToolRequest)
		if !ok {
			return next(ctx, method, req)
		}
		// A legacy "task" member neither asks for nor refuses a task: the server decides.
		delete(call.Params.Meta, wire.MCPTaskMeta)
		support, declared := t.support[call.Params.Name], declaresTasks(meta)
		switch {
		case support == wire.MCPTaskSupportRequired && !declared:
			return nil, missingTasksCapability(fmt.Sprintf("tool %q runs only as a task", call.Params.Name))
		case support == wire.MCPTaskSupportForbidden || !declared:
			return next(ctx, method, req)
		}
		return t.createV2(ctx, call)
	case wire.MCPMethodTasksResult, wire.MCPMethodTasksList:
		return nil, methodNotFound(fmt.Sprintf("%s is not part of the %s tasks extension: tasks/get inlines the result", method, StatelessRevision))
	case wire.MCPMethodTasksGet, wire.MCPMethodTasksCancel, wire.MCPMethodTasksUpdate:
		var taskID string
		switch p := req.GetParams().(type) {
		case *taskIDParams:
			taskID = p.TaskID
		case *taskUpdateParams:
			taskID = p.TaskID
		}
		// Over HTTP, HTTPHandler has checked the Mcp-Name routing header (taskroute.go).
		if !declaresTasks(meta) {
			return nil, missingTasksCapability(method + " needs the tasks extension")
		}
		st, err := t.status(ctx, &taskIDParams{TaskID: taskID})
		if err != nil {
			return nil, err
		}
		switch method {
		case wire.MCPMethodTasksGet:
			return t.getV2(ctx, st, meta)
		case wire.MCPMethodTasksCancel:
			return t.cancelV2(ctx, st)
		default:
			p, _ := req.GetParams().(*taskUpdateParams)
			return t.updateV2(ctx, st, p)
		}
	}
	return next(ctx, method, req)
}

// addTaskSupport sets each tool's execution.taskSupport in a tools/list result m.
func (t *tasks) addTaskSupport(m map[string]any) {
	list, _ := m["tools"].([]any)
	for _, tool := range list {
		if tool, ok := tool.(map[string]any); ok {
			name, _ := tool["name"].(string)
			support := t.support[name]
			if support == "" {
				support = wire.MCPTaskSupportOptional
			}
			tool["execution"] = map[string]any{"taskSupport": support}
		}
	}
}

// TaskInlineWindow is how long a 2026-07-28 tools/call that may become a task waits for its
// result, counted from its tool's start (inlineWindow), before answering with the task: a call
// whose tool completes within it is answered inline, as
// a synchronous call would be (the conformance suite's tasks-immediate-result-shortcut), so a
// quick tool costs a client that allows tasks no tasks/get poll. It is one TaskPollInterval: a
// call done by the client's first poll is answered without one.
const TaskInlineWindow = TaskPollInterval * time.Millisecond

// createV2 starts the call and answers with its result when it completes within
// TaskInlineWindow (inlineResult), or with an InputRequiredResult when its tool asks the client
// meanwhile (inlineOrAsk), else with the flat CreateTaskResult, once the workflow has started
// (tasks/get resolves it from then on). A retry with a requestState answers its round and gets
// the task (resumeTaskV2).
func (t *tasks) createV2(ctx context.Context, req *sdk.CallToolRequest) (sdk.Result, error) {
	if req.Params.RequestState != "" {
		return t.resumeTaskV2(ctx, req) // the answers of an InputRequiredResult (inputtasks.go)
	}
	h, workflowID, runID, err := t.start(ctx, req)
	if err != nil {
		return nil, err
	}
	if res, asked, done, err := t.inlineOrAsk(ctx, h, req, workflowID, runID); done {
		if err != nil {
			return nil, protocolError(err)
		}
		if asked != nil {
			return asked, nil
		}
		return complete(resultMap(h.toolResult(res, workflowID)))
	}
	st, err := t.tg.StatusByWorkflowID(ctx, workflowID)
	if err != nil {
		return nil, protocolError(err)
	}
	m := t.taskV2(st)
	m["resultType"] = wire.MCPResultTypeTask
	return complete(m)
}

// inlineResult waits up to TaskInlineWindow for the outcome of the call: done reports that it
// came (a result, or the error tools/call would answer), else the call becomes a task. A request
// that ends meanwhile leaves the call running: a retry with its idempotency key attaches.
func (t *tasks) inlineResult(ctx context.Context, workflowID, runID string) (res toolcore.Result, done bool, err error) {
	waitCtx, stop := inlineWindow(ctx, t.tg, workflowID, false)
	defer stop()
	res, err = t.tg.ResultOfRun(waitCtx, workflowID, runID)
	if err != nil && waitCtx.Err() != nil {
		return toolcore.Result{}, false, nil
	}
	return res, true, err
}

// resultMap is a CallToolResult as a 2026-07-28 result's members, with resultType "complete"
// (wire.MCPResultTypeComplete): the shape a synchronous tools/call answers, and the one a
// completed task's tasks/get inlines (the ext-tasks client refuses a result without it).
func resultMap(res *sdk.CallToolResult) map[string]any {
	m := map[string]any{}
	if data, err := json.Marshal(res); err == nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()    // structuredContent's numbers as they are
		_ = dec.Decode(&m) // a CallToolResult always marshals to an object
	}
	m["resultType"] = wire.MCPResultTypeComplete
	return m
}

// taskV2 is the Task of SEP-2663 for a call's status, without its input requests, result or
// error: the status maps like the 2025-11-25 tasks' except that an error result is completed
// (the tool ran; result.isError says how it went), and the TTL is the namespace's retention.
func (t *tasks) taskV2(st client.Status) map[string]any {
	task := taskOf(st)
	m := map[string]any{
		"taskId":         task.TaskID,
		"status":         task.Status,
		"createdAt":      task.CreatedAt,
		"lastUpdatedAt":  task.LastUpdatedAt,
		"ttlMs":          nil,
		"pollIntervalMs": TaskPollInterval,
	}
	if t.ttl > 0 {
		m["ttlMs"] = t.ttl.Milliseconds()
	}
	if task.StatusMessage != "" {
		m["statusMessage"] = task.StatusMessage
	}
	if st.State == client.Completed {
		m["status"] = wire.MCPTaskCompleted
		delete(m, "statusMessage")
	}
	return m
}

// getV2 answers tasks/get with the DetailedTask: working or input_required without a result
// (an approval its caller decides, or a consent its request can be asked with: addConsent),
// completed with the CallToolResult inlined, failed with the JSON-RPC error tools/call would
// have answered, cancelled.
func (t *tasks) getV2(ctx context.Context, st client.Status, meta map[string]any) (sdk.Result, error) {
	m := t.taskV2(st)
	switch {
	case st.State == client.Running:
		t.addConsent(st, meta, m)
		t.addApproval(ctx, st, m)
		t.addInput(st, meta, m)
	case st.Result != nil:
		h, ok := t.handlers[st.Result.ToolName()]
		if !ok {
			h = &callHandler{}
		}
		m["result"] = resultMap(h.toolResult(*st.Result, st.WorkflowID))
	case st.State != client.Canceled && st.Err != nil:
		var rpcErr *jsonrpc.Error
		if errors.As(protocolError(st.Err), &rpcErr) {
			m["error"] = rpcErr
		}
	}
	return complete(m)
}

// addApproval marks a running task that waits for an approval decision: input_required with the
// approval's input request when the tool lets the caller decide, else working with a status
// message naming the operators.
func (t *tasks) addApproval(ctx context.Context, st client.Status, m map[string]any) {
	approval, waiting := t.approvalWait(ctx, st)
	if !waiting {
		return
	}
	if !approval.Since.IsZero() {
		m["lastUpdatedAt"] = approval.Since.UTC().Format(time.RFC3339Nano)
	}
	if !t.infos[st.ToolName].ApprovalByCaller {
		m["statusMessage"] = operatorApprovalMessage(st)
		return
	}
	m["status"] = wire.MCPTaskInputRequired
	m["statusMessage"] = "waiting for your approval"
	m["inputRequests"] = map[string]any{
		wire.MCPApprovalInputPrefix + approval.CallHash: map[string]any{
			"method": "elicitation/create",
			"params": map[string]any{
				"mode":            "form",
				"message":         approvalMessage(approval),
				"requestedSchema": approvalSchema,
			},
		},
	}
}

// approvalWait is the approval decision a running task's call waits for, if any. A task whose
// tool runs (an attempt, or a retry scheduled) waits for no decision, so only the others are
// queried; a query that fails or times out counts as no wait.
func (t *tasks) approvalWait(ctx context.Context, st client.Status) (wire.ApprovalState, bool) {
	if st.State != client.Running || st.Attempt > 0 || !st.RetryAt.IsZero() {
		return wire.ApprovalState{}, false
	}
	qctx, cancel := context.WithTimeout(ctx, approvalWaitQueryTimeout)
	defer cancel()
	approval, err := t.tg.ApprovalByWorkflowID(qctx, st.WorkflowID)
	if err != nil || !approval.Waiting {
		return wire.ApprovalState{}, false
	}
	return approval, true
}

// operatorApprovalMessage is the statusMessage of a task waiting for an operator's decision. It
// names the workflow ID, the argument toolgate approve takes (the call ID alone names no call
// when the client has a scope).
func operatorApprovalMessage(st client.Status) string {
	return "waiting for an operator's approval (toolgate approve " + safetext.String(st.WorkflowID) + ")"
}

// approvalMessage says what the caller approves: the tool, the call's hash and its arguments,
// escaped (model-written text shown to a human) and bounded.
func approvalMessage(approval wire.ApprovalState) string {
	args, _ := safetext.JSON(approval.Arguments)
	quoted := string(args)
	if len(quoted) > maxApprovalArgumentsBytes {
		quoted = strings.ToValidUTF8(quoted[:maxApprovalArgumentsBytes], "") + "… (cut)"
	}
	return fmt.Sprintf("Approve the call of tool %s (call %s, %s) with the arguments %s?",
		safetext.String(approval.ToolName), safetext.String(approval.ToolCallID), approval.CallHash, quoted)
}

// approvalSchema is the form of an approval: approve or not, and why (shown to the model on a
// rejection).
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Run the call as shown", "default": false},
		"reason":  map[string]any{"type": "string", "title": "Reason", "description": "Shown to the model when you reject", "maxLength": wire.MaxReasonBytes},
	},
	"required": []string{"approve"},
}

// cancelV2 cancels a working task, waits until its workflow has closed (the tool has seen its
// context canceled) and acknowledges; a terminal task is acknowledged as it is.
func (t *tasks) cancelV2(ctx context.Context, st client.Status) (sdk.Result, error) {
	if st.State == client.Running {
		if err := t.tg.CancelByWorkflowID(ctx, st.WorkflowID); err != nil && !errors.Is(err, client.ErrCallClosed) {
			return nil, protocolError(err)
		}
		waitCtx, stop := context.WithTimeout(ctx, cancelWaitTimeout)
		defer stop()
		_, _ = t.tg.ResultOfRun(waitCtx, st.WorkflowID, st.RunID) // until closed
	}
	return complete(map[string]any{})
}

// updateV2 delivers the approval decision among p's input responses (callerDecision) and the
// answers to the tool's questions (answerTaskInput). Keys that name neither are ignored.
func (t *tasks) updateV2(ctx context.Context, st client.Status, p *taskUpdateParams) (sdk.Result, error) {
	if p == nil || p.InputResponses == nil {
		return nil, invalidParams("missing inputResponses")
	}
	for key, raw := range p.InputResponses {
		callHash, ok := strings.CutPrefix(key, wire.MCPApprovalInputPrefix)
		if !ok {
			continue
		}
		var resp inputResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			return nil, invalidParams(fmt.Sprintf("inputResponses[%q]: %v", key, err))
		}
		if err := t.callerDecision(ctx, st, callHash, resp.Action, resp.Content); err != nil {
			return nil, err
		}
	}
	// The other keys answer the tool's own questions (inputtasks.go).
	if err := t.answerTaskInput(ctx, st, p.InputResponses); err != nil {
		return nil, err
	}
	return complete(map[string]any{})
}

// callerDecision delivers the caller's answer to the approval request of st's call (hash
// callHash) as the workflow's approval update (approvalAnswer: only accept with approve: true
// approves), cancel leaves the call waiting. The reviewer is the request's principal, issuer and
// subject, so the tool's Reviewers still decide who may; a refused decision, and any on a tool
// without ApprovalByCaller, is invalid params and the call goes on waiting.
func (t *tasks) callerDecision(ctx context.Context, st client.Status, callHash, action string, content map[string]any) error {
	if !t.infos[st.ToolName].ApprovalByCaller {
		return invalidParams(fmt.Sprintf("the approvals of tool %s are decided by operators (toolgate approve), not by its callers", st.ToolName))
	}
	if action == "cancel" {
		return nil // dismissed: no decision, the call goes on waiting
	}
	approve, reason, err := approvalAnswer(action, content)
	if err != nil {
		return invalidParams(err.Error())
	}
	issuer, reviewer := reviewerOf(ctx)
	_, err = t.tg.DecideByWorkflowID(ctx, st.WorkflowID, approve, wire.ApprovalDecision{
		CallHash: callHash,
		Reviewer: reviewer,
		Issuer:   issuer,
		Reason:   reason,
	})
	switch {
	case errors.Is(err, client.ErrDecisionRefused), errors.Is(err, client.ErrNotAwaitingApproval):
		return invalidParams(err.Error())
	case err != nil:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return nil
}

// approvalAnswer reads the caller's answer to an approval form (approvalSchema). Only accept with
// "approve" the JSON boolean true approves; accept with anything else ("false", 0, null, a
// missing field, "true" as a string) rejects, and the reason says why, so a malformed or
// ambiguous answer never runs the call. decline rejects with content's reason. An unknown action
// is an error.
func approvalAnswer(action string, content map[string]any) (approve bool, reason string, err error) {
	reason, _ = content["reason"].(string)
	switch action {
	case "accept":
		v, present := content["approve"]
		if v == true {
			return true, "", nil
		}
		why := `the caller's answer did not approve: "approve" was ` + approveKind(v, present) + `, and only the boolean true approves`
		if reason != "" {
			why += ": " + reason
		}
		if len(why) > wire.MaxReasonBytes {
			why = strings.ToValidUTF8(why[:wire.MaxReasonBytes], "")
		}
		return false, why, nil
	case "decline":
		if reason == "" {
			reason = "declined by the caller"
		}
		return false, reason, nil
	default:
		return false, "", fmt.Errorf("the answer's action must be accept, decline or cancel, not %q", action)
	}
}

// approveKind describes an "approve" value that is not true without echoing it.
func approveKind(v any, present bool) string {
	switch v.(type) {
	case nil:
		if !present {
			return "missing"
		}
		return "null"
	case bool:
		return "false"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	default:
		return "not a boolean"
	}
}

// reviewerOf names who decides through the request of ctx: the verified token's issuer and
// subject, or no issuer and "mcp" for the server's own principal (stdio, unauthenticated HTTP).
func reviewerOf(ctx context.Context) (issuer, subject string) {
	principal, _ := ctx.Value(principalKey{}).(string)
	if principal == "" {
		return "", OwnPrincipalScope
	}
	issuer, subject, _ = strings.Cut(principal, "\n")
	return issuer, subject
}

// NamespaceRetention is how long Temporal keeps namespace's closed workflows (Options.TaskTTL).
func NamespaceRetention(ctx context.Context, c temporalclient.Client, namespace string) (time.Duration, error) {
	resp, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	if err != nil {
		return 0, fmt.Errorf("describe namespace %s: %w", namespace, err)
	}
	return resp.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(), nil
}
