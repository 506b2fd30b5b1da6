package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// status shows a running tool's last five log messages as text, escaped, and all of them in JSON.
func TestStatusShowsLogs(t *testing.T) {
	var logs []toolcore.LogMessage
	for i := range 6 {
		logs = append(logs, toolcore.LogMessage{Level: toolcore.LogInfo, Message: fmt.Sprintf("step %d", i)})
	}
	logs[5] = toolcore.LogMessage{Level: toolcore.LogError, Message: "bad\x1b[31m", Data: json.RawMessage(`{"k":1}`)}
	st := tgclient.Status{WorkflowID: "toolcall-c1", State: tgclient.Running, Logs: logs}

	var text bytes.Buffer
	require.NoError(t, writeStatus(&text, st, nil, false))
	assert.NotContains(t, text.String(), "step 0", "the last five only")
	assert.Contains(t, text.String(), "step 1")
	assert.Contains(t, text.String(), `error: bad`)
	assert.Contains(t, text.String(), `{"k":1}`)
	assert.NotContains(t, text.String(), "\x1b")

	var js bytes.Buffer
	require.NoError(t, writeStatus(&js, st, nil, true))
	var out struct {
		Logs []toolcore.LogMessage `json:"logs"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &out))
	assert.Equal(t, logs, out.Logs)
}
