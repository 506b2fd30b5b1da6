package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// taskStatusClient returns the command running interop/mcp-taskstatus.mjs SCENARIO.
func taskStatusClient(t *testing.T, scenario string, env []string) *exec.Cmd {
	cmd := typeScriptClient(t, scenario, env)
	cmd.Args[1] = "mcp-taskstatus.mjs" // the checks and environment of mcp-client.mjs's
	return cmd
}

type taskStatusReport struct {
	Statuses  []mcp.Task `json:"statuses"`
	Get       mcp.Task   `json:"get"`
	Cancelled mcp.Task   `json:"cancelled"`
	Events    []string   `json:"events"`
}

func statusesOf(tasks []mcp.Task) []string {
	out := make([]string, len(tasks))
	for i, task := range tasks {
		out[i] = task.Status
	}
	return out
}

// The official TypeScript SDK client receives notifications/tasks/status for a task it created
// (2025-11-25), over stdio and streamable HTTP: working, then completed once the held tool is
// released, or cancelled after tasks/cancel (the task's progress between them); each once, in
// order, the terminal one the Task that tasks/get answers once it arrived; a task reporting 100
// times as fast as it can sends working, every report in order, then completed.
func TestTypeScriptClientTaskStatusNotifications(t *testing.T) {
	f := newFixture(t)
	for name, env := range transports(t, f) {
		t.Run(name+"/completed", func(t *testing.T) {
			key := "ts-task-status-" + name
			gate := f.tools.hold(key)
			next, wait := lineReport(t, taskStatusClient(t, "complete", append(env, "MCP_KEY="+key)))
			var working struct {
				Working mcp.Task `json:"working"`
			}
			next(&working)
			assert.Equal(t, "mcp/toolcall-"+key, working.Working.TaskID)
			assert.Equal(t, wire.MCPTaskWorking, working.Working.Status, "the status while the tool is held")
			close(gate)
			var report taskStatusReport
			next(&report)
			wait()

			assert.Equal(t, []string{wire.MCPTaskWorking, wire.MCPTaskCompleted}, statusesOf(report.Statuses))
			assert.Equal(t, report.Get, report.Statuses[len(report.Statuses)-1], "the terminal notification is the task tasks/get answers")
			require.NotNil(t, report.Get.TTL, "the task's ttl: the one asked for, or the server's maximum")
			assert.Positive(t, *report.Get.TTL)
			assert.EqualValues(t, mcp.TaskPollInterval, report.Get.PollInterval)
			assert.Equal(t, 1, f.tools.runsOf(key))
		})
		t.Run(name+"/cancelled", func(t *testing.T) {
			var report taskStatusReport
			runTaskStatusClient(t, "cancel", env, &report)
			assert.Equal(t, wire.MCPTaskCancelled, report.Cancelled.Status)
			select { // tasks/cancel answered once the workflow closed
			case <-f.tools.canceled:
			default:
				t.Error("the tool did not see its context canceled")
			}
			assert.Equal(t, []string{wire.MCPTaskWorking, wire.MCPTaskCancelled}, statusesOf(report.Statuses))
			assert.Equal(t, []string{"status:working", "progress:halfway", "status:cancelled"}, report.Events,
				"one stream, in order: working, the task's progress, then the terminal status")
			assert.Equal(t, report.Get, report.Statuses[len(report.Statuses)-1], "the terminal notification is the task tasks/get answers")
		})
		t.Run(name+"/progress", func(t *testing.T) {
			var report taskStatusReport
			runTaskStatusClient(t, "burst", env, &report)
			want := []string{"status:working"}
			for k := 1; k <= 100; k++ {
				want = append(want, fmt.Sprintf("progress:%d", k))
			}
			want = append(want, "status:completed")
			assert.Equal(t, want, report.Events, "working, every report in order, the last one, then completed")
			assert.Equal(t, report.Get, report.Statuses[len(report.Statuses)-1])
		})
	}
}

// runTaskStatusClient runs interop/mcp-taskstatus.mjs SCENARIO and decodes its report.
func runTaskStatusClient(t *testing.T, scenario string, env []string, report any) {
	t.Helper()
	cmd := taskStatusClient(t, scenario, env)
	var stderr testbin.SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node mcp-taskstatus.mjs %s: %s", scenario, stderr.String())
	require.NoError(t, json.Unmarshal(out, report), string(out))
}

type taskApprovalReport struct {
	Messages     []string         `json:"messages"`
	Elicitations []map[string]any `json:"elicitations"`
	Result       tsToolResult     `json:"result"`
	Statuses     []mcp.Task       `json:"statuses"`
}

// The official TypeScript SDK client (2025-11-25, declaring form elicitation), over stdio and
// streamable HTTP, decides the approval of a task whose tool lets its caller decide
// (ApprovalByCaller): callToolStream sees the task input_required and calls tasks/result, which
// asks with one elicitation/create tied to the task (related-task _meta; the tool, the item and
// the approve/reason form); accepted, the tool runs once and the result is the tool's; declined,
// it never runs and the result is the rejection with the reason. A tool whose approvals
// operators decide stays working, nothing is asked, and tasks/result answers once an operator
// approved (contract 10.34).
func TestTypeScriptClientTaskApprovals(t *testing.T) {
	et, queue := startExtWorker(t)
	tg := tgclient.New(devtest.Client(t), tgclient.Options{TaskQueue: queue})
	for name, env := range transports(t, &fixture{queue: queue}) {
		t.Run(name+"/approve", func(t *testing.T) {
			item := "ts-approve-" + name
			var report taskApprovalReport
			runTaskStatusClient(t, "approve", append(env, "MCP_TOOL=ext_release", "MCP_ITEM="+item), &report)
			assert.Contains(t, report.Messages, "taskStatus:"+wire.MCPTaskInputRequired)
			assert.Equal(t, "result", report.Messages[len(report.Messages)-1], "%v", report.Messages)
			require.Len(t, report.Elicitations, 1, "one question")
			asked := report.Elicitations[0]
			assert.Contains(t, asked["message"], "ext_release")
			assert.Contains(t, asked["message"], item)
			assert.Contains(t, asked["requestedSchema"], "properties")
			taskID := report.Statuses[0].TaskID
			assert.Equal(t, map[string]any{"taskId": taskID}, asked["_meta"].(map[string]any)[wire.MCPRelatedTaskMeta], "tied to the task")
			assert.False(t, report.Result.IsError, "%+v", report.Result)
			require.NotEmpty(t, report.Result.Content)
			assert.Contains(t, report.Result.Content[0].Text, item)
			assert.Equal(t, 1, et.runsOf(item), "approved: the tool ran once")
			assert.Equal(t, []string{wire.MCPTaskWorking, wire.MCPTaskCompleted}, statusesOf(report.Statuses))
		})
		t.Run(name+"/decline", func(t *testing.T) {
			item := "ts-decline-" + name
			var report taskApprovalReport
			runTaskStatusClient(t, "decline", append(env, "MCP_TOOL=ext_release", "MCP_ITEM="+item), &report)
			require.Len(t, report.Elicitations, 1)
			assert.True(t, report.Result.IsError, "%+v", report.Result)
			require.NotEmpty(t, report.Result.Content)
			assert.Contains(t, report.Result.Content[0].Text, "TOOL_APPROVAL_REJECTED")
			assert.Contains(t, report.Result.Content[0].Text, "not now")
			assert.Zero(t, et.runsOf(item), "declined: the tool never ran")
		})
		t.Run(name+"/operator", func(t *testing.T) {
			item := "ts-operator-" + name
			cmd := taskStatusClient(t, "operator", append(env, "MCP_TOOL=ext_operator", "MCP_ITEM="+item))
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			next, wait := lineReport(t, cmd)
			var created struct {
				Created mcp.Task `json:"created"`
			}
			next(&created)
			var approval wire.ApprovalState
			require.Eventually(t, func() bool {
				approval, err = tg.ApprovalByWorkflowID(t.Context(), created.Created.TaskID)
				return err == nil && approval.Waiting
			}, 30*time.Second, 10*time.Millisecond, "the call waits for approval")
			_, err = io.WriteString(stdin, "get\n")
			require.NoError(t, err)
			var get struct {
				Get mcp.Task `json:"get"`
			}
			next(&get)
			assert.Equal(t, wire.MCPTaskWorking, get.Get.Status, "an operator decides: nothing for the client to do")
			_, err = tg.DecideByWorkflowID(t.Context(), created.Created.TaskID, true, wire.ApprovalDecision{CallHash: approval.CallHash, Reviewer: "operator"})
			require.NoError(t, err)
			var report taskApprovalReport
			next(&report)
			wait()
			assert.Empty(t, report.Elicitations, "nothing asked")
			assert.False(t, report.Result.IsError, "%+v", report.Result)
			assert.Equal(t, 1, et.runsOf(item))
		})
	}
}

// A tasks/result that began before the call waited for its caller's approval still asks for it
// once the wait begins: the TypeScript SDK client (HTTP) creates the task while no worker runs
// and calls tasks/result at once; the worker starts after that, the call then waits, and the
// one elicitation reaches the pending tasks/result, accepted: the tool runs once (contract 10.34).
func TestTypeScriptClientTaskApprovalAskedOnceItWaits(t *testing.T) {
	et, reg := extRegistry(t)
	queue := devtest.TaskQueue(t)
	startWorker := func() *worker.Worker {
		w, err := worker.New(devtest.Client(t), "", reg, worker.Options{TaskQueue: queue})
		require.NoError(t, err)
		require.NoError(t, w.Start())
		return w
	}
	first := startWorker() // for the tool list of toolgate mcp and the client
	server := startMCPProcess(t, &fixture{queue: queue})
	cmd := taskStatusClient(t, "early", append(server.env(), "MCP_TOOL=ext_release", "MCP_ITEM=ts-early"))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	next, wait := lineReport(t, cmd)
	var ready map[string]any
	next(&ready)
	first.Stop() // the call cannot begin until the next worker
	_, err = io.WriteString(stdin, "go\n")
	require.NoError(t, err)
	var asking struct {
		Asking mcp.Task `json:"asking"`
	}
	next(&asking)
	assert.Equal(t, wire.MCPTaskWorking, asking.Asking.Status, "tasks/result began before the call waited")
	t.Cleanup(startWorker().Stop)
	var report taskApprovalReport
	next(&report)
	wait()
	require.Len(t, report.Elicitations, 1, "asked once the call waited")
	assert.False(t, report.Result.IsError, "%+v", report.Result)
	assert.Equal(t, 1, et.runsOf("ts-early"))
}
