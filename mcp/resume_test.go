package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

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

// resumed resumes the stream after lastID with GET and Last-Event-ID and returns the JSON-RPC
// messages it replays or delivers, up to the response with id 2.
func (s *resumeSession) resumed(lastID string) []map[string]any {
	s.t.Helper()
	return s.untilResult(s.resume(lastID))
}

// resume resumes the stream after lastID with GET and Last-Event-ID, which must be answered 200.
func (s *resumeSession) resume(lastID string) *bufio.Reader {
	s.t.Helper()
	resp := s.request(http.MethodGet, "", "Accept", "text/event-stream", "Last-Event-ID", lastID)
	s.t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("the resumption was answered %s: %s", resp.Status, body)
	}
	return bufio.NewReader(resp.Body)
}

// untilResult reads the JSON-RPC messages of an SSE stream up to the response with id 2.
func (s *resumeSession) untilResult(events *bufio.Reader) []map[string]any {
	s.t.Helper()
	var msgs []map[string]any
	for {
		e, err := mcp.ReadSSEEvent(events)
		require.NoError(s.t, err, "the resumed stream ended before the result")
		var msg map[string]any
		if json.Unmarshal([]byte(e.Data), &msg) != nil {
			continue
		}
		msgs = append(msgs, msg)
		if msg["id"] == float64(2) {
			return msgs
		}
	}
}

// resultText is the text content of the JSON-RPC response msg.
func resultText(t *testing.T, msg map[string]any) string {
	t.Helper()
	result, ok := msg["result"].(map[string]any)
	require.True(t, ok, "a result: %v", msg)
	content := result["content"].([]any)[0].(map[string]any)
	return content["text"].(string)
}

// progressReport is the params of a notifications/progress.
type progressReport struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// progressOf is the params of the notifications/progress among msgs, in order.
func progressOf(t *testing.T, msgs []map[string]any) []progressReport {
	t.Helper()
	var out []progressReport
	for _, msg := range msgs {
		if msg["method"] != "notifications/progress" {
			continue
		}
		params, err := json.Marshal(msg["params"])
		require.NoError(t, err)
		var r progressReport
		require.NoError(t, json.Unmarshal(params, &r))
		out = append(out, r)
	}
	return out
}

// Messages of the progress reports of the tool resumable.
const (
	passedMessage   = "passed before the cut"
	withheldMessage = "withheld by the cut"
	lastMessage     = "reported after the cut"
)

// resumeTools serve the tool resumable: it reports 1/3 passedMessage, waits until the test
// closes withheld, reports 2/3 withheldMessage, waits until the test closes last, and reports
// 3/3 lastMessage just before returning {"runs": how often it ran}.
type resumeTools struct {
	runs           atomic.Int32
	withheld, last chan struct{}
}

// newResumeFixture starts a worker serving resumable on a queue of its own.
func newResumeFixture(t *testing.T) (*fixture, *resumeTools) {
	tools := &resumeTools{withheld: make(chan struct{}), last: make(chan struct{})}
	gate := func(ctx context.Context, ch chan struct{}) error {
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	reg, err := toolcore.NewRegistry(toolcore.MustDefine(toolcore.Definition[noArgs]{
		Name:        "resumable",
		Description: "Report three steps, each after the test lets it go on, and count the runs.",
		Execute: func(ctx context.Context, _ noArgs) (any, error) {
			n := tools.runs.Add(1)
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 1, Total: 3, Message: passedMessage})
			if err := gate(ctx, tools.withheld); err != nil {
				return nil, err
			}
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 2, Total: 3, Message: withheldMessage})
			if err := gate(ctx, tools.last); err != nil {
				return nil, err
			}
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 3, Total: 3, Message: lastMessage})
			return map[string]any{"runs": n}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	}))
	require.NoError(t, err)
	tg, queue := servingWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	return &fixture{tg: tg, infos: infos, queue: queue}, tools
}

// A client whose SSE stream drops mid-call reconnects with GET and Last-Event-ID, and receives
// what it missed and the result from the server's event store (issue 23 item 4): the TCP
// connection is cut by a proxy after the first progress report reached the client and once
// the server sent the second, which the client never got; with Options.PollAfter the server
// itself closes the stream mid-call, with a retry field. A silent cut (a network drop: the
// server never sees the connection end, and its request still holds the stream) is resumed at
// once too: the resumption supersedes that request (supersede.go; go-sdk alone answers 409).
func TestStreamResumesAfterDroppedConnection(t *testing.T) {
	for _, silent := range []bool{false, true} {
		name := map[bool]string{false: "connection cut", true: "connection cut silently"}[silent]
		t.Run(name, func(t *testing.T) { resumeAfterCut(t, silent) })
	}

	t.Run("server polls", func(t *testing.T) {
		f := newFixture(t)
		opts := mcp.Options{PollAfter: 1} // closes the stream as soon as the call runs
		ts := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(f.tg, f.infos, opts), mcp.HTTPOptions{}))
		t.Cleanup(ts.Close)
		s := openResumeSession(t, ts.URL)

		key := "resume-server-polls"
		gate := f.tools.hold(key)
		resp := s.request(http.MethodPost, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"key":%q}}}`, key))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, resp.Header.Get("Content-Type"), "text/event-stream")
		events := bufio.NewReader(resp.Body)
		prime, err := mcp.ReadSSEEvent(events)
		require.NoError(t, err)
		assert.NotEmpty(t, prime.ID, "the priming event has an id")
		assert.Empty(t, prime.Data, "the priming event has no data")
		require.Equal(t, key, <-f.tools.started)

		// The server closes the stream mid-call, asking for a reconnection after PollRetry.
		closing, err := mcp.ReadSSEEvent(events)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(mcp.DefaultPollRetry.Milliseconds()), closing.Retry, "the closing event's retry field")
		_, err = mcp.ReadSSEEvent(events)
		require.ErrorIs(t, err, io.EOF, "the stream ends before the result")
		require.NoError(t, resp.Body.Close())
		close(gate)

		msgs := s.resumed(prime.ID)
		assert.JSONEq(t, `{"runs":1}`, resultText(t, msgs[len(msgs)-1]))
		assert.Equal(t, 1, f.tools.runsOf(key), "the call ran once")
	})
}

// resumeAfterCut calls resumable through a cutProxy (silent or not) in raw HTTP and resumes the
// cut stream once, with a single GET answered 200.
func resumeAfterCut(t *testing.T, silent bool) {
	f, tools := newResumeFixture(t)
	ts := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(f.tg, f.infos, mcp.Options{}), mcp.HTTPOptions{}))
	t.Cleanup(ts.Close)
	newProxy := map[bool]func(*testing.T, string, string, string) *cutProxy{false: newCutProxy, true: newSilentCutProxy}[silent]
	proxy := newProxy(t, ts.Listener.Addr().String(), strconv.Quote(passedMessage), strconv.Quote(withheldMessage))
	s := openResumeSession(t, "http://"+proxy.addr())

	resp := s.request(http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"resumable","arguments":{},"_meta":{"progressToken":"cut"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/event-stream")
	events := bufio.NewReader(resp.Body)
	prime, err := mcp.ReadSSEEvent(events)
	require.NoError(t, err)
	assert.NotEmpty(t, prime.ID, "the priming event has an id")
	assert.Empty(t, prime.Data, "the priming event has no data")
	first, err := mcp.ReadSSEEvent(events)
	require.NoError(t, err)
	require.Contains(t, first.Data, passedMessage)
	require.NotEmpty(t, first.ID, "the progress event has an id")

	close(tools.withheld) // the proxy cuts once the server sent the second report
	_, err = mcp.ReadSSEEvent(events)
	require.Error(t, err, "the stream ends, unfinished, before the result")
	require.NoError(t, resp.Body.Close())

	// Resumed while the call still runs (after a silent cut, the request still holds its stream).
	resumed := s.resume(first.ID)
	close(tools.last)
	msgs := s.untilResult(resumed)
	assert.Equal(t, []progressReport{{2, 3, withheldMessage}, {3, 3, lastMessage}}, progressOf(t, msgs),
		"the missed report and the last one, once each, none seen before the cut")
	assert.JSONEq(t, `{"runs":1}`, resultText(t, msgs[len(msgs)-1]))
	assert.EqualValues(t, 1, tools.runs.Load(), "the call ran once")

	assert.Equal(t, first.ID, proxy.lastIDBeforeCut())
	proxy.assertOneCallOneResumption(first.ID)
}
