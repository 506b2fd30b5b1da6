package policy_test

import (
	"context"
	"log/slog"
)

// recordingHandler sends each record's message to seen.
type recordingHandler struct{ seen chan string }

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.seen <- r.Message
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func newLogger(h slog.Handler) *slog.Logger { return slog.New(h) }
