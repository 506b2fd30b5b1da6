package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// The log window numbers every message from 1 (or on from an earlier attempt's number), holds the
// latest MaxLogWindowMessages within MaxLogWindowBytes, always the latest, oldest first, and hands
// out a window later messages do not change.
func TestLogWindowBounds(t *testing.T) {
	var w logWindow
	assert.Nil(t, w.window(), "no message, no window")
	first := wire.LogDetails{Level: "info", Message: "1"}
	w.add(first, logSize(first))
	one := w.window()
	assert.Equal(t, &wire.LogWindow{Seq: 1, Messages: []wire.LogDetails{first}}, one)

	const made = wire.MaxLogWindowMessages + 30
	for k := 2; k <= made; k++ {
		m := wire.LogDetails{Level: "debug", Message: strings.Repeat("m", k%7)}
		w.add(m, logSize(m))
	}
	assert.Equal(t, &wire.LogWindow{Seq: 1, Messages: []wire.LogDetails{first}}, one, "a window handed out is never changed")
	got := w.window()
	require.Len(t, got.Messages, wire.MaxLogWindowMessages, "bounded by count")
	numbered := got.Numbered()
	assert.Equal(t, int64(made-wire.MaxLogWindowMessages+1), numbered[0].Seq, "the oldest gone")
	assert.Equal(t, int64(made), numbered[len(numbered)-1].Seq)

	big := wire.LogDetails{Level: "info", Message: strings.Repeat("x", toolcore.MaxLogMessageBytes),
		Data: json.RawMessage(`"` + strings.Repeat("y", toolcore.MaxLogDataBytes-2) + `"`)}
	for range 20 {
		w.add(big, logSize(big))
	}
	got = w.window()
	b, err := json.Marshal(got)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), wire.MaxLogWindowBytes+64, "bounded by bytes")
	assert.Greater(t, len(got.Messages), 1, "as many as fit")
	assert.Equal(t, int64(made+20), got.Seq)

	var next logWindow
	next.continueFrom(made + 20)
	next.add(first, logSize(first))
	assert.Equal(t, int64(made+21), next.window().Seq, "a later attempt numbers on")
}

// A beat after a message carries the log window as its third payload (after the progress window
// and the checkpoint, null here), each message marked with the progress report made before it.
func TestHeartbeatLoopCarriesLogsAmongProgress(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Hour, log.send, log.relay) // beats on reports only
	defer h.stop()
	h.log(toolcore.LogMessage{Level: toolcore.LogInfo, Message: "before"})
	h.report(toolcore.Progress{Completed: 1, Total: 2})
	h.log(toolcore.LogMessage{Level: toolcore.LogWarning, Message: "between", Data: json.RawMessage(`{"k":1}`)})
	h.report(toolcore.Progress{Completed: 2, Total: 2})
	h.log(toolcore.LogMessage{Level: toolcore.LogError, Message: "after"})
	want := &wire.LogWindow{Seq: 3, Messages: []wire.LogDetails{
		{Level: "info", Message: "before"},
		{Level: "warning", Message: "between", Data: json.RawMessage(`{"k":1}`), After: 1},
		{Level: "error", Message: "after", After: 2},
	}}
	for got := range log.next {
		require.Len(t, got, 3, "progress, checkpoint, logs")
		if w, _ := got[wire.LogDetailsIndex].(*wire.LogWindow); w != nil && w.Seq == 3 {
			assert.Equal(t, want, w)
			assert.Equal(t, int64(2), got[0].(*wire.ProgressWindow).Seq)
			assert.Nil(t, got[wire.CheckpointDetailsIndex], "no checkpoint: null")
			break
		}
	}
	assert.Equal(t, want, h.latestLogs(), "the result carries the same window")
}

// levelLog records the SDK logger's calls: level and key-values.
type levelLog struct {
	mu      sync.Mutex
	entries []levelEntry
}

type levelEntry struct {
	level, msg string
	kv         map[string]any
}

func (l *levelLog) add(level, msg string, keyvals []any) {
	kv := map[string]any{}
	for i := 0; i+1 < len(keyvals); i += 2 {
		kv[fmt.Sprint(keyvals[i])] = keyvals[i+1]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, levelEntry{level: level, msg: msg, kv: kv})
}

func (l *levelLog) Debug(msg string, keyvals ...any) { l.add("debug", msg, keyvals) }
func (l *levelLog) Info(msg string, keyvals ...any)  { l.add("info", msg, keyvals) }
func (l *levelLog) Warn(msg string, keyvals ...any)  { l.add("warn", msg, keyvals) }
func (l *levelLog) Error(msg string, keyvals ...any) { l.add("error", msg, keyvals) }

// An attempt's log messages reach the worker's log at the matching level, redacted, and its
// result carries them.
func TestExecuteToolLogsAtTheMatchingLevel(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	chatty := toolcore.MustDefine(toolcore.Definition[struct{}]{
		Name: "chatty", Description: "Logs at every level.",
		Options: toolcore.Options{Secrets: []string{"api_key"}},
		Execute: func(ctx context.Context, _ struct{}) (any, error) {
			for _, l := range []toolcore.LogLevel{toolcore.LogDebug, toolcore.LogInfo, toolcore.LogNotice, toolcore.LogWarning,
				toolcore.LogError, toolcore.LogCritical, toolcore.LogAlert, toolcore.LogEmergency} {
				toolcore.Log(ctx, l, string(l)+" "+secret, nil)
			}
			return "ok", nil
		},
	})
	reg, err := toolcore.NewRegistry(chatty)
	require.NoError(t, err)
	logger := &levelLog{}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(logger)
	env := suite.NewTestActivityEnvironment()
	(&Activities{Registry: reg, Secrets: staticSecrets{"api_key": secret}}).Register(env)
	val, err := env.ExecuteActivity(wire.ExecuteToolName, ExecuteToolInput{ToolCallID: "call-1", ToolName: "chatty",
		Accepted: json.RawMessage(`{}`), IdempotencyKey: "toolcall-call-1"})
	require.NoError(t, err)
	var out ExecuteToolOutput
	require.NoError(t, val.Get(&out))
	require.NotNil(t, out.Logs)
	assert.Len(t, out.Logs.Messages, 8, "the result carries the attempt's messages")

	got := map[string]string{} // tool level -> worker level
	logger.mu.Lock()
	for _, e := range logger.entries {
		if e.msg != "Tool log" {
			continue
		}
		got[e.kv["level"].(string)] = e.level
		assert.Equal(t, "chatty", e.kv["toolName"])
		assert.NotContains(t, e.kv["message"], secret, "redacted in the worker's log")
	}
	logger.mu.Unlock()
	assert.Equal(t, map[string]string{"debug": "debug", "info": "info", "notice": "info", "warning": "warn",
		"error": "error", "critical": "error", "alert": "error", "emergency": "error"}, got)
}

// staticSecrets is a SecretSource over a map.
type staticSecrets map[string]string

func (s staticSecrets) Secret(_ context.Context, name string) (string, error) {
	v, ok := s[name]
	if !ok {
		return "", fmt.Errorf("%s: %w", name, toolcore.ErrSecretNotFound)
	}
	return v, nil
}
