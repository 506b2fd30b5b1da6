package mcp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	name, id, retry, data string
}

// readEvent reads the next event of an SSE stream; io.EOF when the stream ended.
func readEvent(r *bufio.Reader) (sseEvent, error) {
	var e sseEvent
	var data []string
	seen := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return e, io.EOF
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				e.data = strings.Join(data, "\n")
				return e, nil
			}
			continue
		}
		seen = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			e.name = value
		case "id":
			e.id = value
		case "retry":
			e.retry = value
		case "data":
			data = append(data, value)
		}
	}
}

// resumeSession is a streamable HTTP session spoken in raw HTTP.
type resumeSession struct {
	t   *testing.T
	url string
	id  string
}

func (s *resumeSession) request(method, body string, header ...string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequestWithContext(s.t.Context(), method, s.url, strings.NewReader(body))
	require.NoError(s.t, err)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	return resp
}

// openResumeSession initializes a 2025-11-25 session on url.
func openResumeSession(t *testing.T, url string) *resumeSession {
	s := &resumeSession{t: t, url: url}
	resp := s.request(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s.id = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, s.id)
	resp = s.request(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	return s
}

// resumeResult resumes the stream after lastID with GET and Last-Event-ID and returns the
// JSON-RPC response with id 2 that it replays or delivers.
func (s *resumeSession) resumeResult(lastID string) map[string]any {
	s.t.Helper()
	resp := s.request(http.MethodGet, "", "Accept", "text/event-stream", "Last-Event-ID", lastID)
	defer resp.Body.Close()
	require.Equal(s.t, http.StatusOK, resp.StatusCode)
	events := bufio.NewReader(resp.Body)
	for {
		e, err := readEvent(events)
		require.NoError(s.t, err, "the resumed stream ended before the result")
		var msg map[string]any
		if json.Unmarshal([]byte(e.data), &msg) == nil && msg["id"] == float64(2) {
			return msg
		}
	}
}

// A client whose SSE stream drops mid-call reconnects with GET and the Last-Event-ID of the
// priming event, and receives the result the server kept in its event store (issue 23 item 4).
// With Options.PollAfter the server itself closes the stream mid-call, with a retry field.
func TestStreamResumesAfterDroppedConnection(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name      string
		pollAfter bool
	}{{name: "client drops"}, {name: "server polls", pollAfter: true}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := mcp.Options{}
			if tc.pollAfter {
				opts.PollAfter = 1 // closes the stream as soon as the call runs
			}
			ts := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(f.tg, f.infos, opts), mcp.HTTPOptions{}))
			t.Cleanup(ts.Close)
			s := openResumeSession(t, ts.URL)

			key := "resume-" + strings.ReplaceAll(tc.name, " ", "-")
			gate := f.tools.hold(key)
			resp := s.request(http.MethodPost, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"key":%q}}}`, key))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Contains(t, resp.Header.Get("Content-Type"), "text/event-stream")
			events := bufio.NewReader(resp.Body)
			prime, err := readEvent(events)
			require.NoError(t, err)
			assert.NotEmpty(t, prime.id, "the priming event has an id")
			assert.Empty(t, prime.data, "the priming event has no data")
			require.Equal(t, key, <-f.tools.started)

			if tc.pollAfter {
				// The server closes the stream mid-call, asking for a reconnection after PollRetry.
				closing, err := readEvent(events)
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprint(mcp.DefaultPollRetry.Milliseconds()), closing.retry, "the closing event's retry field")
				_, err = readEvent(events)
				require.ErrorIs(t, err, io.EOF, "the stream ends before the result")
			}
			require.NoError(t, resp.Body.Close()) // the connection drops mid-call
			close(gate)

			msg := s.resumeResult(prime.id)
			result, ok := msg["result"].(map[string]any)
			require.True(t, ok, "a result: %v", msg)
			content := result["content"].([]any)[0].(map[string]any)
			assert.JSONEq(t, `{"runs":1}`, content["text"].(string))
			assert.Equal(t, 1, f.tools.runsOf(key), "the call ran once")
		})
	}
}
