package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// attacks are the strings of issue 25 a model can put in a call's arguments, with what a reader
// sees of each in the CLI's output.
var attacks = []struct {
	name, raw, shown string
}{
	{"C1 CSI clear screen", "\u009b2J\u009b1;1H", `\u009b2J\u009b1;1H`},
	{"bidi override", "report\u202etxt.sh", `report\u202etxt.sh`},
	{"NUL", "a\x00b", `a\u0000b`},
	{"ANSI OSC 8 link", "\x1b]8;;http://evil\x1b\\click", `\u001b]8;;http://evil\u001b\click`},
}

// assertNoRaw fails when out holds a C0 (but newline and tab), DEL, C1 or bidi control.
func assertNoRaw(t *testing.T, out string) {
	t.Helper()
	for _, r := range out {
		bad := (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
		assert.False(t, bad, "raw %U in %q", r, out)
	}
}

// TestApprovalStateEscaped: what approve and reject show of a waiting call (tool, arguments,
// reviewer) is escaped, says so, and the recorded arguments and hash are unchanged.
func TestApprovalStateEscaped(t *testing.T) {
	for _, tt := range attacks {
		t.Run(tt.name, func(t *testing.T) {
			args, err := json.Marshal(map[string]string{"path": tt.raw})
			require.NoError(t, err)
			st := wire.ApprovalState{
				ToolCallID: "c1", ToolName: "write_file", Arguments: args, CallHash: "sha256:abc",
				Deadline: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Waiting: true,
				Decision: &wire.ApprovalRecord{Decision: wire.DecisionRejected, Reviewer: "eve" + tt.raw},
			}
			before := string(st.Arguments)
			var out bytes.Buffer
			require.NoError(t, writeApprovalState(&out, "toolcall-c1", st))
			assertNoRaw(t, out.String())
			assert.Contains(t, out.String(), tt.shown)
			assert.Contains(t, out.String(), "\nnote      (escaped ")
			assert.Contains(t, out.String(), "hash      sha256:abc\n")
			assert.Equal(t, before, string(st.Arguments), "the recorded bytes stay")
		})
	}
}

// TestApprovalsListEscaped: toolgate approvals shows each waiting call's tool and call ID
// escaped, one line per call (tabs between the fields kept), and says so.
func TestApprovalsListEscaped(t *testing.T) {
	for _, tt := range attacks {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, writePending(&out, []pendingJSON{{
				WorkflowID: "toolcall-c1", ToolCallID: "c1" + tt.raw, ToolName: "write_file" + tt.raw,
				StartTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			}}))
			assertNoRaw(t, out.String())
			assert.Contains(t, out.String(), "write_file"+tt.shown+"\tc1"+tt.shown+"\t2026-01-02T03:04:05Z\t(escaped ")
			assert.Equal(t, 1, strings.Count(out.String(), "\n"), "one line")
		})
	}
}

// TestStatusEscaped: toolgate status, text and --json, shows a result's and a failure's model
// text escaped; --json stays the same JSON value.
func TestStatusEscaped(t *testing.T) {
	for _, tt := range attacks {
		t.Run(tt.name, func(t *testing.T) {
			call, err := toolcore.NewToolCall("c1", "echo", []byte(`{}`))
			require.NoError(t, err)
			res := toolcore.SuccessResult(call, tt.raw)
			st := tgclient.Status{WorkflowID: "toolcall-c1", ToolCallID: "c1", ToolName: "echo", LastFailure: tt.raw,
				RetryAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Result: &res}
			var text, js bytes.Buffer
			require.NoError(t, writeStatus(&text, st, nil, false))
			require.NoError(t, writeStatus(&js, st, nil, true))
			assertNoRaw(t, text.String())
			assertNoRaw(t, js.String())
			assert.Contains(t, text.String(), "(escaped ")
			var got statusJSON
			require.NoError(t, json.Unmarshal(js.Bytes(), &got))
			assert.Equal(t, tt.raw, got.LastFailure, "--json decodes to the exact text")
			assert.Equal(t, tt.raw, got.Result.Content())
		})
	}
}

// TestLogLinesEscaped: console and JSON log lines carry a model's text escaped; console keeps
// its tab-separated columns.
func TestLogLinesEscaped(t *testing.T) {
	for _, format := range []string{"console", "json"} {
		for _, tt := range attacks {
			t.Run(format+" "+tt.name, func(t *testing.T) {
				var buf bytes.Buffer
				logger, err := newLogger(logOptions{format: format, level: "info"}, &buf)
				require.NoError(t, err)
				logger.Info("call failed: " + tt.raw)
				assertNoRaw(t, buf.String())
				assert.True(t, strings.HasSuffix(buf.String(), "\n"))
				if format == "console" {
					assert.Contains(t, buf.String(), "\tINFO\tcall failed: "+tt.shown)
				} else {
					var line map[string]any
					require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
					assert.Equal(t, "call failed: "+tt.raw, line["msg"])
				}
			})
		}
	}
}

// TestErrorLineEscaped: the CLI's error line shows a bad path (from a flag, an environment, a
// model) escaped.
func TestErrorLineEscaped(t *testing.T) {
	for _, tt := range attacks[:2] {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runIn([]string{"status", "--call-id", "x", "--tls-ca-path", "/no/" + tt.raw}, nil, "")
			assert.Equal(t, ExitUsage, code)
			assertNoRaw(t, stderr)
			assert.Contains(t, stderr, "/no/"+tt.shown)
		})
	}
}

// TestDefaultLogLevel: one-shot commands log warnings and errors only (their result is on
// stdout); services log info; --log-level wins.
func TestDefaultLogLevel(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantInfo bool
	}{
		{"replay logs no info", []string{"replay", "/no/such/history.json"}, false},
		{"--log-level info shows info", []string{"replay", "/no/such/history.json", "--log-level", "info"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runIn(tt.args, nil, "")
			require.NotEqual(t, ExitOK, code, stdout)
			assert.Equal(t, tt.wantInfo, strings.Contains(stderr, "\tINFO\t"), "stderr: %q", stderr)
		})
	}
	root := newRootCommand(&app{lookupEnv: func(string) (string, bool) { return "", false }})
	for name, want := range map[string]string{"worker": "info", "dev": "info", "mcp": "info", "call": "warn", "status": "warn", "approve": "warn"} {
		cmd, _, err := root.Find([]string{name})
		require.NoError(t, err)
		assert.Equal(t, want, defaultLogLevel(cmd), name)
	}
}

// TestStatusOfWaitingCall: status of a call waiting for approval says so: since when, when it
// expires, the hash, the arguments escaped, and how to decide; --json carries the state whole.
func TestStatusOfWaitingCall(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ap := wire.ApprovalState{ToolCallID: "c1", ToolName: "write_file", Arguments: json.RawMessage(`{"path":"report` + "\u202e" + `txt.sh"}`),
		CallHash: "sha256:abc", Since: since, Deadline: since.Add(24 * time.Hour), Waiting: true}
	st := tgclient.Status{WorkflowID: "toolcall-c1", ToolCallID: "c1", ToolName: "write_file", State: tgclient.Running}
	var text, js bytes.Buffer
	require.NoError(t, writeStatus(&text, st, &ap, false))
	require.NoError(t, writeStatus(&js, st, &ap, true))
	for _, want := range []string{
		"approval  awaiting approval since 2026-01-02T03:04:05Z\n",
		"expires   2026-01-03T03:04:05Z\n",
		"hash      sha256:abc\n",
		`arguments {"path":"report\u202etxt.sh"}` + "\n",
		"decide    toolgate approve toolcall-c1 (or reject; --args to approve edited arguments)\n",
	} {
		assert.Contains(t, text.String(), want)
	}
	assertNoRaw(t, text.String())
	var got statusJSON
	require.NoError(t, json.Unmarshal(js.Bytes(), &got))
	require.NotNil(t, got.Approval)
	assert.Equal(t, "sha256:abc", got.Approval.CallHash)
	assert.True(t, got.Approval.Since.Equal(since))

	text.Reset()
	require.NoError(t, writeStatus(&text, st, nil, false))
	assert.NotContains(t, text.String(), "approval", "a call that does not wait says nothing of approval")
}
