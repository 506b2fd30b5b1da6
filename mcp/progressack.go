package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The last progress report before the result, over stdio. A tools/call with a progressToken gets
// the tool's last report just before its result (progress.go), and over stdio both often reach
// the client in one read. The TypeScript SDK then handles the result first (it settles responses
// at once and runs notification handlers a microtask later), forgets the token, and drops the
// report as "unknown token". So before the result of such a call, the server pings the client
// and waits for its answer: a client answers a ping after the notifications that preceded it (the
// TypeScript SDK runs the report's handler before the ping's), so the report is in before the
// result leaves. Over streamable HTTP the client reads SSE events one at a time and needs no
// ping; at 2026-07-28 a server sends no requests.

// progressAckTimeout bounds the wait for a client that does not answer pings: the result then
// goes out as before.
const progressAckTimeout = 250 * time.Millisecond

// ackFinalProgress is receiving middleware of NewServer: see above.
func ackFinalProgress(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		call, ok := req.(*sdk.CallToolRequest)
		if err != nil || !ok || call.Params == nil || call.Params.GetProgressToken() == nil || call.Session == nil {
			return res, err
		}
		if _, isResult := res.(*sdk.CallToolResult); !isResult {
			return res, err // a task, or an input request: the call goes on
		}
		if (call.Extra != nil && call.Extra.Header != nil) || newProtocol(call.Params.Meta) {
			return res, err // streamable HTTP, or a revision without server requests
		}
		pingCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), progressAckTimeout)
		defer cancel()
		_ = call.Session.Ping(pingCtx, nil)
		return res, err
	}
}
