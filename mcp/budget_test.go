package mcp_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// budgetReport decodes the budget report a tools/call result carries in _meta.
func budgetReport(t *testing.T, meta sdk.Meta) toolcore.BudgetReport {
	t.Helper()
	raw, ok := meta[wire.MCPBudgetMeta]
	require.True(t, ok, "the result carries the budget in _meta[%q]", wire.MCPBudgetMeta)
	data, err := json.Marshal(raw)
	require.NoError(t, err)
	var r toolcore.BudgetReport
	require.NoError(t, json.Unmarshal(data, &r))
	return r
}

// A session with a budget of 3 calls (toolgate mcp --budget-calls 3): the fourth tools/call is
// answered with the BUDGET_EXCEEDED result, isError true, and starts nothing (no workflow, the
// tool never runs); the results carry what remains. Another session has a budget of its own.
func TestSessionBudgetStopsTheFourthCall(t *testing.T) {
	f := newFixture(t)
	s := mcp.NewServer(f.tg, f.infos, mcp.Options{Budget: toolcore.BudgetLimits{Calls: 3}})
	cs := connectInMemory(t, s)
	key := func(i int) string { return "key-" + t.Name() + "-" + string(rune('0'+i)) }
	callCount := func(cs *sdk.ClientSession, i int) *sdk.CallToolResult {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"key": key(i)},
			Meta: sdk.Meta{mcp.IdempotencyKeyMeta: key(i)}})
		require.NoError(t, err)
		return res
	}
	for i := 1; i <= 3; i++ {
		res := callCount(cs, i)
		require.False(t, res.IsError, text(t, res))
		report := budgetReport(t, res.Meta)
		require.NotNil(t, report.Remaining.Calls)
		assert.Equal(t, int64(3-i), *report.Remaining.Calls)
	}
	res := callCount(cs, 4)
	assert.True(t, res.IsError)
	var content map[string]map[string]string
	require.NoError(t, json.Unmarshal([]byte(text(t, res)), &content))
	assert.Equal(t, "BUDGET_EXCEEDED", content["error"]["code"])
	assert.Equal(t, "budget exceeded (calls): the MCP session has started 3 of its 3 tool calls; the tool did not run", content["error"]["message"])
	assert.Equal(t, int64(3), *budgetReport(t, res.Meta).Used.Calls, "a refused call is not charged")
	assert.Zero(t, f.tools.runsOf(key(4)), "the refused call's tool never ran")
	_, err := f.tg.StatusByWorkflowID(t.Context(), "mcp/toolcall-"+key(4))
	assert.True(t, errors.Is(err, wire.ErrNotFound), "no workflow was started: %v", err)

	other := connectInMemory(t, s)
	res = callCount(other, 5)
	assert.False(t, res.IsError, "another session has its own budget")
}

// Cost units: each call spends its tool's cost (the catalog's toolcore.ToolInfo.Cost); the call
// that would overspend is refused, a free tool still runs.
func TestSessionBudgetCostUnits(t *testing.T) {
	f := newFixture(t)
	infos := make([]toolcore.ToolInfo, len(f.infos))
	for i, info := range f.infos {
		if info.Name == "echo" {
			info.Cost = 2
		}
		infos[i] = info
	}
	cs := connectInMemory(t, mcp.NewServer(f.tg, infos, mcp.Options{Budget: toolcore.BudgetLimits{CostUnits: 5}}))
	var got []bool
	for _, name := range []string{"echo", "echo", "echo", "count"} {
		args := map[string]any{"text": "hi"}
		if name == "count" {
			args = map[string]any{"key": "key-" + t.Name()}
		}
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		got = append(got, res.IsError)
		if res.IsError {
			assert.Contains(t, text(t, res), `budget exceeded (costUnits): a call of tool \"echo\" costs 2 cost units and the MCP session has spent 4 of its 5`)
		}
	}
	assert.Equal(t, []bool{false, false, true, false}, got)
}

// Stateless (2026-07-28) requests have no session: the budget is the principal's (here the
// server's own, without a token), across requests.
func TestStatelessBudgetIsThePrincipals(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(f.tg, f.infos, mcp.Options{Budget: toolcore.BudgetLimits{Calls: 3}}), mcp.HTTPOptions{}))
	t.Cleanup(srv.Close)
	var refused []bool
	for range 4 {
		resp, body := post2026(t, srv.URL, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "stateless"}}, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		refused = append(refused, strings.Contains(body, "BUDGET_EXCEEDED"))
	}
	assert.Equal(t, []bool{false, false, false, true}, refused)

	// A client of the tasks extension gets the refusal at once too, not a task.
	tasks := map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
		"extensions": map[string]any{wire.MCPTasksExtension: map[string]any{}}}}}
	resp, body := post2026(t, srv.URL, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "task"}, "_meta": tasks["_meta"]}, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "BUDGET_EXCEEDED")
	assert.Contains(t, body, `"isError":true`)
	assert.NotContains(t, body, `"taskId"`)
}

// The "done when" through the real process: `toolgate mcp --budget-calls 3` answers a
// session's fourth tools/call with BUDGET_EXCEEDED, and its tool never runs.
func TestMCPProcessBudgetCalls(t *testing.T) {
	f := newFixture(t)
	p := startMCPProcess(t, f, "--budget-calls", "3")
	cs := connectRevision(t, &sdk.StreamableClientTransport{Endpoint: p.url}, "2025-11-25")
	require.NotEmpty(t, cs.ID(), "a session")
	var refused []bool
	for i := range 4 {
		key := "key-" + t.Name() + "-" + string(rune('a'+i))
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"key": key}})
		require.NoError(t, err)
		refused = append(refused, res.IsError && strings.Contains(text(t, res), `"code":"BUDGET_EXCEEDED"`))
		if i == 3 {
			assert.Zero(t, f.tools.runsOf(key), "the refused call's tool never ran")
		}
	}
	assert.Equal(t, []bool{false, false, false, true}, refused)
}

// `toolgate mcp --budget-tool-calls echo=1` refuses a session's second echo, and other tools go
// on; the refusal names the tool's limit.
func TestMCPProcessBudgetToolCalls(t *testing.T) {
	f := newFixture(t)
	p := startMCPProcess(t, f, "--budget-tool-calls", "echo=1")
	cs := connectRevision(t, &sdk.StreamableClientTransport{Endpoint: p.url}, "2025-11-25")
	var got []string
	for _, name := range []string{"echo", "echo", "count"} {
		args := map[string]any{"text": "hi"}
		if name == "count" {
			args = map[string]any{"key": "key-" + t.Name()}
		}
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		got = append(got, text(t, res))
	}
	assert.NotContains(t, got[0], "BUDGET_EXCEEDED")
	assert.Contains(t, got[1], `budget exceeded (callsPerTool): the MCP session has started 1 of its 1 calls of tool \"echo\"`)
	assert.NotContains(t, got[2], "BUDGET_EXCEEDED")
}
