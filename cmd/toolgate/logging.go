package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// logOptions are the global logging flags.
type logOptions struct {
	format string
	level  string
}

func addLogFlags(cmd *cobra.Command, o *logOptions) {
	fs := cmd.PersistentFlags()
	fs.StringVar(&o.format, "log-format", "console", "log line format on stderr: console (human-readable) or json")
	fs.StringVar(&o.level, "log-level", "info", "lowest level logged: debug, info, warn or error")
	bindEnv(fs, "log-format", "TOOLGATE_LOG_FORMAT")
	bindEnv(fs, "log-level", "TOOLGATE_LOG_LEVEL")
}

// newLogger builds the zap logger every line of the CLI, the worker and the Temporal SDK goes
// through (the SDK's via logging.Temporal). It writes to w, normally stderr: stdout is for results.
func newLogger(o logOptions, w io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(o.level)
	if err != nil {
		return nil, fmt.Errorf("parse --log-level: %w", err)
	}
	cfg := zap.NewProductionEncoderConfig()
	cfg.EncodeTime = zapcore.ISO8601TimeEncoder
	cfg.EncodeDuration = zapcore.StringDurationEncoder
	cfg.CallerKey = zapcore.OmitKey
	cfg.StacktraceKey = zapcore.OmitKey
	var enc zapcore.Encoder
	switch o.format {
	case "console":
		cfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(cfg)
	case "json":
		enc = zapcore.NewJSONEncoder(cfg)
	default:
		return nil, fmt.Errorf("parse --log-format: %q is neither console nor json", o.format)
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level)
	return zap.New(core), nil
}
