package wire

import "encoding/json"

// LogDetailsIndex is where a tool's log messages (toolcore.Log) travel in the heartbeat details
// of an ExecuteTool attempt: once the tool has logged, the details are three payloads, the
// ProgressWindow (JSON null when the tool has reported no progress), the checkpoint (JSON null
// when it has recorded none) and the LogWindow. Readers of the first two payloads are unchanged.
const LogDetailsIndex = 2

// LogDetails is one log message of a running tool, JSON
//
//	{"level":"info","message":"fetched","data":{"rows":3},"after":2}
//
// Level is one of MCP's eight (toolcore.LogLevel); Message and Data are bounded and redacted by
// toolcore.Log. After orders the message among the tool's progress reports: the number (Seq) of
// the latest progress report made before it, 0 before the first. A reader hands out a message
// after progress report After and before report After+1.
type LogDetails struct {
	Level   string          `json:"level"`
	Message string          `json:"message,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	After   int64           `json:"after,omitempty"`
}

// LogWindow is the latest log messages of an ExecuteTool attempt, numbered: the third heartbeat
// details payload (LogDetailsIndex) and the member "logs" of its result (FinalProgress), so a
// reader that reads less often than heartbeats are sent still gets every message, in order,
// each once. JSON
//
//	{"seq":7,"messages":[{"level":"info","message":"six"},{"level":"info","message":"seven"}]}
//
// Like a ProgressWindow it holds at most MaxLogWindowMessages messages and MaxLogWindowBytes of
// their JSON, the latest always, and its numbers count over the activity's attempts: a reader
// that last handed out message n and reads a window whose first number is above n+1 lost the
// messages in between.
type LogWindow struct {
	// Seq numbers the latest message: the activity's n-th message has n.
	Seq int64 `json:"seq"`
	// Messages are the messages still in the window, oldest first, numbered
	// Seq-len(Messages)+1 to Seq.
	Messages []LogDetails `json:"messages"`
}

// Bounds of a LogWindow: the messages it holds and the bytes of their JSON (each message's
// encoding plus one separator). A message is at most about 5.2 KiB (toolcore.MaxLogMessageBytes,
// toolcore.MaxLogDataBytes), so the window always holds the latest few whole.
const (
	MaxLogWindowMessages = 128
	MaxLogWindowBytes    = 32 << 10
)

// NumberedLog is one message of a window with its number.
type NumberedLog struct {
	Seq int64
	LogDetails
}

// Numbered returns the window's messages, oldest first, each with its number (0 for a number a
// malformed window would put below 1).
func (w LogWindow) Numbered() []NumberedLog {
	out := make([]NumberedLog, 0, len(w.Messages))
	n := w.Seq - int64(len(w.Messages)) + 1
	for _, m := range w.Messages {
		out = append(out, NumberedLog{Seq: max(n, 0), LogDetails: m})
		n++
	}
	return out
}
