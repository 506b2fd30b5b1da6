package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

// mountTaskFixture mounts the task fixture (tasks in dir) as prefix "fx" in this process and
// returns its tools by name.
func mountTaskFixture(t *testing.T, dir, shape string) map[string]toolcore.Tool {
	t.Helper()
	transport, err := mcp.Target(taskFixtureTarget(dir, shape))
	require.NoError(t, err)
	remote, err := mcp.Mount(t.Context(), "fx", transport, mcp.MountOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = remote.Close() })
	tools := map[string]toolcore.Tool{}
	for _, tool := range remote.Tools() {
		tools[tool.Name()] = tool
	}
	return tools
}

// saveFixtureTask writes a task of the fixture, as if a tools/call had created it.
func saveFixtureTask(t *testing.T, dir, id string, task fixtureTask) {
	t.Helper()
	data, err := json.Marshal(task)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "task-"+id), data, 0o600))
}

// reconcileWith runs tool's Reconcile as ReconcileTool would after an attempt whose last
// checkpoint was cp (nil: none).
func reconcileWith(ctx context.Context, tool toolcore.Tool, cp json.RawMessage) (any, bool, error) {
	return tool.Reconcile(toolcore.WithExecution(ctx, toolcore.Execution{
		ToolCallID: "c1", ToolName: tool.Name(), IdempotencyKey: "toolcall-c1", LastCheckpoint: cp,
	}), "toolcall-c1")
}

func taskCheckpoint(id string) json.RawMessage {
	return json.RawMessage(`{"remoteTaskId":"` + id + `","progressToken":"toolgate-0"}`)
}

// An Unsafe mounted tool that requires tasks declares a Reconcile (an idempotent one is retried
// instead): the lost attempt's checkpointed task is polled to its end, in both task revisions.
// Completed: found with the task's result; cancelled (or failed): found failed, the error
// result the attempt would have returned; no checkpoint, or a task the remote does not know:
// not found. Nothing is called again, and a canceled Reconcile cancels the remote task.
func TestMountedUnsafeTaskReconcile(t *testing.T) {
	for _, shape := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(shape, func(t *testing.T) {
			dir := t.TempDir()
			tools := mountTaskFixture(t, dir, shape)
			charge, double := tools["fx_charge"], tools["fx_double"]
			require.Equal(t, toolcore.Unsafe, charge.Options().SideEffect)
			assert.True(t, charge.CanReconcile(), "the Unsafe task tool reconciles")
			assert.False(t, double.CanReconcile(), "the idempotent one is retried instead")

			t.Run("no checkpoint", func(t *testing.T) {
				out, found, err := reconcileWith(t.Context(), charge, nil)
				require.NoError(t, err)
				assert.False(t, found)
				assert.Nil(t, out)
			})
			t.Run("unknown task", func(t *testing.T) {
				_, found, err := reconcileWith(t.Context(), charge, taskCheckpoint("t404"))
				require.NoError(t, err)
				assert.False(t, found, "a remote that does not know the task: not found")
			})
			t.Run("cancelled task", func(t *testing.T) {
				saveFixtureTask(t, dir, "tc", fixtureTask{N: 3, Cancelled: true, Polled: true})
				_, _, err := reconcileWith(t.Context(), charge, taskCheckpoint("tc"))
				failure, ok := toolcore.EffectFailure(err)
				require.True(t, ok, "found failed: %v", err)
				assert.Equal(t, "MCP server fx: remote task tc was cancelled: ", failure.Error())
			})
			t.Run("canceled while polling", func(t *testing.T) {
				saveFixtureTask(t, dir, "tx", fixtureTask{N: 4, Polled: true})
				ctx, cancel := context.WithCancelCause(t.Context())
				done := make(chan error, 1)
				go func() { _, _, err := reconcileWith(ctx, charge, taskCheckpoint("tx")); done <- err }()
				cancel(temporal.NewCanceledError())
				require.ErrorIs(t, <-done, context.Canceled)
				assert.Equal(t, []string{"tx"}, lines(t, dir, "cancels"), "tasks/cancel, as in the execute path")
			})
			t.Run("polled to completion", func(t *testing.T) {
				saveFixtureTask(t, dir, "tw", fixtureTask{N: 5})
				type answer struct {
					out   any
					found bool
					err   error
				}
				done := make(chan answer, 1)
				go func() {
					out, found, err := reconcileWith(t.Context(), charge, taskCheckpoint("tw"))
					done <- answer{out, found, err}
				}()
				require.Eventually(t, func() bool {
					data, err := os.ReadFile(filepath.Join(dir, "task-tw"))
					return err == nil && containsPolled(data)
				}, time.Minute, 10*time.Millisecond, "Reconcile polls the working task")
				select {
				case a := <-done:
					t.Fatalf("Reconcile ended while the task was working: %+v", a)
				default:
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), nil, 0o600))
				a := <-done
				require.NoError(t, a.err)
				assert.True(t, a.found)
				assert.Equal(t, toolcore.Text("5 doubled is 10"), a.out)
				assert.Empty(t, lines(t, dir, "starts"), "nothing called again")
			})
		})
	}
}

func containsPolled(data []byte) bool {
	var task fixtureTask
	return json.Unmarshal(data, &task) == nil && task.Polled
}
