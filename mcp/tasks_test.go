package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/wire"
)

type tsTaskResult struct {
	tsToolResult
	Meta map[string]json.RawMessage `json:"_meta"`
}

type tsSettled struct {
	Error *tsError `json:"error"`
}

// The TypeScript SDK client calls a tool as a task on one `toolgate mcp` process, which then goes
// away (SIGKILL over HTTP; over stdio the process ends with its client); another process answers
// tasks/get, tasks/result, tasks/list and tasks/cancel for it from Temporal.
func TestTypeScriptClientTaskSurvivesServerRestart(t *testing.T) {
	f := newFixture(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			key := "ts-task-" + transport
			gate := f.tools.hold(key)
			env := stdioEnv(t, f)
			var first *mcpProcess
			if transport == "http" {
				first = startMCPProcess(t, f)
				env = first.env()
			}
			var started struct {
				Task        mcp.Task `json:"task"`
				TaskSupport string   `json:"taskSupport"`
			}
			runTypeScriptClient(t, "task-start", append(env, "MCP_KEY="+key), &started)
			assert.Equal(t, "optional", started.TaskSupport)
			assert.Equal(t, "mcp/toolcall-"+key, started.Task.TaskID, "the task ID is the workflow ID")
			assert.Equal(t, wire.MCPTaskWorking, started.Task.Status)
			assert.NotEmpty(t, started.Task.CreatedAt)
			require.NotNil(t, started.Task.TTL, "the ttl asked for is reported (issue 34 item 5)")
			assert.EqualValues(t, 60000, *started.Task.TTL)
			require.Equal(t, key, <-f.tools.started)

			env = stdioEnv(t, f)
			if transport == "http" {
				require.NoError(t, first.cmd.Process.Kill())
				env = startMCPProcess(t, f).env()
			}
			finish := typeScriptClient(t, "task-finish", append(env, "MCP_TASK_ID="+started.Task.TaskID))
			next, wait := lineReport(t, finish)
			var before struct {
				Before mcp.Task `json:"before"`
			}
			next(&before)
			assert.Equal(t, wire.MCPTaskWorking, before.Before.Status, "the new server reads the running task from Temporal")
			require.NotNil(t, before.Before.TTL, "another server reports its maximum, the namespace's retention")
			assert.GreaterOrEqual(t, *before.Before.TTL, int64(60000))
			close(gate)
			var finished struct {
				Capabilities struct {
					Requests struct {
						Tools struct {
							Call *struct{} `json:"call"`
						} `json:"tools"`
					} `json:"requests"`
				} `json:"capabilities"`
				Result         tsTaskResult `json:"result"`
				After          mcp.Task     `json:"after"`
				Listed         bool         `json:"listed"`
				CancelTerminal tsSettled    `json:"cancelTerminal"`
				Unknown        tsSettled    `json:"unknown"`
			}
			next(&finished)
			wait()

			assert.NotNil(t, finished.Capabilities.Requests.Tools.Call, "capabilities.tasks.requests.tools.call")
			assert.False(t, finished.Result.IsError)
			assert.JSONEq(t, `{"runs":1}`, finished.Result.Content[0].Text)
			assert.JSONEq(t, `{"taskId":"mcp/toolcall-`+key+`"}`, string(finished.Result.Meta[wire.MCPRelatedTaskMeta]))
			assert.Equal(t, wire.MCPTaskCompleted, finished.After.Status)
			assert.True(t, finished.Listed, "tasks/list lists the task")
			require.NotNil(t, finished.CancelTerminal.Error, "cancelling a completed task")
			assert.Equal(t, -32602, finished.CancelTerminal.Error.Code)
			require.NotNil(t, finished.Unknown.Error, "an unknown task")
			assert.Equal(t, -32602, finished.Unknown.Error.Code)
			assert.Equal(t, 1, f.tools.runsOf(key))
		})
	}
}

// A task's progress reaches the client for the request's progress token; tasks/cancel cancels
// the task's workflow and answers once it is cancelled; the tool saw its context canceled, and
// tasks/result returns the error tools/call would have.
func TestTypeScriptClientTaskCancel(t *testing.T) {
	f := newFixture(t)
	for name, env := range transports(t, f) {
		t.Run(name, func(t *testing.T) {
			var report struct {
				Created  mcp.Task `json:"created"`
				Progress struct {
					Progress float64 `json:"progress"`
					Message  string  `json:"message"`
				} `json:"progress"`
				Cancelled mcp.Task     `json:"cancelled"`
				Get       mcp.Task     `json:"get"`
				Result    tsSettled    `json:"result"`
				Observed  tsToolResult `json:"observed"`
			}
			runTypeScriptClient(t, "task-cancel", env, &report)
			assert.Equal(t, wire.MCPTaskWorking, report.Created.Status)
			for _, task := range []mcp.Task{report.Created, report.Get} {
				require.NotNil(t, task.TTL, "the ttl asked for (60000) is reported, not null")
				assert.EqualValues(t, 60000, *task.TTL)
			}
			assert.Equal(t, "halfway", report.Progress.Message, "the task's progress reaches the client")
			assert.Equal(t, wire.MCPTaskCancelled, report.Cancelled.Status)
			assert.Equal(t, wire.MCPTaskCancelled, report.Get.Status)
			require.NotNil(t, report.Result.Error)
			assert.Equal(t, -32603, report.Result.Error.Code)
			assert.JSONEq(t, `{"type":"Canceled"}`, string(report.Result.Error.Data))
			assert.JSONEq(t, `{"canceled":true}`, report.Observed.Content[0].Text)
		})
	}
}
