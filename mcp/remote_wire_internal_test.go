package mcp

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiftResult(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a 2025-11-25 created task", `{"task":{"taskId":"t1","status":"working"}}`,
			`{"content":[],"_meta":{"io.toolgate/remoteTask":{"taskId":"t1","status":"working"}}}`},
		{"a 2026-07-28 created task", `{"resultType":"task","taskId":"t1","status":"working","_meta":{"k":1}}`,
			`{"content":[],"_meta":{"k":1,"io.toolgate/remoteTask":{"taskId":"t1","status":"working"}}}`},
		{"a tools/list execution", `{"tools":[{"name":"a","execution":{"taskSupport":"required"}},{"name":"b"}]}`,
			`{"tools":[{"name":"a","_meta":{"io.toolgate/execution":{"taskSupport":"required"}}},{"name":"b"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.JSONEq(t, tc.want, string(liftResult(json.RawMessage(tc.in))))
		})
	}
	// Anything else comes back byte for byte.
	for _, in := range []string{
		`{"content":[{"type":"text","text":"the task is done"}]}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"task":"mine","execution":1}}`,
		`{"resultType":"complete","taskId":"t1","status":"completed"}`,
	} {
		assert.Equal(t, in, string(liftResult(json.RawMessage(in))))
	}
}

func TestLowerTaskRequest(t *testing.T) {
	out := lowerTaskRequest(json.RawMessage(`{"name":"a","_meta":{"io.toolgate/taskRequest":{"ttl":5},"progressToken":"p"}}`))
	assert.JSONEq(t, `{"name":"a","task":{"ttl":5},"_meta":{"progressToken":"p"}}`, string(out))
	out = lowerTaskRequest(json.RawMessage(`{"name":"a","_meta":{"io.toolgate/taskRequest":{"ttl":5}}}`))
	assert.JSONEq(t, `{"name":"a","task":{"ttl":5}}`, string(out))
}

// An SSE event reaches the reader only once complete, its data rewritten; other fields, comments
// and CRLF line ends pass.
func TestSSERewriter(t *testing.T) {
	pr, pw := io.Pipe()
	var seen []string
	body := newSSERewriter(pr, func(data []byte) []byte {
		seen = append(seen, string(data))
		return []byte(strings.ToUpper(string(data)))
	})
	go func() {
		for _, chunk := range []string{": comment\n\n", "id: 1\r\nda", "ta: {\"a\"\ndata: :1}\n", "\nretry: 5\n\n", "data: same\n\n"} {
			_, _ = pw.Write([]byte(chunk))
		}
		_ = pw.Close()
	}()
	out, err := io.ReadAll(body)
	require.NoError(t, err)
	assert.Equal(t, ": comment\n\nid: 1\ndata: {\"A\"\ndata: :1}\n\nretry: 5\n\ndata: SAME\n\n", string(out))
	assert.Equal(t, []string{"{\"a\"\n:1}", "same"}, seen)
}
