package mcp_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/wire"
)

// A quick tools/call (echo) at 2026-07-28 from a client that does not declare the tasks
// extension and from one that does: the second is answered inline within mcp.TaskInlineWindow,
// so it costs about what the first does instead of a tasks/get poll (TaskPollInterval). Figures
// in BENCHMARKS.md ("A quick call from a tasks-capable client").
func BenchmarkQuickCall2026(b *testing.B) {
	f := newFixtureTB(b)
	srv := httptest.NewServer(mcp.HTTPHandler(f.server(), mcp.HTTPOptions{}))
	b.Cleanup(srv.Close)
	for _, tasks := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "tasks-capable"}[tasks]
		b.Run(name, func(b *testing.B) {
			caps := map[string]any{}
			if tasks {
				caps["extensions"] = map[string]any{wire.MCPTasksExtension: map[string]any{}}
			}
			tasksAnswered := 0
			for b.Loop() {
				params := map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"},
					"_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": caps}}
				_, body, err := post2026Context(b.Context(), srv.URL, "tools/call", params, nil)
				if err != nil {
					b.Fatal(err)
				}
				if strings.Contains(body, `"resultType":"task"`) {
					tasksAnswered++ // slower than the window on a loaded machine
				}
			}
			b.ReportMetric(float64(tasksAnswered)/float64(b.N), "tasks/op")
		})
	}
}
