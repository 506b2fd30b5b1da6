package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a mount sees of the remote server's messages that the Go SDK's client types would drop
// (v1.8.0 has no client side of tasks): every message crosses remoteWire, on the connection
// (stdio, remoteConn) or in the HTTP bodies (streamable HTTP, remoteRoundTripper, since the SDK
// tells its HTTP connection of session changes through an unexported method a wrapper would
// hide). There,
//   - a tools/call request's _meta[remoteTaskRequestMeta] becomes its "task" member;
//   - a result that is a created task (2025-11-25: {"task":{...}}; 2026-07-28 tasks extension:
//     {"resultType":"task","taskId":...}) becomes an empty CallToolResult whose
//     _meta[remoteTaskMeta] is the task;
//   - a tools/list tool's "execution" moves to its _meta[remoteExecutionMeta];
//   - each notifications/progress of a routed token is counted as it is read (progressRoute), so
//     a call returns only once the reports read before its result are reported.

const (
	remoteTaskRequestMeta = "io.toolgate/taskRequest"
	remoteTaskMeta        = "io.toolgate/remoteTask"
	remoteExecutionMeta   = "io.toolgate/execution"
)

// remoteWire rewrites the messages of one mounted server (see above).
type remoteWire struct{ r *Remote }

// outgoing rewrites a request before it is written.
func (w remoteWire) outgoing(req *jsonrpc.Request) {
	if req.Method == "tools/call" && bytes.Contains(req.Params, []byte(remoteTaskRequestMeta)) {
		req.Params = lowerTaskRequest(req.Params)
	}
}

// incoming rewrites a message as it is read, and counts progress.
func (w remoteWire) incoming(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() && m.Method == "notifications/progress" {
			w.countProgress(m.Params)
		}
	case *jsonrpc.Response:
		if m.Error == nil && len(m.Result) > 0 {
			m.Result = liftResult(m.Result)
		}
	}
}

func (w remoteWire) countProgress(params json.RawMessage) {
	var p struct {
		ProgressToken any `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	if route, ok := w.r.progress.Load(token); ok {
		route := route.(*progressRoute)
		route.update(func() { route.read++ })
	}
}

// incomingBytes is incoming for one encoded message; it returns data itself when nothing changed.
func (w remoteWire) incomingBytes(data []byte) []byte {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return data
	}
	var before json.RawMessage
	if res, ok := msg.(*jsonrpc.Response); ok {
		before = res.Result
	}
	w.incoming(msg)
	if res, ok := msg.(*jsonrpc.Response); ok && !bytes.Equal(before, res.Result) {
		if out, err := jsonrpc.EncodeMessage(res); err == nil {
			return out
		}
	}
	return data
}

// lowerTaskRequest moves _meta[remoteTaskRequestMeta] of tools/call params to their "task".
func lowerTaskRequest(params json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	var meta map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil || json.Unmarshal(m["_meta"], &meta) != nil {
		return params
	}
	task, ok := meta[remoteTaskRequestMeta]
	if !ok {
		return params
	}
	delete(meta, remoteTaskRequestMeta)
	m["task"] = task
	if len(meta) == 0 {
		delete(m, "_meta")
	} else if raw, err := json.Marshal(meta); err == nil {
		m["_meta"] = raw
	}
	out, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return out
}

// liftResult returns result with a created task or tools' execution moved into _meta (see
// above); any other result comes back as it is.
func liftResult(result json.RawMessage) json.RawMessage {
	hasTask := bytes.Contains(result, []byte(`"task`)) // "task" or "taskId"
	hasExecution := bytes.Contains(result, []byte(`"execution"`))
	if !hasTask && !hasExecution {
		return result // the common case: parsed once, by the SDK
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return result
	}
	var task json.RawMessage
	var resultType string
	_ = json.Unmarshal(m["resultType"], &resultType)
	switch {
	case resultType == "task":
		// 2026-07-28: the task's members are the result's.
		flat := map[string]json.RawMessage{}
		for k, v := range m {
			if k != "resultType" && k != "_meta" {
				flat[k] = v
			}
		}
		task, _ = json.Marshal(flat)
	case m["task"] != nil && m["content"] == nil:
		task = m["task"]
	}
	if task != nil {
		meta := map[string]json.RawMessage{}
		_ = json.Unmarshal(m["_meta"], &meta)
		meta[remoteTaskMeta] = task
		out, err := json.Marshal(map[string]any{"content": []any{}, "_meta": meta})
		if err != nil {
			return result
		}
		return out
	}
	var tools []map[string]json.RawMessage
	if !hasExecution || json.Unmarshal(m["tools"], &tools) != nil {
		return result
	}
	for _, tool := range tools {
		execution, ok := tool["execution"]
		if !ok {
			continue
		}
		meta := map[string]json.RawMessage{}
		_ = json.Unmarshal(tool["_meta"], &meta)
		meta[remoteExecutionMeta] = execution
		delete(tool, "execution")
		if raw, err := json.Marshal(meta); err == nil {
			tool["_meta"] = raw
		}
	}
	raw, err := json.Marshal(tools)
	if err != nil {
		return result
	}
	m["tools"] = raw
	out, err := json.Marshal(m)
	if err != nil {
		return result
	}
	return out
}

// remoteTransport puts remoteWire on a stdio (or any non-HTTP) transport's connection.
type remoteTransport struct {
	sdk.Transport
	wire remoteWire
}

func (t remoteTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &remoteConn{Connection: conn, wire: t.wire}, nil
}

type remoteConn struct {
	sdk.Connection
	wire remoteWire
}

func (c *remoteConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.wire.incoming(msg)
	}
	return msg, err
}

func (c *remoteConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.wire.outgoing(req)
	}
	return c.Connection.Write(ctx, msg)
}

// remoteRoundTripper puts remoteWire on the HTTP exchanges of a streamable HTTP transport: the
// body of each POST, and each message of each response (JSON, or SSE events as they stream).
type remoteRoundTripper struct {
	base http.RoundTripper
	wire remoteWire
}

func (t remoteRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(remoteTaskRequestMeta)) {
			if msg, err := jsonrpc.DecodeMessage(body); err == nil {
				if r, ok := msg.(*jsonrpc.Request); ok {
					t.wire.outgoing(r)
					if out, err := jsonrpc.EncodeMessage(r); err == nil {
						body = out
					}
				}
			}
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	switch contentType := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(contentType, "text/event-stream"):
		resp.Body = newSSERewriter(resp.Body, t.wire.incomingBytes)
	case strings.HasPrefix(contentType, "application/json"):
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		body = t.wire.incomingBytes(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Del("Content-Length")
	}
	return resp, nil
}

// newSSERewriter returns body with the data of each server-sent event passed through rewrite
// as the event is complete, before any of it reaches the reader; other fields pass unchanged.
func newSSERewriter(body io.ReadCloser, rewrite func([]byte) []byte) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		in := bufio.NewReader(body)
		var event []string // the event's lines, without their line ends
		var data [][]byte
		flush := func() error {
			if len(event) == 0 {
				return nil
			}
			var out bytes.Buffer
			joined := bytes.Join(data, []byte("\n"))
			rewritten := joined
			if len(data) > 0 {
				rewritten = rewrite(joined)
			}
			dataWritten := false
			for _, line := range event {
				if strings.HasPrefix(line, "data:") && !bytes.Equal(rewritten, joined) {
					if !dataWritten {
						for _, part := range bytes.Split(rewritten, []byte("\n")) {
							out.WriteString("data: ")
							out.Write(part)
							out.WriteString("\n")
						}
						dataWritten = true
					}
					continue
				}
				out.WriteString(line)
				out.WriteString("\n")
			}
			out.WriteString("\n")
			event, data = event[:0], data[:0]
			_, err := pw.Write(out.Bytes())
			return err
		}
		for {
			line, err := in.ReadString('\n')
			if line != "" {
				line = strings.TrimRight(line, "\r\n")
				if line == "" {
					if werr := flush(); werr != nil {
						_ = body.Close()
						return
					}
				} else {
					event = append(event, line)
					if value, ok := strings.CutPrefix(line, "data:"); ok {
						data = append(data, []byte(strings.TrimPrefix(value, " ")))
					}
				}
			}
			if err != nil {
				_ = flush()
				_ = body.Close()
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return &sseBody{PipeReader: pr, body: body}
}

// sseBody closes the original body too, so a reader that stops reading ends the stream.
type sseBody struct {
	*io.PipeReader
	body io.Closer
}

func (b *sseBody) Close() error {
	_ = b.body.Close()
	return b.PipeReader.Close()
}
