package worker

import (
	"context"
	"strings"

	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// resourceIDHeader is the gRPC header in which the Go SDK sends "workflow:<workflow ID>" with every
// request about a workflow, including the worker's answers to its tasks.
const resourceIDHeader = "temporal-resource-id"

// unprintableHeader is what gRPC says when it refuses a header value that is not printable ASCII.
const unprintableHeader = "non-printable ASCII characters"

// headerProbeWorkflowID is a workflow ID no call has (it is not printable ASCII, so toolgate's
// clients never produce it); New asks the server about it to learn whether the Temporal client
// escapes headers.
const headerProbeWorkflowID = "toolgate-header-probe-\u00e9"

// DialOption returns the gRPC dial option the Temporal client of a worker should carry, in
// client.Options.ConnectionOptions.DialOptions:
//
//	c, err := client.Dial(client.Options{ConnectionOptions: client.ConnectionOptions{
//		DialOptions: []grpc.DialOption{worker.DialOption()},
//	}})
//
// The Go SDK sends the workflow ID in the gRPC header temporal-resource-id, and gRPC refuses a
// header value that is not printable ASCII before it leaves the process. toolgate's clients only
// start printable workflow IDs (wire.WorkflowID escapes call IDs), but another client may start
// ToolCallWorkflow with any ID; without this option a worker can never answer such a workflow's
// tasks, so the call stays running forever. With it, the header value's unprintable bytes are
// written as %XX (the header is a routing hint; the request body keeps the real ID) and the
// workflow fails at once with INVALID_TOOL_CALL, telling its starter the escaping rule.
func DialOption() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(escapeResourceIDHeader)
}

// escapeResourceIDHeader runs after the SDK's own interceptors have set the header.
func escapeResourceIDHeader(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if md, ok := metadata.FromOutgoingContext(ctx); ok {
		values := md.Get(resourceIDHeader)
		if anyUnprintable(values) {
			escaped := make([]string, len(values))
			for i, v := range values {
				escaped[i] = escapeHeaderValue(v)
			}
			md.Set(resourceIDHeader, escaped...) // md is a copy: FromOutgoingContext copies
			ctx = metadata.NewOutgoingContext(ctx, md)
		}
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func anyUnprintable(values []string) bool {
	for _, v := range values {
		for i := 0; i < len(v); i++ {
			if v[i] < ' ' || v[i] > '~' {
				return true
			}
		}
	}
	return false
}

// escapeHeaderValue writes every byte outside printable ASCII (0x20-0x7E) as %XX.
func escapeHeaderValue(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= ' ' && c <= '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xF])
	}
	return b.String()
}

// escapesHeaders reports whether c can send a request about a workflow whose ID is not printable
// ASCII (it carries DialOption). Cost: one DescribeWorkflowExecution that finds nothing.
func escapesHeaders(ctx context.Context, c client.Client) bool {
	_, err := c.DescribeWorkflowExecution(ctx, headerProbeWorkflowID, "")
	return err == nil || !strings.Contains(err.Error(), unprintableHeader)
}
