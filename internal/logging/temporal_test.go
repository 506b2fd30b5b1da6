package logging

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestTemporalRoutesIntoZap(t *testing.T) {
	tests := []struct {
		name      string
		log       func(l interface{ Info(string, ...any) })
		wantMsg   string
		wantField string
		wantValue any
	}{
		{
			name:      "key value pairs become fields",
			log:       func(l interface{ Info(string, ...any) }) { l.Info("worker started", "TaskQueue", "toolgate") },
			wantMsg:   "worker started",
			wantField: "TaskQueue",
			wantValue: "toolgate",
		},
		{
			name:      "numbers keep their type",
			log:       func(l interface{ Info(string, ...any) }) { l.Info("poll", "Attempt", 3) },
			wantMsg:   "poll",
			wantField: "Attempt",
			wantValue: int64(3),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			tt.log(Temporal(zap.New(core)))
			require.Equal(t, 1, logs.Len())
			entry := logs.All()[0]
			assert.Equal(t, tt.wantMsg, entry.Message)
			assert.Equal(t, "temporal", entry.LoggerName)
			assert.Equal(t, tt.wantValue, entry.ContextMap()[tt.wantField])
		})
	}
}

func TestTemporalNilDiscards(t *testing.T) {
	l := Temporal(nil)
	require.NotNil(t, l)
	assert.NotPanics(t, func() { l.Warn("dropped", "k", "v") })
}

func TestTemporalKeepsLevel(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	l := Temporal(zap.New(core))
	l.Debug("hidden")
	l.Info("hidden")
	l.Warn("shown")
	l.Error("shown too")
	require.Equal(t, 2, logs.Len())
	assert.Equal(t, zapcore.WarnLevel, logs.All()[0].Level)
	assert.Equal(t, zapcore.ErrorLevel, logs.All()[1].Level)
}

// withCounter counts the With calls that reach the zap core.
type withCounter struct {
	zapcore.Core
	withs *int
}

func (c withCounter) With(fields []zapcore.Field) zapcore.Core {
	*c.withs++
	return withCounter{Core: c.Core.With(fields), withs: c.withs}
}

// TestTemporalDefersTaggedLoggers: the SDK derives a tagged logger for every task; its fields
// reach zap (which encodes them at once) only when a line is written, and then all of them.
func TestTemporalDefersTaggedLoggers(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	withs := 0
	l := Temporal(zap.New(withCounter{Core: obs, withs: &withs}))
	tagged := log.With(log.With(l, "WorkflowID", "toolcall-c1"), "Attempt", 1)
	tagged.Debug("below the level")
	assert.Zero(t, withs, "no line written, nothing encoded")

	tagged.Info("written")
	require.Equal(t, 1, logs.Len())
	fields := logs.All()[0].ContextMap()
	assert.Equal(t, "toolcall-c1", fields["WorkflowID"])
	assert.Equal(t, int64(1), fields["Attempt"])
	assert.Equal(t, "c1", fields["toolCallId"], "the call ID is still derived from the tags")
}
