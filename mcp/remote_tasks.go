package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// A remote tool whose tools/list entry says execution.taskSupport "required" is called as a
// task (MCP 2025-11-25 tasks, or at 2026-07-28 the io.modelcontextprotocol/tasks extension):
// tools/call with a "task" member (2026-07-28: declaring the extension in its _meta) creates it,
// tasks/get polls it at the remote's pollInterval (bounded by remoteTaskMinPoll and
// remoteTaskMaxPoll), tasks/result (or the result tasks/get inlines) is its result, and
// cancelling the call sends tasks/cancel (cancelTask). The task's ID and progress token are the
// call's checkpoint (toolcore.Checkpoint: the activity's heartbeat details), recorded before
// any remote progress is reported (heldProgress): an attempt after a lost worker polls the same
// task and never creates a second.

const (
	remoteTaskMinPoll     = 20 * time.Millisecond
	remoteTaskMaxPoll     = 5 * time.Second
	remoteTaskDefaultPoll = 500 * time.Millisecond
	// remoteTaskPollFailures bounds the polls in a row that get no answer (each on a new
	// connection) before the attempt fails as toolcore.Transient.
	remoteTaskPollFailures = 3
	// remoteTaskCancelTimeout bounds the tasks/cancel sent when the call is canceled.
	remoteTaskCancelTimeout = 10 * time.Second
)

// remoteTaskCheckpoint is what an attempt records once the remote task exists.
type remoteTaskCheckpoint struct {
	RemoteTaskID  string `json:"remoteTaskId"`
	ProgressToken string `json:"progressToken"`
}

type remoteTaskParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

// remoteTask is a Task as tasks/get (and, 2026-07-28, the created task) carries it.
type remoteTask struct {
	sdk.ResultBase
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	PollInterval  *int64 `json:"pollInterval,omitempty"`
	// PollIntervalMs is the 2026-07-28 extension's name of PollInterval.
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
	// Result and Error are what the 2026-07-28 extension inlines in a terminal task.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// taskMeta is the _meta of a task request on cs: at 2026-07-28, the tasks extension declared
// (SEP-2575: no session remembers it; the server makes a task of the call of a client that
// declares it, and answers the task methods only then); before, empty.
func taskMeta(cs *sdk.ClientSession) sdk.Meta {
	if res := cs.InitializeResult(); res == nil || res.ProtocolVersion < StatelessRevision {
		return sdk.Meta{}
	}
	return sdk.Meta{sdk.MetaKeyClientCapabilities: map[string]any{
		"extensions": map[string]any{wire.MCPTasksExtension: map[string]any{}},
	}}
}

// taskParams are the params of a task method on cs for the task id.
func taskParams(cs *sdk.ClientSession, id string) *remoteTaskParams {
	p := &remoteTaskParams{TaskID: id}
	p.Meta = taskMeta(cs)
	return p
}

// installTaskMethods lets c send the task methods.
func installTaskMethods(c *sdk.Client) error {
	for _, err := range []error{
		sdk.AddSendingCustomMethod[*remoteTaskParams, *remoteTask](c, "tasks/get"),
		sdk.AddSendingCustomMethod[*remoteTaskParams, *sdk.CallToolResult](c, "tasks/result"),
		sdk.AddSendingCustomMethod[*remoteTaskParams, *remoteTask](c, "tasks/cancel"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// createdTask returns the task a tools/call result stands for (remoteWire put it in _meta).
func createdTask(res *sdk.CallToolResult) (*remoteTask, bool) {
	raw, ok := res.Meta[remoteTaskMeta]
	if !ok {
		return nil, false
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, false
	}
	var task remoteTask
	if json.Unmarshal(data, &task) != nil || task.TaskID == "" {
		return nil, false
	}
	return &task, true
}

// callTask runs the remote tool name as a task, or polls the task an earlier attempt created.
func (r *Remote) callTask(ctx context.Context, name string, args json.RawMessage, ttl time.Duration) (any, error) {
	var cp remoteTaskCheckpoint
	if found, err := toolcore.LastCheckpoint(ctx, &cp); err != nil || !found {
		cp = remoteTaskCheckpoint{}
	}
	if cp.ProgressToken == "" {
		cp.ProgressToken = progressToken()
	}
	held := &heldProgress{ctx: ctx, open: cp.RemoteTaskID != ""}
	route := newProgressRoute(held.report)
	r.progress.Store(cp.ProgressToken, route)
	defer r.progress.Delete(cp.ProgressToken)

	var task *remoteTask
	if cp.RemoteTaskID == "" {
		cs, err := r.session(ctx)
		if err != nil {
			return nil, err
		}
		params := &sdk.CallToolParams{Name: name, Arguments: args, Meta: taskMeta(cs)}
		if len(params.Meta) == 0 {
			params.Meta[remoteTaskRequestMeta] = map[string]any{"ttl": ttl.Milliseconds()}
		}
		if key := toolcore.IdempotencyKey(ctx); key != "" {
			params.Meta[IdempotencyKeyMeta] = key
		}
		params.SetProgressToken(cp.ProgressToken)
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return nil, r.callError(ctx, cs, err)
		}
		created, ok := createdTask(res)
		if !ok {
			// The server answered at once, without a task.
			held.release()
			route.drain(ctx)
			return r.output(res)
		}
		task = created
		cp.RemoteTaskID = task.TaskID
		if err := toolcore.Checkpoint(ctx, cp); err != nil {
			return nil, fmt.Errorf("MCP server %s: record remote task %s: %w", r.prefix, cp.RemoteTaskID, err)
		}
		held.release()
	}
	res, err := r.awaitTask(ctx, cp.RemoteTaskID, task)
	if err != nil {
		return nil, err
	}
	route.drain(ctx)
	return r.output(res)
}

// awaitTask polls the remote task id until it ends and returns its result; task is what the
// server said when it created it (nil on a later attempt).
func (r *Remote) awaitTask(ctx context.Context, id string, task *remoteTask) (*sdk.CallToolResult, error) {
	failures := 0
	for {
		if task != nil {
			switch task.Status {
			case "completed", "failed":
				return r.taskResult(ctx, id, task)
			case "cancelled":
				return nil, fmt.Errorf("MCP server %s: remote task %s was cancelled: %s", r.prefix, id, task.StatusMessage)
			}
		}
		wait := remoteTaskDefaultPoll
		if task != nil {
			if ms := cmp.Or(task.PollInterval, task.PollIntervalMs); ms != nil {
				wait = min(max(time.Duration(*ms)*time.Millisecond, remoteTaskMinPoll), remoteTaskMaxPoll)
			}
		}
		if task != nil { // the first poll of a later attempt does not wait
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				r.cancelTask(ctx, id)
				return nil, ctx.Err()
			}
		}
		cs, err := r.session(ctx)
		if err == nil {
			task, err = sdk.CallCustomMethod[*remoteTaskParams, *remoteTask](ctx, cs, "tasks/get", taskParams(cs, id))
			if err != nil {
				err = r.taskCallError(ctx, cs, err)
			} else if lifted, ok := createdTask(&sdk.CallToolResult{Meta: task.Meta}); ok {
				// A task that says resultType "task" was lifted into _meta like a created one.
				task = lifted
			}
		}
		switch {
		case err == nil:
			failures = 0
		case ctx.Err() != nil:
			r.cancelTask(ctx, id)
			return nil, ctx.Err()
		case toolcore.IsTransient(err) && failures+1 < remoteTaskPollFailures:
			failures++
			task = &remoteTask{Status: "working"} // wait, then poll on a new connection
		default:
			return nil, err
		}
	}
}

// taskResult is the result of the ended task id: inlined by tasks/get, else from tasks/result.
func (r *Remote) taskResult(ctx context.Context, id string, task *remoteTask) (*sdk.CallToolResult, error) {
	if task.Error != nil {
		return nil, fmt.Errorf("MCP server %s: %s (JSON-RPC error %d)", r.prefix, task.Error.Message, task.Error.Code)
	}
	if len(task.Result) > 0 {
		var res sdk.CallToolResult
		if err := json.Unmarshal(task.Result, &res); err != nil {
			return nil, fmt.Errorf("MCP server %s: result of remote task %s: %w", r.prefix, id, err)
		}
		return &res, nil
	}
	cs, err := r.session(ctx)
	if err != nil {
		return nil, err
	}
	res, err := sdk.CallCustomMethod[*remoteTaskParams, *sdk.CallToolResult](ctx, cs, "tasks/result", taskParams(cs, id))
	if err != nil {
		return nil, r.taskCallError(ctx, cs, err)
	}
	return res, nil
}

// remoteTaskGone is the error of a task method the remote server answered with invalid params
// (-32602), its answer for a task ID it does not know (expired, or never created). Its text is
// callError's: the call's result reads the same.
type remoteTaskGone struct{ error }

func (e remoteTaskGone) Unwrap() error { return e.error }

// taskCallError is callError for a task method: a remote that does not know the task is
// remoteTaskGone.
func (r *Remote) taskCallError(ctx context.Context, cs *sdk.ClientSession, err error) error {
	mapped := r.callError(ctx, cs, err)
	var rpcErr *jsonrpc.Error
	if ctx.Err() == nil && errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams {
		return remoteTaskGone{mapped}
	}
	return mapped
}

// cancelTask sends tasks/cancel for id when ctx ended because the call was canceled: by
// toolgate (the cause is a Temporal CanceledError) or by an in-process caller (context.Canceled).
// An attempt that timed out, or whose worker stops, leaves the task running for the next attempt
// to poll.
func (r *Remote) cancelTask(ctx context.Context, id string) {
	cause := context.Cause(ctx)
	var canceled *temporal.CanceledError
	if !errors.As(cause, &canceled) && cause != context.Canceled {
		return
	}
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), remoteTaskCancelTimeout)
	defer stop()
	cs, err := r.connect(ctx)
	if err != nil {
		return
	}
	_, _ = sdk.CallCustomMethod[*remoteTaskParams, *remoteTask](ctx, cs, "tasks/cancel", taskParams(cs, id))
}

// taskSupportOf reads a remote tool's execution.taskSupport ("forbidden" when absent).
func taskSupportOf(remote *sdk.Tool) string {
	raw, ok := remote.Meta[remoteExecutionMeta]
	if !ok {
		return "forbidden"
	}
	data, _ := json.Marshal(raw)
	var execution struct {
		TaskSupport string `json:"taskSupport"`
	}
	if json.Unmarshal(data, &execution) != nil || execution.TaskSupport == "" {
		return "forbidden"
	}
	return execution.TaskSupport
}

// heldProgressMax bounds the reports heldProgress keeps (the latest ones).
const heldProgressMax = 64

// heldProgress reports a task call's progress once released, after the task's checkpoint:
// every heartbeat that carries remote progress carries the task ID too. Reports that come
// before are kept, in order, and reported at the release.
type heldProgress struct {
	ctx  context.Context
	mu   sync.Mutex
	open bool
	held []toolcore.Progress
}

func (h *heldProgress) report(p toolcore.Progress) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.open {
		if len(h.held) == heldProgressMax {
			h.held = h.held[1:]
		}
		h.held = append(h.held, p)
		return
	}
	toolcore.ReportProgress(h.ctx, p)
}

func (h *heldProgress) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = true
	for _, p := range h.held {
		toolcore.ReportProgress(h.ctx, p)
	}
	h.held = nil
}
