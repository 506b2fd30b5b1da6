package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// taskFixtureArg makes the test binary a stdio MCP server whose tools "double" (idempotent) and
// "charge" (destructive, so Unsafe; it doubles n too) can only be called as tasks
// (execution.taskSupport "required"): `ARG DIR SHAPE`, SHAPE
// "2025-11-25" (a 2025-11-25 server: no server/discover; a "task" member asks for a task,
// CreateTaskResult {task}, tasks/result) or "2026-07-28" (the tasks extension: declared in the
// request's _meta, a flat task with resultType "task", the result inlined by tasks/get, no
// tasks/result). Its tasks live in DIR, so a second server process (of
// a second worker) answers for the tasks of the first, like a remote service with a database:
//   - DIR/starts gets one line per task created (a start of the tool);
//   - DIR/task-ID holds the task (arguments, progress token, cancelled);
//   - a task is working until DIR/release exists, then completed;
//   - DIR/cancels gets one line per tasks/cancel.
//
// The first tasks/get of a task reports progress 1/2 "working"; the result reports 2/2 "done"
// just before it is returned.
const taskFixtureArg = "mcp-task-fixture-server"

type fixtureTask struct {
	N         int    `json:"n"`
	Token     any    `json:"token,omitempty"`
	Polled    bool   `json:"polled"`
	Cancelled bool   `json:"cancelled"`
	Created   string `json:"created"`
}

type fixtureTaskParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

// fixtureRaw is a result as JSON of its own.
type fixtureRaw struct {
	sdk.ResultBase
	raw json.RawMessage
}

func (r *fixtureRaw) MarshalJSON() ([]byte, error) { return r.raw, nil }

func runTaskFixtureServer(dir, shape string) int {
	if err := newTaskFixtureServer(dir, shape).Run(context.Background(), mcp.Transport(&sdk.StdioTransport{})); err != nil {
		return 1
	}
	return 0
}

// newTaskFixtureServer is the server of runTaskFixtureServer.
func newTaskFixtureServer(dir, shape string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "task-fixture", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "double", Description: "Doubles n once released; only as a task.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "double requires a task"}
		})
	destructive := true
	s.AddTool(&sdk.Tool{Name: "charge", Description: "Charges n (doubled) once released; only as a task.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &destructive}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "charge requires a task"}
		})
	path := func(id string) string { return filepath.Join(dir, "task-"+id) }
	load := func(id string) (fixtureTask, error) {
		var task fixtureTask
		data, err := os.ReadFile(path(filepath.Base(id)))
		if err != nil {
			return task, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no task " + id}
		}
		return task, json.Unmarshal(data, &task)
	}
	save := func(id string, task fixtureTask) error {
		data, _ := json.Marshal(task)
		return os.WriteFile(path(id), data, 0o600)
	}
	appendLine := func(name, line string) error {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(line + "\n")
		return err
	}
	status := func(task fixtureTask) string {
		if task.Cancelled {
			return "cancelled"
		}
		if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
			return "completed"
		}
		return "working"
	}
	taskJSON := func(id string, task fixtureTask) map[string]any {
		if shape == "2026-07-28" {
			return map[string]any{"taskId": id, "status": status(task), "createdAt": task.Created,
				"lastUpdatedAt": task.Created, "ttlMs": nil, "pollIntervalMs": 50}
		}
		return map[string]any{"taskId": id, "status": status(task), "createdAt": task.Created,
			"lastUpdatedAt": task.Created, "ttl": nil, "pollInterval": 50}
	}
	// asksForTask reports whether a tools/call asks for a task the way its shape says: a "task"
	// member (moved to _meta by mcp.Transport), or the extension declared in its _meta.
	asksForTask := func(meta sdk.Meta) bool {
		if shape != "2026-07-28" {
			_, asked := meta[wire.MCPTaskMeta]
			return asked
		}
		caps, _ := meta[sdk.MetaKeyClientCapabilities].(map[string]any)
		extensions, _ := caps["extensions"].(map[string]any)
		_, declared := extensions[wire.MCPTasksExtension]
		return declared
	}
	result := func(ctx context.Context, ss *sdk.ServerSession, task fixtureTask) map[string]any {
		if task.Token != nil {
			_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: task.Token, Progress: 2, Total: 2, Message: "done"})
		}
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("%d doubled is %d", task.N, 2*task.N)}}}
	}
	answer := func(v any) (sdk.Result, error) {
		data, err := json.Marshal(v)
		return &fixtureRaw{raw: data}, err
	}
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "server/discover" && shape != "2026-07-28" {
				// A 2025-11-25 server: the client falls back to initialize.
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "server/discover: no such method"}
			}
			if call, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" {
				if asksForTask(call.Params.Meta) {
					var args struct{ N int }
					_ = json.Unmarshal(call.Params.Arguments, &args)
					id := fmt.Sprintf("t%d", time.Now().UnixNano())
					task := fixtureTask{N: args.N, Token: call.Params.GetProgressToken(), Created: time.Now().UTC().Format(time.RFC3339)}
					if err := save(id, task); err != nil {
						return nil, err
					}
					if err := appendLine("starts", id); err != nil {
						return nil, err
					}
					if shape == "2026-07-28" {
						flat := taskJSON(id, task)
						flat["resultType"] = "task"
						return answer(flat)
					}
					return answer(map[string]any{"task": taskJSON(id, task)})
				}
			}
			res, err := next(ctx, method, req)
			if err != nil || method != "tools/list" {
				return res, err
			}
			data, err := json.Marshal(res)
			if err != nil {
				return nil, err
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, err
			}
			for _, tool := range m["tools"].([]any) {
				tool.(map[string]any)["execution"] = map[string]any{"taskSupport": "required"}
			}
			return answer(m)
		}
	})
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(sdk.AddReceivingCustomMethod(s, "tasks/get", func(ctx context.Context, ss *sdk.ServerSession, params *fixtureTaskParams) (*fixtureRaw, error) {
		if shape == "2026-07-28" && !asksForTask(params.Meta) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "declare the tasks extension"}
		}
		id := params.TaskID
		task, err := load(id)
		if err != nil {
			return nil, err
		}
		if !task.Polled {
			task.Polled = true
			if err := save(id, task); err != nil {
				return nil, err
			}
			if task.Token != nil {
				_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: task.Token, Progress: 1, Total: 2, Message: "working"})
			}
		}
		out := taskJSON(id, task)
		if shape == "2026-07-28" {
			out["resultType"] = "complete"
			if out["status"] == "completed" {
				out["result"] = result(ctx, ss, task)
			}
		}
		data, err := json.Marshal(out)
		return &fixtureRaw{raw: data}, err
	}))
	must(sdk.AddReceivingCustomMethod(s, "tasks/result", func(ctx context.Context, ss *sdk.ServerSession, params *fixtureTaskParams) (*fixtureRaw, error) {
		if shape == "2026-07-28" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tasks/get inlines the result"}
		}
		task, err := load(params.TaskID)
		if err != nil {
			return nil, err
		}
		if status(task) != "completed" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task not completed"}
		}
		data, err := json.Marshal(result(ctx, ss, task))
		return &fixtureRaw{raw: data}, err
	}))
	must(sdk.AddReceivingCustomMethod(s, "tasks/cancel", func(_ context.Context, _ *sdk.ServerSession, params *fixtureTaskParams) (*fixtureRaw, error) {
		if shape == "2026-07-28" && !asksForTask(params.Meta) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "declare the tasks extension"}
		}
		id := params.TaskID
		task, err := load(id)
		if err != nil {
			return nil, err
		}
		task.Cancelled = true
		if err := save(id, task); err != nil {
			return nil, err
		}
		if err := appendLine("cancels", id); err != nil {
			return nil, err
		}
		data, err := json.Marshal(taskJSON(id, task))
		return &fixtureRaw{raw: data}, err
	}))
	return s
}

// lines returns the lines of DIR/name (none when it does not exist).
func lines(t *testing.T, dir, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(data))
}

func taskFixtureTarget(dir, shape string) string {
	return os.Args[0] + " " + taskFixtureArg + " " + dir + " " + shape
}

// taskFixtureWorker mounts the task fixture as prefix "fx" on an in-process worker: spawned over
// stdio, or served by this process over streamable HTTP when overHTTP.
func taskFixtureWorker(t *testing.T, dir, shape string, overHTTP bool) *tgclient.Client {
	t.Helper()
	target := taskFixtureTarget(dir, shape)
	if overHTTP {
		srv := httptest.NewServer(mcp.HTTPHandler(newTaskFixtureServer(dir, shape), mcp.HTTPOptions{}))
		t.Cleanup(srv.Close)
		target = srv.URL
	}
	transport, err := mcp.Target(target)
	require.NoError(t, err)
	return mountedWorker(t, "fx", transport)
}

// A remote tool that requires tasks is called as one task, in both shapes, over stdio and
// streamable HTTP: the result is the task's, and the remote's last progress report (sent just
// before the result) is the call's.
func TestMountedToolRequiringTasks(t *testing.T) {
	for _, tc := range []struct {
		shape    string
		overHTTP bool
	}{{"2025-11-25", false}, {"2026-07-28", false}, {"2025-11-25", true}, {"2026-07-28", true}} {
		name := tc.shape + map[bool]string{false: " stdio", true: " http"}[tc.overHTTP]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			tg := taskFixtureWorker(t, dir, tc.shape, tc.overHTTP)
			call, err := toolcore.NewToolCall("double-"+strings.ReplaceAll(name, " ", "-"), "fx_double", []byte(`{"n":21}`))
			require.NoError(t, err)
			workflowID, err := tg.Start(t.Context(), call)
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				p, ok, err := tg.ProgressByWorkflowID(t.Context(), workflowID)
				return err == nil && ok && p.Message == "working"
			}, time.Minute, 20*time.Millisecond, "the remote task's progress reaches the call")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), nil, 0o600))
			res, err := tg.ResultByWorkflowID(t.Context(), workflowID)
			require.NoError(t, err)
			require.False(t, res.IsError(), res.Content())
			assert.Equal(t, "21 doubled is 42", res.Content())
			last, ok, err := tg.FinalProgress(t.Context(), workflowID, "")
			require.NoError(t, err)
			require.True(t, ok, "the call has a last progress report")
			assert.Equal(t, toolcore.Progress{Completed: 2, Total: 2, Message: "done"}, last)
			assert.Len(t, lines(t, dir, "starts"), 1, "one task, one start")
		})
	}
}

// Cancelling the toolgate call of a remote task sends tasks/cancel: the remote task is cancelled.
func TestMountedTaskCancellation(t *testing.T) {
	for _, shape := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(shape, func(t *testing.T) {
			dir := t.TempDir()
			tg := taskFixtureWorker(t, dir, shape, false)
			call, err := toolcore.NewToolCall("double-cancel-"+shape, "fx_double", []byte(`{"n":1}`))
			require.NoError(t, err)
			workflowID, err := tg.Start(t.Context(), call)
			require.NoError(t, err)
			require.Eventually(t, func() bool { return len(lines(t, dir, "starts")) == 1 }, time.Minute, 20*time.Millisecond)
			require.NoError(t, tg.CancelByWorkflowID(t.Context(), workflowID))
			_, err = tg.ResultByWorkflowID(t.Context(), workflowID)
			require.ErrorIs(t, err, wire.ErrCallCanceled)
			require.Eventually(t, func() bool { return len(lines(t, dir, "cancels")) == 1 }, time.Minute, 20*time.Millisecond,
				"tasks/cancel reaches the remote server")
			id := lines(t, dir, "starts")[0]
			assert.Equal(t, []string{id}, lines(t, dir, "cancels"), "the call's own task is cancelled")
			data, err := os.ReadFile(filepath.Join(dir, "task-"+id))
			require.NoError(t, err)
			assert.Contains(t, string(data), `"cancelled":true`)
		})
	}
}

// mountTimeout is the --mcp-timeout of killedMidTask's workers.
const mountTimeout = 90 * time.Second

// killedMidTask starts a toolgate worker process mounting the task fixture (tasks in dir; a 3 s
// heartbeat timeout, so the server counts a killed worker lost after 3 s, not 1 min; attempts of
// mountTimeout), starts the
// call callID of tool with {"n":5}, SIGKILLs the worker while it waits for the remote task, and
// starts a second worker. The remote progress comes after the task ID is checkpointed: once the
// progress is in the heartbeat details, so is the task ID.
func killedMidTask(t *testing.T, dir, tool, callID string) (tg *tgclient.Client, workflowID string) {
	t.Helper()
	queue := devtest.TaskQueue(t)
	mountArgs := []string{"--mcp", "fx=" + taskFixtureTarget(dir, "2025-11-25"), "--mcp-heartbeat-timeout", "3s", "--mcp-timeout", mountTimeout.String()}
	first, stderr := startWorkerProcess(t, queue, childEnv(), mountArgs...)
	tg = tgclient.New(devtest.Client(t), tgclient.Options{TaskQueue: queue})
	require.Eventually(t, func() bool {
		tools, err := tg.ListTools(t.Context())
		return err == nil && slices.ContainsFunc(tools, func(info toolcore.ToolInfo) bool { return info.Name == tool })
	}, time.Minute, 100*time.Millisecond, "the worker lists %s: %s", tool, stderr)

	call, err := toolcore.NewToolCall(callID, tool, []byte(`{"n":5}`))
	require.NoError(t, err)
	workflowID, err = tg.Start(t.Context(), call)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, ok, err := tg.ProgressByWorkflowID(t.Context(), workflowID)
		return err == nil && ok && p.Message == "working"
	}, time.Minute, 20*time.Millisecond, "the remote task runs: %s", stderr)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	startWorkerProcess(t, queue, childEnv(), mountArgs...)
	return tg, workflowID
}

// activitiesScheduled is the start-to-close timeout of each activity the workflow scheduled, by
// type, in order.
func activitiesScheduled(t *testing.T, workflowID string) map[string][]time.Duration {
	t.Helper()
	scheduled := map[string][]time.Duration{}
	iter := devtest.Client(t).GetWorkflowHistory(t.Context(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			name := a.GetActivityType().GetName()
			scheduled[name] = append(scheduled[name], a.GetStartToCloseTimeout().AsDuration())
		}
	}
	return scheduled
}

// A worker SIGKILLed while it waits for a remote task: the worker that takes the call over polls
// the same remote task (its ID was in the heartbeat details) and the remote tool starts once.
func TestMountedTaskSurvivesWorkerKill(t *testing.T) {
	dir := t.TempDir()
	tg, workflowID := killedMidTask(t, dir, "fx_double", "double-killed")
	releaseKilledTask(t, dir, tg, workflowID, "the second attempt polled the first attempt's task")
}

// releaseKilledTask lets the remote task of a killedMidTask call end, waits for the call (after
// the heartbeat timeout) and asserts its result is the remote one, that the remote tool started
// once (why says how) and that nothing cancelled it.
func releaseKilledTask(t *testing.T, dir string, tg *tgclient.Client, workflowID, why string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), nil, 0o600))
	res, err := tg.ResultByWorkflowID(t.Context(), workflowID)
	require.NoError(t, err)
	require.False(t, res.IsError(), res.Content())
	assert.Equal(t, "5 doubled is 10", res.Content())
	assert.Len(t, lines(t, dir, "starts"), 1, why)
	assert.Empty(t, lines(t, dir, "cancels"))
}

// An Unsafe mounted task tool (destructive: one attempt) whose worker is SIGKILLed mid-call: the
// attempt ends without a verdict, and the ReconcileTool activity on the second worker polls the
// task the lost attempt checkpointed (its ID in the heartbeat timeout's last details) to its
// end. The remote tool started once, ExecuteTool ran once, and the call ends with the remote
// result instead of outcome unknown.
func TestMountedUnsafeTaskReconciledAfterWorkerKill(t *testing.T) {
	dir := t.TempDir()
	tg, workflowID := killedMidTask(t, dir, "fx_charge", "charge-killed")
	releaseKilledTask(t, dir, tg, workflowID, "the remote tool started once")
	scheduled := activitiesScheduled(t, workflowID)
	assert.Equal(t, []time.Duration{mountTimeout}, scheduled[wire.ExecuteToolName], "one attempt, under --mcp-timeout")
	assert.Equal(t, []time.Duration{mountTimeout}, scheduled[wire.ReconcileToolName], "reconciled, under --mcp-timeout")
}
