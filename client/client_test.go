package client

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

func TestWorkflowID(t *testing.T) {
	tests := []struct {
		name   string
		scope  string
		callID string
		want   string
	}{
		{name: "no scope", callID: "call-add-1", want: "toolcall-call-add-1"},
		{name: "scope", scope: "run-7", callID: "call-add-1", want: "run-7/toolcall-call-add-1"},
		{name: "provider IDs stay readable", callID: "toolu_01A:b/c~!", want: "toolcall-toolu_01A:b/c~!"},
		{name: "non-ASCII call ID", callID: "ts-é-1", want: "toolcall-ts-%C3%A9-1"},
		{name: "space and percent", callID: "a b%", want: "toolcall-a%20b%25"},
		{name: "non-ASCII scope", scope: "agent ü", callID: "c", want: "agent%20%C3%BC/toolcall-c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, wire.WorkflowID(tt.scope, tt.callID))
			assert.Equal(t, tt.want, New(nil, Options{Scope: tt.scope}).WorkflowID(tt.callID))
		})
	}
}

func TestNewDefaults(t *testing.T) {
	c := New(nil, Options{})
	assert.Equal(t, wire.DefaultTaskQueue, c.opts.TaskQueue)
	assert.Equal(t, DefaultNamespace, c.opts.Namespace)
	assert.Equal(t, DefaultCancelWaitTimeout, c.opts.CancelWaitTimeout)
	assert.Equal(t, DefaultNoWorkerDelay, c.opts.NoWorkerDelay)
	assert.Equal(t, DefaultProgressInterval, c.opts.ProgressInterval)
	assert.NotNil(t, c.opts.DataConverter)
	assert.False(t, c.attrs.known, "detection pending")

	off := false
	forced := New(nil, Options{SearchAttributes: &off})
	assert.True(t, forced.attrs.known)
	assert.False(t, forced.attrs.set)
}

func TestStateString(t *testing.T) {
	tests := []struct {
		give enumspb.WorkflowExecutionStatus
		want string
	}{
		{give: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, want: "running"},
		{give: enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, want: "completed"},
		{give: enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, want: "failed"},
		{give: enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, want: "canceled"},
		{give: enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, want: "terminated"},
		{give: enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, want: "timedOut"},
		{give: enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED, want: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			s := stateOf(tt.give)
			assert.Equal(t, tt.want, s.String())
			text, err := s.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(text))
		})
	}
}

func TestSnapshot(t *testing.T) {
	call, err := toolcore.ParseToolCall([]byte(`{"arguments":{"right":22, "left":20},"name":"add","id":"call-add-1","type":"toolCall"}`))
	require.NoError(t, err)
	got, err := snapshot(call)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"toolCall","id":"call-add-1","name":"add","arguments":{"left":20,"right":22}}`, string(got))
	want, err := call.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "canonical bytes")

	var ce *toolcore.ContractError
	_, err = snapshot(toolcore.ToolCall{})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, toolcore.CodeInvalidToolCall, ce.Code)
}

func TestDescribeDifference(t *testing.T) {
	mk := func(id, name, args string) toolcore.ToolCall {
		c, err := toolcore.NewToolCall(id, name, []byte(args))
		require.NoError(t, err)
		return c
	}
	tests := []struct {
		name      string
		recorded  toolcore.ToolCall
		submitted toolcore.ToolCall
		want      string
	}{
		{name: "id", recorded: mk("a/toolcall-b", "add", `{}`), submitted: mk("b", "add", `{}`), want: `recorded call has ID "a/toolcall-b", submitted "b"`},
		{name: "name", recorded: mk("c", "add", `{}`), submitted: mk("c", "echo", `{}`), want: `recorded call is tool "add", submitted "echo"`},
		{name: "arguments", recorded: mk("c", "add", `{"left":1}`), submitted: mk("c", "add", `{"left":2}`), want: `recorded call to "add" has different arguments`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, describeDifference(tt.recorded, tt.submitted))
		})
	}
}

func TestIsUndefinedSearchAttribute(t *testing.T) {
	tests := []struct {
		name string
		give error
		want bool
	}{
		{name: "undefined", give: serviceerror.NewInvalidArgument("search attribute ToolName is not defined"), want: true},
		{name: "other invalid argument", give: serviceerror.NewInvalidArgument("search attribute ToolName value size 3000 exceeds limit"), want: false},
		{name: "not invalid argument", give: errors.New("search attribute ToolName is not defined"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, isUndefinedSearchAttribute(tt.give))
		})
	}
}
