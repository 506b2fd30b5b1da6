package logging

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/wire"
)

// SDK log messages and attribute keys the filter knows (go.temporal.io/sdk internal tags).
const (
	sdkActivityError    = "Activity error."
	sdkHeartbeatError   = "RecordActivityHeartbeat with error"
	sdkKeyError         = "Error"
	sdkKeyWorkflowID    = "WorkflowID"
	toolCallIDKey       = "toolCallId"
	workflowIDCallMark  = wire.WorkflowIDPrefix
	scopedCallIDPrefix  = "/" + workflowIDCallMark
	expectedOutcomeNote = "expected outcome"
)

// expectedOutcomes is a slog.Handler in front of the SDK's lines. It downgrades to Debug what the
// SDK logs as a problem although it is a normal outcome of a tool call, and adds toolCallId to
// SDK lines about a toolgate call:
//   - "Activity error." and "RecordActivityHeartbeat with error" whose error is a cancellation
//     (the caller canceled the call: the SDK logs ERROR with a stack, and WARN on the heartbeat
//     that brought the news);
//   - (a NonRecoverableToolError needs no filter: the activity returns it as a benign
//     ApplicationError, which the SDK itself logs at Debug).
//
// toolCallId is decoded from a WorkflowID of the shape "toolcall-<escaped id>" or
// "<scope>/toolcall-<escaped id>" (wire.WorkflowID).
//
// Attributes added with WithAttrs wait in attrs until a line is written: the SDK derives a logger
// with a task's tags for every workflow and activity task, most of which never write a line, and
// zap encodes such fields at once (a clone of the core and its buffer, about 5 KiB per held call).
type expectedOutcomes struct {
	next  slog.Handler
	attrs []slog.Attr // not yet applied to next; never mutated in place (shared by children)
}

// applied returns next with the pending attributes.
func (h expectedOutcomes) applied() slog.Handler {
	if len(h.attrs) == 0 {
		return h.next
	}
	return h.next.WithAttrs(h.attrs)
}

func (h expectedOutcomes) Enabled(ctx context.Context, level slog.Level) bool {
	// Handle only ever lowers a level, so what next does not want at level it never wants.
	return h.next.Enabled(ctx, level)
}

func (h expectedOutcomes) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelDebug && (r.Message == sdkActivityError || r.Message == sdkHeartbeatError) && carriesCancellation(r) {
		downgraded := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
		r.Attrs(func(a slog.Attr) bool { downgraded.AddAttrs(a); return true })
		downgraded.AddAttrs(slog.String("note", expectedOutcomeNote))
		r = downgraded
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	if id, ok := recordCallID(r); ok {
		r = r.Clone()
		r.AddAttrs(slog.String(toolCallIDKey, id))
	}
	return h.applied().Handle(ctx, r)
}

func (h expectedOutcomes) WithAttrs(attrs []slog.Attr) slog.Handler {
	for _, a := range attrs {
		if a.Key == sdkKeyWorkflowID {
			if id, ok := callIDOf(a.Value.String()); ok {
				attrs = append(attrs[:len(attrs):len(attrs)], slog.String(toolCallIDKey, id))
			}
			break
		}
	}
	if len(attrs) == 0 {
		return h
	}
	return expectedOutcomes{next: h.next, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...)}
}

func (h expectedOutcomes) WithGroup(name string) slog.Handler {
	// Pending attributes belong outside the group: apply them first.
	return expectedOutcomes{next: h.applied().WithGroup(name)}
}

// carriesCancellation reports whether the record's error attribute is a cancellation.
func carriesCancellation(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != sdkKeyError {
			return true
		}
		if err, ok := a.Value.Any().(error); ok {
			found = temporal.IsCanceledError(err) || errors.Is(err, context.Canceled)
		}
		return false
	})
	return found
}

// recordCallID returns the call ID of the record's WorkflowID attribute, if it has one.
func recordCallID(r slog.Record) (id string, ok bool) {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == sdkKeyWorkflowID {
			id, ok = callIDOf(a.Value.String())
			return false
		}
		return true
	})
	return id, ok
}

// callIDOf reverses wire.WorkflowID.
func callIDOf(workflowID string) (string, bool) {
	escaped, ok := strings.CutPrefix(workflowID, workflowIDCallMark)
	if !ok {
		i := strings.LastIndex(workflowID, scopedCallIDPrefix)
		if i < 0 {
			return "", false
		}
		escaped = workflowID[i+len(scopedCallIDPrefix):]
	}
	id, err := wire.UnescapeID(escaped)
	return id, err == nil && id != ""
}
