package main

import (
	"fmt"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
)

// logNotice is the stderr line of a tool's log message (toolcore.Log) during `toolgate call`:
// the tool, the level, the message and the data's JSON, escaped (the tool's text is untrusted).
func logNotice(ev tgclient.LogEvent) string {
	line := fmt.Sprintf("%s %s: %s", ev.ToolName, ev.Log.Level, ev.Log.Message)
	if len(ev.Log.Data) > 0 {
		line += " " + string(ev.Log.Data)
	}
	return safetext.String(line)
}

// logHook is the client.Options.OnLog of a call whose progress view is v: each message on its own
// line above the bar, or nil (nothing is read for it) when progress is off.
func (v *progressView) logHook() func(tgclient.LogEvent) {
	if v.mode == progressOff {
		return nil
	}
	return func(ev tgclient.LogEvent) { v.println(logNotice(ev)) }
}

// statusLogLines is how many of a running tool's latest log messages status shows as text (the
// JSON has all the window holds).
const statusLogLines = 5

// logLines are status's lines of a running tool's latest log messages: the last statusLogLines,
// oldest first (writeLines escapes them).
func logLines(logs []toolcore.LogMessage) [][2]string {
	var lines [][2]string
	for _, m := range logs[max(len(logs)-statusLogLines, 0):] {
		text := string(m.Level) + ": " + m.Message
		if len(m.Data) > 0 {
			text += " " + string(m.Data)
		}
		lines = append(lines, [2]string{"log", text})
	}
	return lines
}
