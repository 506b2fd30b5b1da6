package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

// GoalMCPP50 is the highest acceptable MCP/Execute ratio of p50 latency for the same call.
const GoalMCPP50 = 1.20

// DefaultMCPCalls is the default of Config.MCPCalls.
const DefaultMCPCalls = 100

// MCP is the MCP phase: a tools/call over streamable HTTP to toolgate's MCP server (package mcp,
// in this process, on loopback, served from the toolgate subject's client) against
// client.Execute of the same no-op call, alternating call by call.
type MCP struct {
	Calls   int       `json:"calls"`
	Execute Latencies `json:"execute"`
	MCP     Latencies `json:"mcp"`
	// RatioP50 and RatioP95 divide MCP by Execute.
	RatioP50 float64 `json:"ratioP50"`
	RatioP95 float64 `json:"ratioP95"`
}

// check reports what is missing from m, measured with calls calls per side.
func (m MCP) check(calls int) error {
	if m.Calls != calls || m.Execute.N != calls || m.MCP.N != calls || m.Execute.P50Ms <= 0 || m.MCP.P50Ms <= 0 || m.RatioP50 <= 0 {
		return fmt.Errorf("mcp: incomplete %+v", m)
	}
	return nil
}

// mcpPhase makes Warmup unmeasured and MCPCalls measured calls of each side, alternating, the
// order swapped every round.
func (h *harness) mcpPhase(ctx context.Context) (MCP, error) {
	tg := h.toolgate.client
	infos, err := tg.ListTools(ctx)
	if err != nil {
		return MCP{}, fmt.Errorf("mcp: list tools: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return MCP{}, fmt.Errorf("mcp: listen: %w", err)
	}
	srv := &http.Server{Handler: mcp.HTTPHandler(mcp.NewServer(tg, infos, mcp.Options{}), mcp.HTTPOptions{})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "toolgate-bench", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp"}, nil)
	if err != nil {
		return MCP{}, fmt.Errorf("mcp: connect: %w", err)
	}
	defer session.Close()

	viaMCP := func(ctx context.Context) error {
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: toolNoop, Arguments: map[string]any{}})
		if err == nil && res.IsError {
			err = errors.New(mcpText(res))
		}
		return err
	}
	viaExecute := func(ctx context.Context) error {
		call, err := toolcore.NewToolCall(h.nextID(), toolNoop, []byte("{}"))
		if err != nil {
			return err
		}
		res, err := tg.Execute(ctx, call)
		if err == nil && res.IsError() {
			err = errors.New(res.Content())
		}
		return err
	}
	sides := []struct {
		name string
		call func(context.Context) error
		took []time.Duration
	}{{name: "execute", call: viaExecute}, {name: "mcp", call: viaMCP}}

	warmup, n := h.cfg.Warmup, h.cfg.MCPCalls
	total := warmup + n
	h.cfg.Progress(Progress{Phase: "mcp", Total: 2 * total})
	for i := range total {
		for k := range sides {
			side := &sides[(i+k)%len(sides)]
			began := time.Now()
			if err := side.call(ctx); err != nil {
				return MCP{}, fmt.Errorf("mcp: %s call: %w", side.name, err)
			}
			if i >= warmup {
				side.took = append(side.took, time.Since(began))
			}
			h.cfg.Progress(Progress{Phase: "mcp", Done: 2*i + k + 1, Total: 2 * total})
		}
	}
	m := MCP{Calls: n, Execute: summarize(sides[0].took), MCP: summarize(sides[1].took)}
	m.RatioP50 = ratio(m.MCP.P50Ms, m.Execute.P50Ms)
	m.RatioP95 = ratio(m.MCP.P95Ms, m.Execute.P95Ms)
	return m, nil
}

// mcpText is the text of a CallToolResult's contents.
func mcpText(res *sdk.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func (r Report) writeMCP(b *strings.Builder) {
	m := r.MCP
	fmt.Fprintf(b, "\nMCP: tools/call over streamable HTTP (toolgate's MCP server, loopback) against client.Execute, same no-op call, %d each, alternating\n", m.Calls)
	t := table(b)
	fmt.Fprintln(t, "\tp50\tp95\tp99\tmax\t")
	for _, row := range []struct {
		name string
		l    Latencies
	}{{"client.Execute", m.Execute}, {"MCP tools/call", m.MCP}} {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t\n", row.name, msText(row.l.P50Ms), msText(row.l.P95Ms), msText(row.l.P99Ms), msText(row.l.MaxMs))
	}
	t.Flush()
	fmt.Fprintf(b, "MCP / Execute: p50 %.2f (goal <= %.2f), p95 %.2f\n", m.RatioP50, GoalMCPP50, m.RatioP95)
}
