package logging

import (
	"log/slog"

	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
)

// Temporal returns a Temporal SDK logger writing to l's core under the name "temporal".
// A nil l discards.
func Temporal(l *zap.Logger) log.Logger {
	if l == nil {
		l = zap.NewNop()
	}
	h := zapslog.NewHandler(l.Core(), zapslog.WithName("temporal"), zapslog.WithCaller(true))
	return log.NewStructuredLogger(slog.New(h))
}
