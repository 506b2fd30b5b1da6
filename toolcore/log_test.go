package toolcore_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// logged runs fn with an execution whose OnLog collects what Log passes on.
func logged(sec *toolcore.Secrets, fn func(ctx context.Context)) []toolcore.LogMessage {
	var (
		mu  sync.Mutex
		got []toolcore.LogMessage
	)
	ctx := toolcore.WithExecution(context.Background(), toolcore.Execution{
		ToolName: "t",
		Secrets:  sec,
		OnLog: func(m toolcore.LogMessage) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, m)
		},
	})
	fn(ctx)
	return got
}

func TestLogPassesMessagesOn(t *testing.T) {
	got := logged(nil, func(ctx context.Context) {
		toolcore.Log(ctx, toolcore.LogDebug, "starting", nil)
		toolcore.Log(ctx, toolcore.LogWarning, "rows", map[string]int{"b": 2, "a": 1})
		toolcore.Log(ctx, "loud", "unknown level", "x")
	})
	require.Len(t, got, 3)
	assert.Equal(t, toolcore.LogMessage{Level: toolcore.LogDebug, Message: "starting"}, got[0])
	assert.Equal(t, toolcore.LogWarning, got[1].Level)
	assert.JSONEq(t, `{"a":1,"b":2}`, string(got[1].Data))
	assert.Equal(t, toolcore.LogInfo, got[2].Level, "an unknown level is info")
	assert.Equal(t, `"x"`, string(got[2].Data))
}

func TestLogOutsideAnExecutionDoesNothing(t *testing.T) {
	assert.NotPanics(t, func() { toolcore.Log(context.Background(), toolcore.LogError, "nobody", nil) })
	ctx := toolcore.WithExecution(context.Background(), toolcore.Execution{
		OnLog: func(toolcore.LogMessage) { panic("sink") },
	})
	assert.NotPanics(t, func() { toolcore.Log(ctx, toolcore.LogError, "recovered", nil) })
}

func TestLogLevelSeverity(t *testing.T) {
	tests := []struct {
		give toolcore.LogLevel
		want int
	}{
		{give: toolcore.LogDebug, want: 0},
		{give: toolcore.LogInfo, want: 1},
		{give: toolcore.LogNotice, want: 2},
		{give: toolcore.LogWarning, want: 3},
		{give: toolcore.LogError, want: 4},
		{give: toolcore.LogCritical, want: 5},
		{give: toolcore.LogAlert, want: 6},
		{give: toolcore.LogEmergency, want: 7},
		{give: "", want: -1},
		{give: "DEBUG", want: -1},
	}
	for _, tt := range tests {
		t.Run(string(tt.give), func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.Severity())
			assert.Equal(t, tt.want >= 0, tt.give.Valid())
		})
	}
}

func TestLogBounds(t *testing.T) {
	long := strings.Repeat("é", toolcore.MaxLogMessageBytes) // two bytes each
	tests := []struct {
		name     string
		message  string
		data     any
		wantData string // a prefix of the data's JSON
	}{
		{name: "long message", message: long},
		{name: "invalid UTF-8", message: "a\xffb"},
		{name: "data over the bound", data: strings.Repeat("é", 2500), wantData: `"[log data over 4096 bytes] \"ééé`},
		{name: "data cut by the serializer", data: make([]int, 100000), wantData: `"[log data cut by the serializer's budgets] [0,0,`},
		{name: "data not serializable", data: make(chan int), wantData: `"[log data not serializable: `},
		{name: "quoting grows data", data: strings.Repeat("\x01", 3000), wantData: `"[log data cut by the serializer's budgets] \"\\u0001\\u0001`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := logged(nil, func(ctx context.Context) { toolcore.Log(ctx, toolcore.LogInfo, tt.message, tt.data) })
			require.Len(t, got, 1)
			m := got[0]
			assert.LessOrEqual(t, len(m.Message), toolcore.MaxLogMessageBytes)
			assert.True(t, utf8.ValidString(m.Message))
			if len(tt.message) > toolcore.MaxLogMessageBytes {
				assert.True(t, strings.HasSuffix(m.Message, toolcore.TruncationMarker), "a cut message says so")
			}
			assert.LessOrEqual(t, len(m.Data), toolcore.MaxLogDataBytes)
			if tt.data != nil {
				assert.True(t, json.Valid(m.Data), "data stays JSON: %s", m.Data)
				assert.True(t, strings.HasPrefix(string(m.Data), tt.wantData), "data %.80s", m.Data)
			}
		})
	}
}

func TestLogCountsMessagesPerExecution(t *testing.T) {
	got := logged(nil, func(ctx context.Context) {
		for range toolcore.MaxLogMessages + 50 {
			toolcore.Log(ctx, toolcore.LogDebug, "tick", nil)
		}
	})
	require.Len(t, got, toolcore.MaxLogMessages+1)
	assert.Equal(t, toolcore.LogMessage{Level: toolcore.LogWarning, Message: toolcore.LogLimitMessage}, got[toolcore.MaxLogMessages])
	// A new execution counts afresh.
	again := logged(nil, func(ctx context.Context) { toolcore.Log(ctx, toolcore.LogDebug, "tick", nil) })
	assert.Len(t, again, 1)
}

func TestLogRedactsSecrets(t *testing.T) {
	sec := resolved(t, map[string]string{"api_key": testKey})
	// The bound cuts the message inside the key: its first 10 bytes stay before the marker.
	cut := strings.Repeat("a", toolcore.MaxLogMessageBytes-len(toolcore.TruncationMarker)-10) + testKey + strings.Repeat("b", 100)
	got := logged(sec, func(ctx context.Context) {
		toolcore.Log(ctx, toolcore.LogInfo, "key "+testKey, map[string]string{"authorization": "Bearer " + testKey})
		toolcore.Log(ctx, toolcore.LogInfo, cut, strings.Repeat("ü", 2100)+testKey)
		toolcore.Log(ctx, toolcore.LogInfo, "number", json.RawMessage(`{"n":12345678901234}`))
	})
	require.Len(t, got, 3)
	assert.Equal(t, "key "+toolcore.RedactionMarker("api_key"), got[0].Message)
	assert.JSONEq(t, `{"authorization":"Bearer [REDACTED:api_key]"}`, string(got[0].Data))
	for _, m := range got {
		assert.NotContains(t, m.Message, testKey[:8], "no secret, whole or cut, in the message")
		assert.NotContains(t, string(m.Data), testKey[:8], "no secret in the data")
	}

	numeric := resolved(t, map[string]string{"pin": "12345678901234"})
	got = logged(numeric, func(ctx context.Context) {
		toolcore.Log(ctx, toolcore.LogInfo, "number", json.RawMessage(`{"n":12345678901234}`))
	})
	require.Len(t, got, 1)
	assert.Equal(t, `"[log data it held a secret]"`, string(got[0].Data), "a redaction that breaks the JSON drops the data")
}

func TestExecuteWithPassesLogsOn(t *testing.T) {
	tool := toolcore.MustDefine(toolcore.Definition[struct{}]{Name: "chatty", Description: "Logs.",
		Execute: func(ctx context.Context, _ struct{}) (any, error) {
			toolcore.Log(ctx, toolcore.LogNotice, "hello", nil)
			return "ok", nil
		}})
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	call, err := toolcore.NewToolCall("c1", "chatty", []byte(`{}`))
	require.NoError(t, err)
	var got []toolcore.LogMessage
	_, err = toolcore.ExecuteWith(context.Background(), reg, call, toolcore.ExecuteOptions{
		OnLog: func(m toolcore.LogMessage) { got = append(got, m) },
	})
	require.NoError(t, err)
	assert.Equal(t, []toolcore.LogMessage{{Level: toolcore.LogNotice, Message: "hello"}}, got)
}
