package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
)

// lookupTool is a schema-validated tool (nil Validate) that blocks until release is closed.
func lookupTool(t *testing.T, schema string, release <-chan struct{}, started chan<- struct{}) toolcore.Tool {
	t.Helper()
	tool, err := toolcore.Define(toolcore.Definition[toolcore.Arguments]{
		Name: "lookup", Description: "Look a key up.",
		InputSchema: json.RawMessage(schema),
		Execute: func(ctx context.Context, a toolcore.Arguments) (any, error) {
			if started != nil {
				started <- struct{}{}
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return map[string]any{"ok": true}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly, HeartbeatTimeout: 5 * time.Second},
	})
	require.NoError(t, err)
	return tool
}

const (
	lookupSchemaV1 = `{"type":"object","additionalProperties":false,"required":["key"],"properties":{"key":{"type":"string","description":"The key."}}}`
	lookupSchemaV2 = `{"type":"object","additionalProperties":false,"required":["key"],"properties":{"key":{"type":"string","minLength":1,"description":"The key."}}}`
)

func TestListToolsReturnsTheWorkersCatalog(t *testing.T) {
	release := make(chan struct{})
	close(release)
	sum := toolcore.MustDefine(toolcore.Definition[args]{
		Name: "sum", Description: "Add left and right.",
		Execute: func(_ context.Context, a args) (any, error) { return a.Left + a.Right, nil },
	})
	tools := []toolcore.Tool{sum, lookupTool(t, lookupSchemaV1, release, nil)}
	e := newEnv(t, tools...)
	want, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)

	got, err := e.client.ListTools(e.ctx())
	require.NoError(t, err)
	assert.Equal(t, want.Infos(), got, "the worker's tools, name order, with schemas and hashes")

	again, err := e.client.ListTools(e.ctx())
	require.NoError(t, err, "a second listing replaces the finished catalog run")
	assert.Equal(t, got, again)
}

func TestListToolsWithoutWorker(t *testing.T) {
	c := client.New(devtest.Client(t), client.Options{TaskQueue: devtest.TaskQueue(t), Namespace: devtest.Server(t).Namespace()})
	// Long enough for the start on a busy machine; the wait itself ends with ctx.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.ListTools(ctx)
	assert.ErrorIs(t, err, client.ErrNoWorker)
}

func TestSchemaValidationOnTheDurablePath(t *testing.T) {
	release := make(chan struct{})
	close(release)
	e := newEnv(t, lookupTool(t, lookupSchemaV1, release, nil))
	call, err := toolcore.NewToolCall("schema-1", "lookup", []byte(`{"key":7}`))
	require.NoError(t, err)
	res, err := e.client.Execute(e.ctx(), call)
	require.NoError(t, err)
	assert.Equal(t, `{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"\"key\": expected string, got number"}}`, res.Content())
}

func TestDriftReportsRunningCallsWhoseDefinitionChanged(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	t.Cleanup(func() { close(release) })
	v1 := lookupTool(t, lookupSchemaV1, release, started)
	e := newEnv(t, v1)
	call, err := toolcore.NewToolCall("drift-1", "lookup", []byte(`{"key":"a"}`))
	require.NoError(t, err)
	id, err := e.client.Start(e.ctx(), call)
	require.NoError(t, err)
	select {
	case <-started:
	case <-e.ctx().Done():
		t.Fatal("the tool did not start")
	}

	sameBuild, err := toolcore.NewRegistry(v1)
	require.NoError(t, err)
	var report client.DriftReport
	require.Eventually(t, func() bool { // visibility is eventually consistent
		report, err = e.client.Drift(e.ctx(), sameBuild)
		return err == nil && report.Scheduled == 1
	}, testTimeout, 50*time.Millisecond)
	assert.Equal(t, 1, report.Running)
	assert.Empty(t, report.Drifted, "the same build: nothing drifted")

	v2 := lookupTool(t, lookupSchemaV2, release, nil)
	changedBuild, err := toolcore.NewRegistry(v2)
	require.NoError(t, err)
	report, err = e.client.Drift(e.ctx(), changedBuild)
	require.NoError(t, err)
	require.Len(t, report.Drifted, 1)
	assert.Equal(t, client.DriftedCall{
		WorkflowID: id, RunID: report.Drifted[0].RunID, ToolCallID: "drift-1", ToolName: "lookup",
		Kind: client.DriftChanged, RecordedHash: v1.DefinitionHash(), CurrentHash: v2.DefinitionHash(),
	}, report.Drifted[0])

	report, err = e.client.Drift(e.ctx(), &toolcore.Registry{})
	require.NoError(t, err)
	require.Len(t, report.Drifted, 1)
	assert.Equal(t, client.DriftRemoved, report.Drifted[0].Kind)
}
