package mcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

// The cost of an MCP tools/call over streamable HTTP against client.Execute for the same call
// (echo, a ReadOnly no-op), each on the shared embedded server with its own worker. Figures in
// BENCHMARKS.md ("MCP tools/call against client.Execute").

func BenchmarkClientExecute(b *testing.B) {
	f := newFixtureTB(b)
	ctx := b.Context()
	b.ResetTimer()
	for i := range b.N {
		call, err := toolcore.NewToolCall(fmt.Sprintf("bench-exec-%d-%d", b.N, i), "echo", []byte(`{"text":"hi"}`))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.tg.Execute(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMCPCallStreamableHTTP(b *testing.B) {
	f := newFixtureTB(b)
	srv := httptest.NewServer(mcp.HTTPHandler(f.server(), mcp.HTTPOptions{}))
	b.Cleanup(srv.Close)
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(b.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	ctx := b.Context()
	b.ResetTimer()
	for range b.N {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkMCPTransportNoop is the SDK's streamable HTTP round trip alone: a tool that returns at
// once, no Temporal.
func BenchmarkMCPTransportNoop(b *testing.B) {
	s := sdk.NewServer(&sdk.Implementation{Name: "x", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "x"}}}, nil
	})
	srv := httptest.NewServer(mcp.HTTPHandler(s, mcp.HTTPOptions{}))
	b.Cleanup(srv.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "b", Version: "1"}, nil).Connect(b.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	b.ResetTimer()
	for range b.N {
		if _, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "noop", Arguments: map[string]any{}}); err != nil {
			b.Fatal(err)
		}
	}
}
