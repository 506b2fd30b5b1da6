package mcp

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/wire"
)

// Transport wraps an SDK transport (mcp.StdioTransport, ...) for a server of NewServer: it
// moves the "task" member of a tools/call request into _meta (wire.MCPTaskMeta), where the
// server's task support finds it; the SDK's request type would drop it; and it sends task statuses
// as notifications/tasks/status (taskstatus.go). HTTPHandler does the same for streamable HTTP.
func Transport(t sdk.Transport) sdk.Transport { return &taskTransport{t} }

type taskTransport struct{ sdk.Transport }

func (t *taskTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskConn{conn}, nil
}

type taskConn struct{ sdk.Connection }

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "tools/call" {
		req.Params = liftTaskParams(req.Params)
	}
	return msg, err
}

// Write sends msg, a task status in disguise rewritten into notifications/tasks/status
// (taskstatus.go); the reply of a cancelled request is not sent (cancelreply.go).
func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if isCancelledReply(msg) {
		return nil
	}
	return c.Connection.Write(ctx, asTaskStatus(msg))
}

// liftTaskParams returns tools/call params with their "task" member moved to
// _meta[wire.MCPTaskMeta]; params without one come back unchanged.
func liftTaskParams(params json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return params
	}
	task, ok := m["task"]
	if !ok {
		return params
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return params
	}
	meta[wire.MCPTaskMeta] = task
	delete(m, "task")
	rawMeta, err := json.Marshal(meta)
	if err != nil {
		return params
	}
	m["_meta"] = rawMeta
	out, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return out
}

// liftTaskBody is liftTaskParams for the body of a streamable HTTP POST (one JSON-RPC message).
func liftTaskBody(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"task"`)) {
		return body // the common case: the SDK parses the body once
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return body
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil || method != "tools/call" || msg["params"] == nil {
		return body
	}
	msg["params"] = liftTaskParams(msg["params"])
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	return out
}

// undeclaredMethods are the request methods of capabilities toolgate does not declare (prompts,
// resources, completions): the SDK would answer them (an empty list, for one), which tells a
// client the capability is there after all (2026-07-28's server-stateless checks exactly that).
// logging/setLevel is the SDK's (logging.go): it answers Method not found at 2026-07-28 itself.
var undeclaredMethods = map[string]bool{
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"completion/complete": true,
}

// rejectUndeclared is receiving middleware of NewServer: a method of undeclaredMethods gets
// Method not found (-32601; over 2026-07-28 HTTP, 404), at every revision and transport.
func rejectUndeclared(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if undeclaredMethods[method] {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: toolgate serves tools only, not " + method}
		}
		return next(ctx, method, req)
	}
}
