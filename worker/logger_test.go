package worker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/toolgate/toolgate/worker"
)

// ZapLogger is the public way to route the SDK's lines into zap: a line logged through it arrives
// in the zap core with its fields, under the logger name "temporal", at zap's level.
func TestZapLoggerRoutesIntoZap(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	l := worker.ZapLogger(zap.New(core))
	l.Debug("below the level")
	l.Info("worker started", "TaskQueue", "toolgate")

	require.Equal(t, 1, logs.Len())
	entry := logs.All()[0]
	assert.Equal(t, "worker started", entry.Message)
	assert.Equal(t, "temporal", entry.LoggerName)
	assert.Equal(t, "toolgate", entry.ContextMap()["TaskQueue"])
}
