package devserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// serverLogger adapts a zap logger to the server's log.Logger. Four differences from the
// server's own zap adapter:
//   - Entries below the level are dropped before they reach the user's core (the server logs
//     hundreds of info lines at start and a burst of warnings at stop).
//   - Two known-benign entries are dropped: the warning that the HTTP API (Nexus) is off, at
//     every start, and the error the frontend logs whenever a worker stops in the middle of a
//     long poll (its context is canceled).
//   - Fatal panics with a *fatalError instead of exiting the process: the server calls Fatal
//     when it cannot bind a port, and Start turns that panic into an error and retries on other
//     ports. Only main exits.
//   - Tags added with With wait until a line is written: the server derives a tagged logger for
//     every task it runs (tasks.InitializeLogger) and keeps it with the task, and zap encodes
//     such tags at once (a clone of the core and a 4 KiB JSON encoder: 3.2 KiB of live heap per
//     held call, 1.8% of the CPU of a no-op call). Almost none of them writes a line.
type serverLogger struct {
	base    log.Logger // without the pending tags
	wrapped log.Logger // base one frame further up, as the methods here call it
	pending []tag.Tag  // added with With, not yet given to base; never mutated in place
}

// newServerLogger returns the server logger writing to z at level and above.
func newServerLogger(z *zap.Logger, level zap.AtomicLevel) log.Logger {
	z = z.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return levelCore{Core: c, level: level}
	}))
	return wrapServerLogger(log.NewZapLogger(z))
}

// wrapServerLogger wraps l, keeping the "logging-call-at" of the lines right.
func wrapServerLogger(l log.Logger) serverLogger {
	s := serverLogger{base: l, wrapped: l}
	if sl, ok := l.(log.SkipLogger); ok {
		s.wrapped = sl.Skip(1)
	}
	return s
}

// with returns the line's tags after the pending ones.
func (l serverLogger) with(tags []tag.Tag) []tag.Tag {
	if len(l.pending) == 0 {
		return tags
	}
	return append(l.pending[:len(l.pending):len(l.pending)], tags...)
}

func (l serverLogger) Debug(msg string, tags ...tag.Tag) { l.wrapped.Debug(msg, l.with(tags)...) }

func (l serverLogger) Info(msg string, tags ...tag.Tag) { l.wrapped.Info(msg, l.with(tags)...) }

func (l serverLogger) DPanic(msg string, tags ...tag.Tag) { l.wrapped.DPanic(msg, l.with(tags)...) }

func (l serverLogger) Panic(msg string, tags ...tag.Tag) { l.wrapped.Panic(msg, l.with(tags)...) }

func (l serverLogger) Warn(msg string, tags ...tag.Tag) {
	if strings.HasPrefix(msg, "HTTP API port has not been set") {
		return
	}
	l.wrapped.Warn(msg, l.with(tags)...)
}

func (l serverLogger) Error(msg string, tags ...tag.Tag) {
	if strings.HasPrefix(msg, "Unable to call matching.Poll") && hasCanceledError(tags) {
		return
	}
	l.wrapped.Error(msg, l.with(tags)...)
}

// hasCanceledError reports whether an error tag says the call's context was canceled.
func hasCanceledError(tags []tag.Tag) bool {
	for _, err := range tagErrors(tags) {
		if errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context canceled") {
			return true
		}
	}
	return false
}

// tagErrors returns the errors of the tags made with tag.Error.
func tagErrors(tags []tag.Tag) []error {
	var errs []error
	for _, t := range tags {
		zt, ok := t.(tag.ZapTag)
		if !ok {
			continue
		}
		if f := zt.Field(); f.Type == zapcore.ErrorType {
			if err, ok := f.Interface.(error); ok {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func (l serverLogger) Fatal(msg string, tags ...tag.Tag) {
	tags = l.with(tags)
	l.wrapped.Error(msg, tags...)
	panic(&fatalError{msg: msg, tags: tags})
}

func (l serverLogger) With(tags ...tag.Tag) log.Logger {
	if len(tags) == 0 {
		return l
	}
	l.pending = l.with(tags)
	return l
}

func (l serverLogger) Skip(extraSkip int) log.Logger {
	s, ok := l.base.(log.SkipLogger)
	if !ok {
		return l
	}
	skipped := wrapServerLogger(s.Skip(extraSkip))
	skipped.pending = l.pending
	return skipped
}

// fatalError is what the server asked to die of.
type fatalError struct {
	msg  string
	tags []tag.Tag
}

func (e *fatalError) Error() string {
	var b strings.Builder
	b.WriteString(e.msg)
	for _, t := range e.tags {
		fmt.Fprintf(&b, " %s=%v", t.Key(), t.Value())
	}
	return b.String()
}

// Unwrap returns the errors among the tags.
func (e *fatalError) Unwrap() []error {
	return tagErrors(e.tags)
}

// isAddrInUse reports whether err says a port was taken.
func isAddrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE)
}

// catchFatal runs f, turning a serverLogger.Fatal panic into its *fatalError. Other panics pass.
func catchFatal(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(*fatalError)
			if !ok {
				panic(r)
			}
			err = fe
		}
	}()
	return f()
}

// levelCore drops entries below level, then defers to the wrapped core.
type levelCore struct {
	zapcore.Core
	level zap.AtomicLevel
}

func (c levelCore) Enabled(l zapcore.Level) bool {
	return c.level.Enabled(l) && c.Core.Enabled(l)
}

func (c levelCore) With(fields []zapcore.Field) zapcore.Core {
	return levelCore{Core: c.Core.With(fields), level: c.level}
}

func (c levelCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !c.level.Enabled(e.Level) {
		return ce
	}
	return c.Core.Check(e, ce)
}
