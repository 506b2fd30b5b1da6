package toolcore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

var budgetStart = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

func budgetCall(t *testing.T, name string) toolcore.ToolCall {
	t.Helper()
	call, err := toolcore.NewToolCall("c1", name, []byte(`{}`))
	require.NoError(t, err)
	return call
}

// A BUDGET_EXCEEDED result is an ordinary linked error result: its content names the limit, the
// used and limit amounts, and says the tool did not run; it survives the wire round trip.
func TestBudgetExceededResult(t *testing.T) {
	tests := []struct {
		name string
		give toolcore.BudgetExceeded
		want string
	}{
		{name: "calls", give: toolcore.BudgetExceeded{Limit: toolcore.BudgetLimitCalls, Tool: "add", Used: 3, Max: 3},
			want: "budget exceeded (calls): the agent run has started 3 of its 3 tool calls; the tool did not run"},
		{name: "per tool", give: toolcore.BudgetExceeded{Limit: toolcore.BudgetLimitToolCalls, Tool: "add", Used: 2, Max: 2},
			want: `budget exceeded (callsPerTool): the agent run has started 2 of its 2 calls of tool "add"; the tool did not run`},
		{name: "wall clock", give: toolcore.BudgetExceeded{Limit: toolcore.BudgetLimitWallClock, Tool: "add", Used: 61000, Max: 60000},
			want: "budget exceeded (wallClock): the agent run has run 1m1s of its 1m0s wall-clock budget; the tool did not run"},
		{name: "cost", give: toolcore.BudgetExceeded{Limit: toolcore.BudgetLimitCostUnits, Tool: "add", Used: 8, Max: 10, Cost: 5},
			want: `budget exceeded (costUnits): a call of tool "add" costs 5 cost units and the agent run has spent 8 of its 10; the tool did not run`},
		{name: "cost unknown", give: toolcore.BudgetExceeded{Limit: toolcore.BudgetLimitCostUnits, Tool: "add", Max: 10, CostUnknown: true},
			want: `budget exceeded (costUnits): the cost of tool "add" is unknown to the agent run's budget of 10 cost units; the tool did not run`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := toolcore.BudgetExceededResult(budgetCall(t, "add"), "agent run", tt.give)
			assert.True(t, res.IsError())
			assert.Equal(t, "c1", res.ToolCallID())
			assert.Equal(t, toolcore.CodeBudgetExceeded, res.ErrorCode())
			assert.Equal(t, tt.want, res.ErrorMessage())
			data, err := res.MarshalJSON()
			require.NoError(t, err)
			var back toolcore.Result
			require.NoError(t, back.UnmarshalJSON(data), "the Result validator accepts BUDGET_EXCEEDED")
			assert.Equal(t, res, back)
		})
	}
}

// The message stays bounded whatever the tool's name: the name is cut, the content fits.
func TestBudgetExceededResultIsBounded(t *testing.T) {
	name := strings.Repeat("n", toolcore.MaxNameBytes)
	res := toolcore.BudgetExceededResult(budgetCall(t, name), "MCP session",
		toolcore.BudgetExceeded{Limit: toolcore.BudgetLimitToolCalls, Tool: name + strings.Repeat("x", 1<<20), Used: 1, Max: 1})
	assert.Equal(t, toolcore.CodeBudgetExceeded, res.ErrorCode())
	assert.Less(t, len(res.Content()), 2*toolcore.MaxNameBytes+300)
	assert.Equal(t, `{"error":{"code":"BUDGET_EXCEEDED","message":`, res.Content()[:len(`{"error":{"code":"BUDGET_EXCEEDED","message":`)])
}

// A ledger of 3 calls charges three and refuses the fourth without charging it; every limit
// refuses on its own, first wall clock, then calls, calls of the tool, cost units.
func TestBudgetLedgerSpend(t *testing.T) {
	l, err := toolcore.NewBudgetLedger(toolcore.BudgetLimits{Calls: 3}, budgetStart)
	require.NoError(t, err)
	for range 3 {
		require.Nil(t, l.Spend("add", 0, budgetStart))
	}
	ex := l.Spend("echo", 0, budgetStart)
	require.NotNil(t, ex)
	assert.Equal(t, toolcore.BudgetExceeded{Limit: toolcore.BudgetLimitCalls, Tool: "echo", Used: 3, Max: 3}, *ex)
	total, perTool := l.Counts()
	assert.Equal(t, 3, total, "a refused call is not charged")
	assert.Equal(t, map[string]int{"add": 3}, perTool)

	l, err = toolcore.NewBudgetLedger(toolcore.BudgetLimits{CallsPerTool: map[string]int{"add": 1, "echo": 0}}, budgetStart)
	require.NoError(t, err)
	require.Nil(t, l.Spend("add", 0, budgetStart))
	assert.Equal(t, toolcore.BudgetLimitToolCalls, l.Spend("add", 0, budgetStart).Limit)
	require.Nil(t, l.Spend("echo", 0, budgetStart), "0 is no limit")
	require.Nil(t, l.Spend("echo", 0, budgetStart))

	l, err = toolcore.NewBudgetLedger(toolcore.BudgetLimits{CostUnits: 10}, budgetStart)
	require.NoError(t, err)
	require.Nil(t, l.Spend("pay", 6, budgetStart))
	ex = l.Spend("pay", 5, budgetStart)
	require.NotNil(t, ex)
	assert.Equal(t, toolcore.BudgetExceeded{Limit: toolcore.BudgetLimitCostUnits, Tool: "pay", Used: 6, Max: 10, Cost: 5}, *ex)
	require.Nil(t, l.Spend("pay", 4, budgetStart), "exactly the limit is allowed")
	require.Nil(t, l.Spend("free", 0, budgetStart))
	assert.True(t, l.Spend("mystery", -1, budgetStart).CostUnknown, "an unknown cost is refused under a cost limit")
	assert.Equal(t, int64(10), l.CostUsed())

	l, err = toolcore.NewBudgetLedger(toolcore.BudgetLimits{WallClock: time.Minute, Calls: 1}, budgetStart)
	require.NoError(t, err)
	require.Nil(t, l.Spend("add", -1, budgetStart.Add(59*time.Second)), "no cost limit: an unknown cost is free")
	ex = l.Spend("add", 0, budgetStart.Add(time.Minute))
	require.NotNil(t, ex)
	assert.Equal(t, toolcore.BudgetLimitWallClock, ex.Limit, "wall clock is checked first")
	assert.Equal(t, int64(60000), ex.Used)
}

func TestBudgetLimitsCheck(t *testing.T) {
	many := map[string]int{}
	for i := range toolcore.MaxBudgetTools + 1 {
		many[strings.Repeat("t", i%50+1)+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676))] = 1
	}
	tests := []struct {
		name    string
		give    toolcore.BudgetLimits
		wantErr string
	}{
		{name: "zero", give: toolcore.BudgetLimits{}},
		{name: "negative calls", give: toolcore.BudgetLimits{Calls: -1}, wantErr: "Calls -1"},
		{name: "negative wall clock", give: toolcore.BudgetLimits{WallClock: -time.Second}, wantErr: "WallClock -1s"},
		{name: "negative cost", give: toolcore.BudgetLimits{CostUnits: -2}, wantErr: "CostUnits -2"},
		{name: "negative tool", give: toolcore.BudgetLimits{CallsPerTool: map[string]int{"add": -1}}, wantErr: `CallsPerTool["add"] -1`},
		{name: "too many tools", give: toolcore.BudgetLimits{CallsPerTool: many}, wantErr: "more than 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toolcore.NewBudgetLedger(tt.give, budgetStart)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// The report's JSON: limits and remaining leave unlimited amounts out, used has them all;
// remaining never goes below zero.
func TestBudgetReportJSON(t *testing.T) {
	l, err := toolcore.NewBudgetLedger(toolcore.BudgetLimits{Calls: 3, CallsPerTool: map[string]int{"add": 1}, WallClock: time.Minute, CostUnits: 10}, budgetStart)
	require.NoError(t, err)
	require.Nil(t, l.Spend("add", 4, budgetStart))
	require.Nil(t, l.Spend("echo", 0, budgetStart))
	data, err := json.Marshal(l.Report(budgetStart.Add(90 * time.Second)))
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"limits":{"calls":3,"callsPerTool":{"add":1},"wallClockMs":60000,"costUnits":10},
		"used":{"calls":2,"callsPerTool":{"add":1,"echo":1},"wallClockMs":90000,"costUnits":4},
		"remaining":{"calls":1,"callsPerTool":{"add":0},"wallClockMs":0,"costUnits":6}}`, string(data))

	open, err := toolcore.NewBudgetLedger(toolcore.BudgetLimits{}, budgetStart)
	require.NoError(t, err)
	data, err = json.Marshal(open.Report(budgetStart))
	require.NoError(t, err)
	assert.JSONEq(t, `{"limits":{},"used":{"calls":0,"wallClockMs":0,"costUnits":0},"remaining":{}}`, string(data))
}

// The report lists at most MaxReportedTools tools without a limit and counts the rest.
func TestBudgetReportIsBounded(t *testing.T) {
	l, err := toolcore.NewBudgetLedger(toolcore.BudgetLimits{}, budgetStart)
	require.NoError(t, err)
	for i := range toolcore.MaxReportedTools + 5 {
		require.Nil(t, l.Spend("tool"+strings.Repeat("x", i), 0, budgetStart))
	}
	r := l.Report(budgetStart)
	assert.Len(t, r.Used.CallsPerTool, toolcore.MaxReportedTools)
	assert.Equal(t, 5, r.ToolsOmitted)
}

// Options.Cost shows in ToolInfo and leaves the DefinitionHash alone: recorded histories and
// tool-set fingerprints of tools that adopt it do not change. A negative cost is invalid.
func TestCostInInfoNotInHash(t *testing.T) {
	def := func(cost int64) toolcore.Definition[struct{}] {
		return toolcore.Definition[struct{}]{
			Name: "pay", Description: "pays",
			Execute: func(context.Context, struct{}) (any, error) { return nil, nil },
			Options: toolcore.Options{Cost: cost},
		}
	}
	free := toolcore.MustDefine(def(0))
	costly := toolcore.MustDefine(def(7))
	assert.Equal(t, free.DefinitionHash(), costly.DefinitionHash())
	assert.Equal(t, int64(7), costly.Options().Cost)
	assert.Equal(t, int64(7), costly.Info().Cost)
	data, err := json.Marshal(free.Info())
	require.NoError(t, err)
	assert.NotContains(t, string(data), "cost", "a free tool's catalog entry is unchanged")
	_, err = toolcore.Define(def(-1))
	var ce *toolcore.ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, toolcore.CodeInvalidToolDefinition, ce.Code)
	assert.Contains(t, err.Error(), "Cost -1")
}

// BenchmarkBudgetLedgerSpend is the cost of charging one call (all four limits set), what every
// budgeted call adds in workflow code; BenchmarkBudgetLedgerReport that of one query answer.
func BenchmarkBudgetLedgerSpend(b *testing.B) {
	l, err := toolcore.NewBudgetLedger(toolcore.BudgetLimits{Calls: 1 << 40, CallsPerTool: map[string]int{"add": 1 << 40},
		WallClock: time.Hour, CostUnits: 1 << 40}, budgetStart)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if ex := l.Spend("add", 1, budgetStart); ex != nil {
			b.Fatal(ex.Message("agent run"))
		}
	}
}

func BenchmarkBudgetLedgerReport(b *testing.B) {
	l, err := toolcore.NewBudgetLedger(toolcore.BudgetLimits{Calls: 100, CallsPerTool: map[string]int{"add": 50}, WallClock: time.Hour, CostUnits: 1000}, budgetStart)
	require.NoError(b, err)
	for _, name := range []string{"add", "echo", "pay", "read_file", "write_file"} {
		require.Nil(b, l.Spend(name, 1, budgetStart))
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = l.Report(budgetStart.Add(time.Minute))
	}
}
