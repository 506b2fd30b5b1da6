package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Tasks (the tasks utility of MCP 2025-11-25, the io.modelcontextprotocol/tasks extension) are
// built on the Go SDK's extension points, since v1.8.0 has none: receiving middleware answers
// task-augmented tools/call and adds the capability and each tool's execution.taskSupport to the
// initialize and tools/list results; AddReceivingCustomMethod serves tasks/get, tasks/result,
// tasks/list and tasks/cancel. The SDK's CallToolParams drop the request's "task" member, so
// toolgate's transports (Transport, HTTPHandler) move it into _meta (wire.MCPTaskMeta) first.
//
// A task is the call's workflow: its ID is the workflow ID, and every answer reads Temporal, so
// tasks survive restarts of the MCP server. Requests of MCP 2026-07-28 take the tasks extension's
// shapes instead (tasksext.go); both share the task middleware below.

// TaskPollInterval is the pollInterval (ms) tasks suggest to requestors.
const TaskPollInterval = 500

// taskListPageSize bounds one page of tasks/list.
const taskListPageSize = 100

// Task is the Task object of the MCP tasks utility.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is how long (ms) from its creation the task is kept: the ttl its creation asked for,
	// bounded by the server's maximum, or that maximum (taskttl.go); null when unknown
	// (unlimited).
	TTL          *int64 `json:"ttl"`
	PollInterval int64  `json:"pollInterval,omitempty"`
}

type taskIDParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

type listTasksParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// taskResult is the result of tasks/get and tasks/cancel: the task's members.
type taskResult struct {
	sdk.ResultBase
	Task
}

type createTaskResult struct {
	sdk.ResultBase
	Task Task `json:"task"`
}

type listTasksResult struct {
	sdk.ResultBase
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// rawResult is a result re-encoded by the middleware (initialize, tools/list).
type rawResult struct {
	sdk.ResultBase
	raw json.RawMessage
}

// MarshalJSON is the re-encoded result, with the _meta the SDK set after it (the server's info
// on 2026-07-28 results) merged in.
func (r *rawResult) MarshalJSON() ([]byte, error) {
	if len(r.Meta) == 0 {
		return r.raw, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.raw, &m); err != nil {
		return nil, err
	}
	meta := map[string]any{}
	if raw, ok := m["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
	}
	for k, v := range r.Meta {
		if _, set := meta[k]; !set {
			meta[k] = v
		}
	}
	data, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	m["_meta"] = data
	return json.Marshal(m)
}

// tasksCapability is what the server declares: tasks/list, tasks/cancel and task-augmented
// tools/call.
var tasksCapability = map[string]any{
	"list":     map[string]any{},
	"cancel":   map[string]any{},
	"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
}

// tasks serves the task methods for one server.
type tasks struct {
	tg       *client.Client
	handlers map[string]*callHandler // by tool name
	infos    map[string]toolcore.ToolInfo
	support  map[string]string // each tool's execution.taskSupport
	ttl      time.Duration     // Options.TaskTTL
	sessions sessionLives      // ends each session's task watchers with it
	claims   PrincipalClaims   // Options.PrincipalClaims
	ttls     taskTTLs          // the ttls granted to tasks created here (taskttl.go)
	grants   Grants            // Options.Grants
}

// install adds the task middleware and methods to s.
func (t *tasks) install(s *sdk.Server) error {
	s.AddReceivingMiddleware(t.middleware)
	for _, err := range []error{
		sdk.AddReceivingCustomMethod(s, wire.MCPMethodTasksGet, t.get),
		sdk.AddReceivingCustomMethod(s, wire.MCPMethodTasksResult, t.result),
		sdk.AddReceivingCustomMethod(s, wire.MCPMethodTasksList, t.list),
		sdk.AddReceivingCustomMethod(s, wire.MCPMethodTasksCancel, t.cancel),
		// Answered by middlewareV2; a 2025-11-25 request never reaches it.
		sdk.AddReceivingCustomMethod(s, wire.MCPMethodTasksUpdate,
			func(context.Context, *sdk.ServerSession, *taskUpdateParams) (*taskResult, error) {
				return nil, methodNotFound(wire.MCPMethodTasksUpdate + " is part of the " + StatelessRevision + " tasks extension")
			}),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *tasks) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if extra := req.GetExtra(); extra != nil {
			ctx = withPrincipal(ctx, extra.TokenInfo, t.claims)
		}
		if meta := requestMeta(req); newProtocol(meta) {
			return t.middlewareV2(ctx, method, req, meta, next)
		}
		if method == wire.MCPMethodTasksUpdate {
			return nil, methodNotFound(wire.MCPMethodTasksUpdate + " is part of the " + StatelessRevision + " tasks extension")
		}
		if call, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" {
			_, asked := call.Params.Meta[wire.MCPTaskMeta]
			switch support := t.support[call.Params.Name]; {
			case asked && support == wire.MCPTaskSupportForbidden:
				return nil, methodNotFound(fmt.Sprintf("tool %q does not run as a task (taskSupport forbidden)", call.Params.Name))
			case !asked && support == wire.MCPTaskSupportRequired:
				return nil, methodNotFound(fmt.Sprintf("tool %q runs only as a task (taskSupport required): add \"task\" to the request", call.Params.Name))
			case asked:
				return t.create(ctx, call)
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch method {
		case "initialize":
			return reencode(res, func(m map[string]any) {
				caps, _ := m["capabilities"].(map[string]any)
				if caps == nil {
					caps = map[string]any{}
					m["capabilities"] = caps
				}
				caps["tasks"] = tasksCapability
			})
		case "tools/list":
			return reencode(res, t.addTaskSupport)
		}
		return res, nil
	}
}

// reencode returns res as JSON edited by edit.
func reencode(res sdk.Result, edit func(map[string]any)) (sdk.Result, error) {
	data, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		return nil, err
	}
	return &rawResult{raw: data}, nil
}

// start starts the call of a tools/call that is to be a task, in the caller's scope, detached
// from the request.
func (t *tasks) start(ctx context.Context, req *sdk.CallToolRequest) (h *callHandler, workflowID, runID string, err error) {
	h, ok := t.handlers[req.Params.Name]
	if !ok {
		return nil, "", "", invalidParams(fmt.Sprintf("unknown tool %q", req.Params.Name))
	}
	call, err := h.toolCall(req)
	if err != nil {
		return nil, "", "", err
	}
	if ctx, err = t.grants.startContext(ctx, req.Params.Meta); err != nil {
		return nil, "", "", err
	}
	workflowID, runID, err = ownerOf(ctx, t.tg).tg.StartRun(context.WithoutCancel(ctx), call)
	if err != nil {
		return nil, "", "", protocolError(err)
	}
	return h, workflowID, runID, nil
}

// create starts the call of a task-augmented tools/call and answers with its task. A watcher
// (taskstatus.go) then sends the task's statuses as notifications/tasks/status and, when the
// request carries a progressToken (valid for the task's lifetime), its progress until the call
// closes, the last report included; over streamable HTTP both travel on the client's standalone
// SSE stream.
func (t *tasks) create(ctx context.Context, req *sdk.CallToolRequest) (sdk.Result, error) {
	h, workflowID, runID, err := t.start(ctx, req)
	if err != nil {
		return nil, err
	}
	st, err := t.tg.StatusByWorkflowID(ctx, workflowID)
	if err != nil {
		return nil, protocolError(err)
	}
	t.ttls.grant(workflowID, req, t.ttl)
	task := t.withTTL(taskOf(st))
	if req.Session != nil {
		// Not tied to the request, whose stream (streamable HTTP) closes with this answer: the
		// watcher ends with the session.
		go t.watchTask(req.Session, h, req, req.Params.GetProgressToken(), task, runID)
	}
	return &createTaskResult{Task: task}, nil
}

// get answers tasks/get. A working task whose call waits for a decision its client can give
// (callerApproves), or for its principal's consent and the client declared URL elicitation
// (consentTask), is input_required: tasks/result asks for it. The approval is queried only
// then (a query is a billable action; a client polls tasks/get).
func (t *tasks) get(ctx context.Context, ss *sdk.ServerSession, p *taskIDParams) (*taskResult, error) {
	st, err := t.status(ctx, p)
	if err != nil {
		return nil, err
	}
	task := t.withTTL(taskOf(st))
	consentTask(ss, st, &task)
	inputTask(ss, st, &task)
	if !t.callerApproves(ss, st) {
		return &taskResult{Task: task}, nil
	}
	if approval, waiting := t.approvalWait(ctx, st); waiting {
		task.Status, task.StatusMessage = wire.MCPTaskInputRequired, "waiting for your approval: tasks/result asks for it"
		if !approval.Since.IsZero() {
			task.LastUpdatedAt = approval.Since.UTC().Format(time.RFC3339Nano)
		}
	}
	return &taskResult{Task: task}, nil
}

// callerApproves reports whether the client of ss decides the approvals of st's call: the tool
// lets its caller decide (toolcore.Options.ApprovalByCaller) and the client declared form
// elicitation (the only way a 2025-11-25 server can ask it).
func (t *tasks) callerApproves(ss *sdk.ServerSession, st client.Status) bool {
	if ss == nil || !t.infos[st.ToolName].ApprovalByCaller {
		return false
	}
	init := ss.InitializeParams()
	if init == nil || init.Capabilities == nil || init.Capabilities.Elicitation == nil {
		return false
	}
	caps := init.Capabilities.Elicitation
	return caps.Form != nil || caps.URL == nil // neither declared means form (the 2025-06-18 shape)
}

// approvalRecheck bounds the pause between two looks at a call that may yet wait for its
// caller's approval (resultAsking): from approvalRecheckFirst, doubling up to approvalRecheckMax.
const approvalRecheckFirst, approvalRecheckMax = 100 * time.Millisecond, 5 * time.Second

// resultAsking waits for the result of st's running call. When the client of ss decides its
// approvals (callerApproves), it asks for the decision once the call waits for one (askApproval),
// also when that wait begins after tasks/result did: until then the call is read again at
// growing intervals, and no longer once the tool runs (an approval comes before the first
// attempt) or it has asked.
func (t *tasks) resultAsking(ctx context.Context, ss *sdk.ServerSession, st client.Status) (toolcore.Result, error) {
	if !t.callerApproves(ss, st) {
		return t.tg.ResultOfRun(ctx, st.WorkflowID, st.RunID)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		res toolcore.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := t.tg.ResultOfRun(ctx, st.WorkflowID, st.RunID)
		done <- outcome{res, err}
	}()
	for pause := approvalRecheckFirst; ; pause = min(2*pause, approvalRecheckMax) {
		if approval, waiting := t.approvalWait(ctx, st); waiting {
			if err := t.askApproval(ctx, ss, st, approval); err != nil {
				return toolcore.Result{}, err
			}
			break
		}
		timer := time.NewTimer(pause)
		select {
		case o := <-done:
			timer.Stop()
			return o.res, o.err
		case <-timer.C:
		}
		var err error
		if st, err = t.statusOf(ctx, st.WorkflowID); err != nil {
			return toolcore.Result{}, err
		}
		if st.State != client.Running || st.Attempt > 0 || !st.RetryAt.IsZero() {
			break // the tool runs or the call closed: no decision to ask for
		}
	}
	o := <-done
	return o.res, o.err
}

// askApproval asks the client of ss for the decision the call of st waits for (approval): one
// elicitation/create tied to the task (related-task _meta) on the request's stream, its answer
// delivered like tasks/update's (callerDecision).
func (t *tasks) askApproval(ctx context.Context, ss *sdk.ServerSession, st client.Status, approval wire.ApprovalState) error {
	answer, err := ss.Elicit(ctx, &sdk.ElicitParams{
		Meta:            sdk.Meta{wire.MCPRelatedTaskMeta: map[string]any{"taskId": st.WorkflowID}},
		Mode:            "form",
		Message:         approvalMessage(approval),
		RequestedSchema: approvalSchema,
	})
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "asking for the approval of task " + st.WorkflowID + ": " + err.Error()}
	}
	return t.callerDecision(ctx, st, approval.CallHash, answer.Action, answer.Content)
}

// result waits until the task is terminal and returns what tools/call would have returned,
// asking for the caller's approval on the way when the call waits for it (resultAsking).
func (t *tasks) result(ctx context.Context, ss *sdk.ServerSession, p *taskIDParams) (*sdk.CallToolResult, error) {
	st, err := t.status(ctx, p)
	if err != nil {
		return nil, err
	}
	var res toolcore.Result
	switch {
	case st.State == client.Running:
		// A wait for the principal's consent is asked with a URL-mode elicitation tied to the
		// task, when the client declared them (consent.go).
		var consent *consentShow
		if len(t.infos[st.ToolName].Credentials) > 0 {
			related := sdk.Meta{wire.MCPRelatedTaskMeta: map[string]any{"taskId": st.WorkflowID}}
			consent = showConsent(ctx, t.tg, ss, sessionElicitsURL(ss), nil, related, st.WorkflowID, st.ToolName)
		}
		// The tool's questions are asked of the client on this request's stream (inputtasks.go).
		relay := t.relayTaskInput(ctx, ss, st)
		res, err = t.resultAsking(ctx, ss, st)
		relay.Finish()
		consent.Finish(ctx, st.WorkflowID)
	case st.Result != nil:
		res = *st.Result
	default:
		err = st.Err
	}
	if err != nil {
		return nil, protocolError(err)
	}
	h, ok := t.handlers[res.ToolName()]
	if !ok {
		h = &callHandler{}
	}
	out := h.toolResult(res, st.WorkflowID)
	out.Meta[wire.MCPRelatedTaskMeta] = map[string]any{"taskId": st.WorkflowID}
	return out, nil
}

func (t *tasks) list(ctx context.Context, _ *sdk.ServerSession, p *listTasksParams) (*listTasksResult, error) {
	var token []byte
	if p != nil && p.Cursor != "" {
		var err error
		if token, err = base64.RawURLEncoding.DecodeString(p.Cursor); err != nil {
			return nil, invalidParams("invalid cursor")
		}
	}
	o := ownerOf(ctx, t.tg)
	calls, next, err := o.tg.ListCalls(ctx, taskListPageSize, token)
	if err != nil {
		return nil, protocolError(err)
	}
	out := &listTasksResult{Tasks: make([]Task, 0, len(calls))}
	for _, c := range calls {
		if !o.owns(c.WorkflowID) {
			continue // the ToolPrincipal query selects the owner's; the ID is checked too
		}
		errorResult := c.Outcome != "" && c.Outcome != wire.OutcomeOK
		if c.State == client.Completed && c.Outcome == "" {
			// No ToolOutcome attribute on this namespace: read the result.
			st, err := t.statusOf(ctx, c.WorkflowID)
			if err != nil {
				return nil, err
			}
			errorResult = st.Result != nil && st.Result.IsError()
		}
		out.Tasks = append(out.Tasks, t.withTTL(newTask(c.WorkflowID, c.State, c.Started, c.Closed, errorResult)))
	}
	if next != nil {
		out.NextCursor = base64.RawURLEncoding.EncodeToString(next)
	}
	return out, nil
}

// cancel cancels a working task and returns it once its workflow has closed.
func (t *tasks) cancel(ctx context.Context, _ *sdk.ServerSession, p *taskIDParams) (*taskResult, error) {
	st, err := t.status(ctx, p)
	if err != nil {
		return nil, err
	}
	if st.State != client.Running {
		return nil, invalidParams(fmt.Sprintf("task %s is already %s", st.WorkflowID, taskOf(st).Status))
	}
	if err := t.tg.CancelByWorkflowID(ctx, st.WorkflowID); err != nil && !errors.Is(err, client.ErrCallClosed) {
		return nil, protocolError(err)
	}
	waitCtx, stop := context.WithTimeout(ctx, cancelWaitTimeout)
	defer stop()
	_, _ = t.tg.ResultOfRun(waitCtx, st.WorkflowID, st.RunID) // until closed
	if st, err = t.status(ctx, p); err != nil {
		return nil, err
	}
	return &taskResult{Task: t.withTTL(taskOf(st))}, nil
}

// status reads the call of the task p names; a missing or unknown task ID is invalid params.
func (t *tasks) status(ctx context.Context, p *taskIDParams) (client.Status, error) {
	if p == nil || p.TaskID == "" {
		return client.Status{}, invalidParams("missing taskId")
	}
	return t.statusOf(ctx, p.TaskID)
}

// statusOf reads the call of taskID. A task ID that is not the caller's, or not a
// ToolCallWorkflow, is "not found" like an unknown one: the answer tells nothing of other
// principals' calls or other workflows.
func (t *tasks) statusOf(ctx context.Context, taskID string) (client.Status, error) {
	notFound := invalidParams(fmt.Sprintf("task %s not found", taskID))
	if !ownerOf(ctx, t.tg).owns(taskID) {
		return client.Status{}, notFound
	}
	st, err := t.tg.StatusByWorkflowID(ctx, taskID)
	if errors.Is(err, wire.ErrNotFound) {
		return client.Status{}, notFound
	}
	if err != nil {
		return client.Status{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	if st.ToolCallID == "" { // the recorded input is not a ToolCallWorkflow's call
		return client.Status{}, notFound
	}
	return st, nil
}

// taskOf is the task of a call's status.
func taskOf(st client.Status) Task {
	return newTask(st.WorkflowID, st.State, st.Started, st.Closed, st.Result != nil && st.Result.IsError())
}

// newTask maps a call to its task: running is working, a completed call is completed (failed
// when its result is an error result), canceled is cancelled, and failed, terminated or timed out
// is failed. The status changes only then, so lastUpdatedAt is the close time, or the start time
// while working.
func newTask(workflowID string, state client.State, started, closed time.Time, errorResult bool) Task {
	task := Task{
		TaskID:       workflowID,
		CreatedAt:    started.UTC().Format(time.RFC3339Nano),
		PollInterval: TaskPollInterval,
	}
	updated := closed
	if updated.IsZero() {
		updated = started
	}
	task.LastUpdatedAt = updated.UTC().Format(time.RFC3339Nano)
	switch state {
	case client.Running:
		task.Status = wire.MCPTaskWorking
	case client.Completed:
		task.Status = wire.MCPTaskCompleted
		if errorResult {
			task.Status, task.StatusMessage = wire.MCPTaskFailed, "the tool call ended with an error result"
		}
	case client.Canceled:
		task.Status = wire.MCPTaskCancelled
	default:
		task.Status, task.StatusMessage = wire.MCPTaskFailed, "the tool call "+state.String()
	}
	return task
}
