package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
)

// A tool's log message is one escaped line on stderr: a terminal escape the tool wrote is shown,
// not obeyed; progress off hides the messages.
func TestLogNotice(t *testing.T) {
	ev := tgclient.LogEvent{ToolName: "sync", Log: toolcore.LogMessage{Level: toolcore.LogWarning,
		Message: "rows\x1b[2Jskipped\nforged line", Data: json.RawMessage(`{"rows":2}`)}}
	line := logNotice(ev)
	assert.NotContains(t, line, "\x1b")
	assert.NotContains(t, line, "\n")
	assert.Contains(t, line, `sync warning: rows`)
	assert.Contains(t, line, `{"rows":2}`)

	var out bytes.Buffer
	shown := &progressView{w: &out, mode: progressPlain}
	shown.logHook()(ev)
	assert.Equal(t, line+"\n", out.String())
	assert.Nil(t, (&progressView{w: &out, mode: progressOff}).logHook())
}
