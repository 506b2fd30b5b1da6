//lint:file-ignore SA1019 logging is deprecated by 2026-07-28 (SEP-2577) and still served in its deprecation window and at 2025-11-25

package mcp

import (
	"context"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/toolcore"
)

// Logging. The server declares the logging capability, and a tools/call whose client asked for
// log messages gets its tool's (toolcore.Log) as notifications/message (level, logger: the tool's
// name, data), related to the request and in order with its progress notifications: one
// client.ProgressWatch reads both (progress.go). Who asked:
//
//   - up to 2025-11-25, a session whose client sent logging/setLevel: the messages at that level
//     and above, until it sets another (the SDK keeps the level and filters);
//   - at 2026-07-28 (no sessions, no logging/setLevel: the SDK answers it Method not found), a
//     request whose _meta carries io.modelcontextprotocol/logLevel: the messages at that level
//     and above, for that request only.
//
// A request of neither kind costs nothing more: no watch is started for logs alone.

// sessionLevels remembers which sessions set a log level, until they close.
type sessionLevels struct {
	mu     sync.Mutex
	levels map[*sdk.ServerSession]sdk.LoggingLevel
}

// track is receiving middleware of NewServer: it records the level of each logging/setLevel the
// SDK accepted.
func (l *sessionLevels) track(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		set, ok := req.(*sdk.ServerRequest[*sdk.SetLoggingLevelParams])
		if err != nil || !ok || set.Params == nil || set.Session == nil {
			return res, err
		}
		l.set(set.Session, set.Params.Level)
		return res, err
	}
}

func (l *sessionLevels) set(ss *sdk.ServerSession, level sdk.LoggingLevel) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.levels == nil {
		l.levels = map[*sdk.ServerSession]sdk.LoggingLevel{}
	}
	if _, known := l.levels[ss]; !known {
		go func() { // forget the session when it closes
			_ = ss.Wait()
			l.mu.Lock()
			delete(l.levels, ss)
			l.mu.Unlock()
		}()
	}
	l.levels[ss] = level
}

func (l *sessionLevels) of(ss *sdk.ServerSession) (sdk.LoggingLevel, bool) {
	if l == nil {
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	level, ok := l.levels[ss]
	return level, ok
}

// wantsLogs reports whether req's client asked for log messages (see above).
func (h *callHandler) wantsLogs(req *sdk.CallToolRequest) bool {
	if req.Params == nil {
		return false
	}
	if newProtocol(req.Params.Meta) {
		level, _ := req.Params.Meta[sdk.MetaKeyLogLevel].(string)
		return toolcore.LogLevel(level).Valid()
	}
	_, set := h.levels.of(req.Session)
	return set
}

// notifyLog sends the messages of tool name for req as notifications/message; the SDK drops those
// below the level asked for (the request's, at 2026-07-28, which ctx carries; the session's
// before).
func notifyLog(req *sdk.CallToolRequest, name string) func(context.Context, toolcore.LogMessage) error {
	return func(ctx context.Context, m toolcore.LogMessage) error {
		return req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: sdk.LoggingLevel(m.Level), Logger: name, Data: logData(m)})
	}
}

// logData is a message's MCP data: the message alone, the data alone (JSON already, bounded by
// toolcore.Log: it goes out as it is), or both as {"message": ..., "data": ...}.
func logData(m toolcore.LogMessage) any {
	switch {
	case len(m.Data) == 0:
		return m.Message
	case m.Message == "":
		return m.Data
	default:
		return map[string]any{"message": m.Message, "data": m.Data}
	}
}
