package mcp_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/wire"
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
			assert.Nil(t, report.Get.TTL)
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
