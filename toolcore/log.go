package toolcore

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// LogLevel is the severity of a tool's log message: the syslog severities of RFC 5424 that MCP's
// logging uses, LogDebug the least severe and LogEmergency the most. The zero value is no level:
// Log treats it, and any other unknown level, as LogInfo.
type LogLevel string

// The log levels, least severe first.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

// logLevels are the levels, least severe first: a level's index is its severity.
var logLevels = [...]LogLevel{LogDebug, LogInfo, LogNotice, LogWarning, LogError, LogCritical, LogAlert, LogEmergency}

// Severity returns the level's rank, 0 for LogDebug to 7 for LogEmergency, and -1 for an unknown
// level. A reader that asked for level min receives the messages whose Severity is at least
// min.Severity().
func (l LogLevel) Severity() int {
	for i, x := range logLevels {
		if x == l {
			return i
		}
	}
	return -1
}

// Valid reports whether l is one of the eight levels.
func (l LogLevel) Valid() bool { return l.Severity() >= 0 }

// Bounds of what Log passes on: the message's bytes, the bytes of the data's JSON, and the
// messages of one execution (one attempt on the durable path).
const (
	MaxLogMessageBytes = 1024
	MaxLogDataBytes    = 4096
	MaxLogMessages     = 1000
)

// LogLimitMessage is the message of the one warning that takes the place of an execution's
// message number MaxLogMessages+1; the messages after it are dropped.
const LogLimitMessage = "toolgate: this attempt logged the most messages it may (1000); later messages are dropped"

// LogMessage is one message a tool logged, as executors receive it (Execution.OnLog): bounded
// and with the execution's secrets redacted.
type LogMessage struct {
	Level   LogLevel `json:"level"`
	Message string   `json:"message,omitempty"`
	// Data is the JSON of Log's data (the bounded serializer's), absent when data was nil.
	Data json.RawMessage `json:"data,omitempty"`
}

// logCount counts the messages of one execution.
type logCount struct{ n atomic.Int64 }

// Log logs message, with data (any value Serialize accepts, nil for none), at level for whoever
// runs the tool: the MCP client of the call (notifications/message, in order with its progress),
// the Go client's Options.OnLog, the worker's log. It never blocks the tool (as long as the
// executor's OnLog keeps its promise to return promptly) and is a no-op outside an execution.
//
// Bounds: the message keeps at most MaxLogMessageBytes of valid UTF-8 (TruncationMarker ends a
// cut one); data whose JSON is longer than MaxLogDataBytes, cut by the serializer's budgets or not
// serializable at all becomes a JSON string saying so, with the beginning of its text where there
// is one. An execution passes on at most MaxLogMessages messages; the next becomes one LogWarning
// of LogLimitMessage, and the rest are dropped. The values of the execution's secrets are
// redacted from both the message and the data, as from progress and results. An unknown level is
// LogInfo. A panicking OnLog is recovered.
func Log(ctx context.Context, level LogLevel, message string, data any) {
	e := executionFrom(ctx)
	if e == nil || e.OnLog == nil {
		return
	}
	if e.logs != nil {
		switch n := e.logs.n.Add(1); {
		case n == MaxLogMessages+1:
			level, message, data = LogWarning, LogLimitMessage, nil
		case n > MaxLogMessages+1:
			return
		}
	}
	m := BoundLogMessage(e.Secrets, level, message, data)
	defer func() { _ = recover() }()
	e.OnLog(m)
}

// BoundLogMessage is the message Log passes on for level, message and data: bounded, with every
// value sec holds redacted (sec may be nil), an unknown level as LogInfo. Executors that relay log
// messages from elsewhere (a mounted MCP server's notifications) bound them with it.
func BoundLogMessage(sec *Secrets, level LogLevel, message string, data any) LogMessage {
	if !level.Valid() {
		level = LogInfo
	}
	m := LogMessage{Level: level, Message: cutLogText(sec.Redact(cutLogText(message)))}
	if data != nil {
		m.Data = logData(sec, data)
	}
	return m
}

// cutLogText keeps at most MaxLogMessageBytes of s, valid UTF-8, ending a cut text with
// TruncationMarker (which Redact knows: a secret cut in two is redacted from its first part).
func cutLogText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxLogMessageBytes {
		return s
	}
	return cutUTF8(s, MaxLogMessageBytes-len(TruncationMarker)) + TruncationMarker
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends on a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// logData is the JSON of data within MaxLogDataBytes, redacted.
func logData(sec *Secrets, data any) json.RawMessage {
	text, err := Serialize(data)
	switch {
	case err != nil:
		return logDataNote(sec, "not serializable: "+ErrorText(err), "")
	case strings.HasSuffix(text, TruncationMarker):
		return logDataNote(sec, "cut by the serializer's budgets", strings.TrimSuffix(text, TruncationMarker))
	case len(text) > MaxLogDataBytes:
		return logDataNote(sec, "over "+strconv.Itoa(MaxLogDataBytes)+" bytes", text)
	}
	red, ok := sec.RedactCheckpoint(json.RawMessage(text))
	if !ok || len(red) > MaxLogDataBytes {
		return logDataNote(sec, "it held a secret", "")
	}
	return red
}

// logDataNote is the JSON string that replaces data that cannot be passed on as it is: why, and
// the beginning of its text, redacted.
func logDataNote(sec *Secrets, why, text string) json.RawMessage {
	note := "[log data " + why + "]"
	if text != "" {
		note += " " + text
	}
	note = cutLogText(sec.Redact(cutLogText(note))) // quoting may grow a byte to six: cut until the JSON fits
	for {
		b, _ := json.Marshal(note) // a string: cannot fail
		if len(b) <= MaxLogDataBytes {
			return b
		}
		note = cutUTF8(note, len(note)/2)
	}
}
