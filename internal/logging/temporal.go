package logging

import (
	"log/slog"

	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
)

// Temporal returns a Temporal SDK logger writing to l's core under the name "temporal". Expected
// outcomes of tool calls that the SDK logs as errors are logged at Debug, and SDK lines about a
// call carry its toolCallId (see expectedOutcomes). A nil l discards.
func Temporal(l *zap.Logger) log.Logger {
	if l == nil {
		l = zap.NewNop()
	}
	h := zapslog.NewHandler(l.Core(), zapslog.WithName("temporal"), zapslog.WithCaller(true))
	return log.NewStructuredLogger(slog.New(expectedOutcomes{next: h}))
}
