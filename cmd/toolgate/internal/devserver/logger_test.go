package devserver

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func newObservedLogger(level zapcore.Level) (log.Logger, *observer.ObservedLogs, zap.AtomicLevel) {
	core, logs := observer.New(zapcore.DebugLevel)
	atomic := zap.NewAtomicLevelAt(level)
	return newServerLogger(zap.New(core), atomic), logs, atomic
}

func TestServerLoggerLevels(t *testing.T) {
	logger, logs, level := newObservedLogger(zapcore.WarnLevel)
	logger.Debug("debug")
	logger.Info("info")
	logger.Warn("warn")
	logger.Error("error")
	log.With(logger, tag.NewStringTag("k", "v")).Warn("with warn")
	log.With(logger, tag.NewStringTag("k", "v")).Info("with info")
	level.SetLevel(zapcore.ErrorLevel)
	logger.Warn("warn after raise")
	logger.Error("error after raise")

	var got []string
	for _, e := range logs.All() {
		got = append(got, e.Message)
	}
	assert.Equal(t, []string{"warn", "error", "with warn", "error after raise"}, got)
}

func TestServerLoggerDropsKnownNoise(t *testing.T) {
	logger, logs, _ := newObservedLogger(zapcore.WarnLevel)
	logger.Warn("HTTP API port has not been set. Nexus HTTP endpoints will not be available.")
	logger.Error("Unable to call matching.PollWorkflowTaskQueue.", tag.Error(context.Canceled))
	logger.Error("Unable to call matching.PollActivityTaskQueue.", tag.Error(errors.New("rpc error: code = Canceled desc = context canceled")))
	logger.Error("Unable to call matching.PollWorkflowTaskQueue.", tag.Error(errors.New("boom")))

	require.Equal(t, 1, logs.Len())
	assert.Equal(t, "boom", logs.All()[0].ContextMap()["error"])
}

func TestFatalBecomesError(t *testing.T) {
	logger, logs, _ := newObservedLogger(zapcore.WarnLevel)
	bindErr := fmt.Errorf("listen tcp 127.0.0.1:1: %w", syscall.EADDRINUSE)

	err := catchFatal(func() error {
		log.With(logger, tag.NewStringTag("service", "history")).Fatal("Failed to start gRPC listener", tag.Error(bindErr))
		return nil
	})

	var fatal *fatalError
	require.ErrorAs(t, err, &fatal)
	assert.True(t, isAddrInUse(err))
	assert.Contains(t, err.Error(), "Failed to start gRPC listener")
	require.Equal(t, 1, logs.Len(), "a fatal entry is logged as an error")
	assert.Equal(t, zapcore.ErrorLevel, logs.All()[0].Level)
}

func TestCatchFatalPassesOtherPanics(t *testing.T) {
	assert.PanicsWithValue(t, "other", func() {
		_ = catchFatal(func() error { panic("other") })
	})
	assert.NoError(t, catchFatal(func() error { return nil }))
}

func TestServerLoggerReportsCaller(t *testing.T) {
	logger, logs, _ := newObservedLogger(zapcore.WarnLevel)
	logger.Warn("warn")
	logger.Error("error")
	log.With(logger, tag.NewStringTag("k", "v")).Error("with error")

	require.Equal(t, 3, logs.Len())
	for _, e := range logs.All() {
		assert.Contains(t, e.ContextMap()["logging-call-at"], "logger_test.go", e.Message)
	}
}

// withCounter counts how often zap is asked to encode tags ahead of a line.
type withCounter struct {
	zapcore.Core
	n *int
}

func (c withCounter) With(fields []zapcore.Field) zapcore.Core {
	*c.n++
	return withCounter{Core: c.Core.With(fields), n: c.n}
}

// The server derives a tagged logger for every task; the tags wait until a line is written, and
// then come out as if zap had them all along (pending first, nested, the line's own last).
func TestServerLoggerDefersTags(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	withs := 0
	logger := newServerLogger(zap.New(withCounter{Core: core, n: &withs}), zap.NewAtomicLevelAt(zapcore.InfoLevel))

	task := log.With(log.With(logger, tag.NewStringTag("shard", "1")), tag.NewStringTag("task", "t1"))
	for range 100 {
		log.With(task, tag.NewStringTag("unused", "x")).Debug("dropped below the level")
	}
	assert.Zero(t, withs, "no tags encoded for loggers that write nothing")

	task.Info("ran", tag.NewStringTag("outcome", "ok"))
	skipped := task.(log.SkipLogger).Skip(0)
	skipped.Warn("skipped")

	require.Equal(t, 2, logs.Len())
	for _, e := range logs.All() {
		ctx := e.ContextMap()
		assert.Equal(t, "1", ctx["shard"], e.Message)
		assert.Equal(t, "t1", ctx["task"], e.Message)
	}
	assert.Equal(t, "ok", logs.All()[0].ContextMap()["outcome"])
	assert.NotContains(t, logs.All()[1].ContextMap(), "outcome", "a line's own tags stay with it")
}
