package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/toolgate/toolgate/internal/safetext"
)

// logOptions are the global logging flags.
type logOptions struct {
	format string
	level  string
}

func addLogFlags(cmd *cobra.Command, o *logOptions) {
	fs := cmd.PersistentFlags()
	fs.StringVar(&o.format, "log-format", "console", "log line format on stderr: console (human-readable) or json")
	fs.StringVar(&o.level, "log-level", "", "lowest level logged: debug, info, warn or error (default info for worker, dev, mcp, codec-server and bench, warn for the other commands: their result is on stdout)")
	bindEnv(fs, "log-format", "TOOLGATE_LOG_FORMAT")
	bindEnv(fs, "log-level", "TOOLGATE_LOG_LEVEL")
}

// serviceCommands log at info by default: they run until stopped and their log is what an
// operator reads. The other commands print their result on stdout and log warnings and errors.
var serviceCommands = map[string]bool{"worker": true, "dev": true, "mcp": true, "codec-server": true, "bench": true}

// defaultLogLevel is the --log-level of the top-level command cmd when the flag is not given.
func defaultLogLevel(cmd *cobra.Command) string {
	for cmd.HasParent() && cmd.Parent().HasParent() {
		cmd = cmd.Parent()
	}
	if serviceCommands[cmd.Name()] {
		return "info"
	}
	return "warn"
}

// escapingWriter escapes the control and invisible characters of each log line (safetext) before
// it reaches the terminal: log lines carry a model's and a tool's text. Console lines keep the tabs
// between their columns and their final newline; JSON lines stay the same JSON.
type escapingWriter struct {
	w    io.Writer
	json bool
}

func (e escapingWriter) Write(p []byte) (int, error) {
	var out []byte
	if e.json {
		out, _ = safetext.JSON(p)
	} else {
		line, nl := bytes.CutSuffix(p, []byte("\n"))
		cols := bytes.Split(line, []byte("\t"))
		for i, c := range cols {
			s, _ := safetext.Escape(string(c))
			cols[i] = []byte(s)
		}
		out = bytes.Join(cols, []byte("\t"))
		if nl {
			out = append(out, '\n')
		}
	}
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// consoleText is err's text for a console log message: the lines of a joined error (errors.Join
// puts a newline between them, which escapingWriter would show as a literal \u000a) joined with
// "; ". Other control characters are still escaped by escapingWriter.
func consoleText(err error) string {
	return strings.Join(strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' }), "; ")
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
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(escapingWriter{w: w, json: o.format == "json"})), level)
	return zap.New(core), nil
}
