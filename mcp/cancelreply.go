package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// No response to a cancelled request. MCP says the receiver of notifications/cancelled should
// not answer the request, and go-sdk v1.8.0 answers every request, a cancelled one with
// {"code":0,"message":"context canceled"} (0 is no JSON-RPC code). So the handler of a cancelled
// request ends with errRequestCancelled (answerCancelled), and toolgate's transports drop that
// reply on its way out: Transport's connection (stdio) does not write it, and over streamable
// HTTP it is neither sent nor kept for resumption (streamreply.go). A reply made before the
// notification arrived goes out as usual.

// ErrorTypeRequestCancelled is the data type of the reply a cancelled request would get, which
// toolgate's transports drop; a transport that is not toolgate's sends it.
const ErrorTypeRequestCancelled = "RequestCancelled"

// errRequestCancelled is the reply of a request its client cancelled.
var errRequestCancelled = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "request cancelled by the client",
	Data: json.RawMessage(`{"type":"` + ErrorTypeRequestCancelled + `"}`)}

// cancelledMark is how the encoded reply is recognised.
var cancelledMark = []byte(`"type":"` + ErrorTypeRequestCancelled + `"`)

// answerCancelled is receiving middleware of NewServer: a request whose handler failed after its
// context ended with the bare cause context.Canceled, which only the SDK's handling of
// notifications/cancelled gives (a broken connection, a gone stateless request or a closing
// server carry another), is answered errRequestCancelled.
func answerCancelled(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil && ctx.Err() != nil && context.Cause(ctx) == context.Canceled {
			return nil, errRequestCancelled
		}
		return res, err
	}
}

// isCancelledReply reports whether msg is the reply of a cancelled request.
func isCancelledReply(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return false
	}
	var rpcErr *jsonrpc.Error
	return errors.As(resp.Error, &rpcErr) && rpcErr.Code == errRequestCancelled.Code && bytes.Contains(rpcErr.Data, cancelledMark)
}

// isCancelledReplyData is isCancelledReply for an encoded message (an SSE event's data).
func isCancelledReplyData(data []byte) bool {
	if !bytes.Contains(data, cancelledMark) {
		return false // the common case: no decoding
	}
	msg, err := jsonrpc.DecodeMessage(data)
	return err == nil && isCancelledReply(msg)
}
