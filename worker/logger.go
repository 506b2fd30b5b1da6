package worker

import (
	"go.temporal.io/sdk/log"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/internal/logging"
)

// ZapLogger returns a Temporal SDK logger that writes to l's zap core (logger name "temporal"),
// with l's encoder and level. Set it as the Logger of the Temporal client (go.temporal.io/sdk/client
// Options.Logger) that the worker and the toolgate client use: workers and workflows inherit the
// client's logger, so the SDK's lines and toolgate's land in one stream. A nil l discards.
func ZapLogger(l *zap.Logger) log.Logger {
	return logging.Temporal(l)
}
