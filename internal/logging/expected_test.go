package logging

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestExpectedOutcomesAreDowngraded(t *testing.T) {
	tests := []struct {
		name      string
		msg       string
		err       error
		wantLevel zapcore.Level
	}{
		{name: "canceled activity", msg: "Activity error.", err: temporal.NewCanceledError(), wantLevel: zapcore.DebugLevel},
		{name: "heartbeat that brought the cancel", msg: "RecordActivityHeartbeat with error", err: temporal.NewCanceledError(), wantLevel: zapcore.DebugLevel},
		{name: "a real activity error", msg: "Activity error.", err: errors.New("boom"), wantLevel: zapcore.ErrorLevel},
		{name: "another message with a cancellation", msg: "Workflow panic", err: temporal.NewCanceledError(), wantLevel: zapcore.ErrorLevel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			Temporal(zap.New(core)).Error(tt.msg, "WorkflowID", "toolcall-a", "Error", tt.err)
			require.Equal(t, 1, logs.Len())
			assert.Equal(t, tt.wantLevel, logs.All()[0].Level)
		})
	}
}

func TestDowngradedBelowTheLevelIsDropped(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	Temporal(zap.New(core)).Error("Activity error.", "Error", temporal.NewCanceledError())
	assert.Zero(t, logs.Len())
}

func TestSDKLinesNameTheCall(t *testing.T) {
	tests := []struct {
		name       string
		workflowID string
		want       any
	}{
		{name: "plain", workflowID: "toolcall-call-add-1", want: "call-add-1"},
		{name: "scoped and escaped", workflowID: "run 7/toolcall-ts-%C3%A9-1", want: "ts-é-1"},
		{name: "not a call", workflowID: "order-42", want: nil},
		{name: "malformed escape", workflowID: "toolcall-%zz", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			l := Temporal(zap.New(core))
			l.Info("in the record", "WorkflowID", tt.workflowID)
			log.With(l, "WorkflowID", tt.workflowID).Info("in the logger's context")
			require.Equal(t, 2, logs.Len())
			assert.Equal(t, tt.want, logs.All()[0].ContextMap()["toolCallId"])
			assert.Equal(t, tt.want, logs.All()[1].ContextMap()["toolCallId"])
		})
	}
}
