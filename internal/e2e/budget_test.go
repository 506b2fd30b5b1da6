package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// TestAgentBudgetEndToEnd: an agent run with a budget of 3 calls on a real server, its calls
// inline on the toolgate worker: the fourth ends BUDGET_EXCEEDED and scheduled nothing, and
// client.Budget reads what the run used and what remains (the toolgate.budget query); a tool
// call's own workflow has no budget.
func TestAgentBudgetEndToEnd(t *testing.T) {
	tools, err := toolbox.Tools(toolbox.Config{})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	sdk := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(sdk, devtest.Server(t).Namespace(), reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	fixtures.RegisterBudgetRoundWorkflow(w, reg)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	tg := client.New(sdk, client.Options{TaskQueue: queue, Scope: queue, Namespace: devtest.Server(t).Namespace()})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := queue + "/agent"
	round := make([]json.RawMessage, 4)
	for i := range round {
		round[i] = json.RawMessage(`{"type":"toolCall","id":"c` + string(rune('1'+i)) + `","name":"echo","arguments":{"text":"hi"}}`)
	}
	run, err := sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: queue}, fixtures.BudgetRoundWorkflowName,
		fixtures.BudgetInput{Calls: 3, Inline: true, RoundInput: fixtures.RoundInput{TaskQueue: queue, Rounds: [][]json.RawMessage{round}}})
	require.NoError(t, err)
	var out fixtures.BudgetOutput
	require.NoError(t, run.Get(ctx, &out))
	require.Len(t, out.Rounds, 1)
	var codes []string
	for _, o := range out.Rounds[0] {
		require.NotNil(t, o.Result, o.Error)
		codes = append(codes, o.Result.ErrorCode().String())
	}
	ok := toolcore.ErrorCode(0).String()
	assert.Equal(t, []string{ok, ok, ok, "BUDGET_EXCEEDED"}, codes)

	report, err := tg.Budget(ctx, id)
	require.NoError(t, err)
	require.NotNil(t, report.Used.Calls)
	assert.Equal(t, int64(3), *report.Used.Calls)
	require.NotNil(t, report.Remaining.Calls)
	assert.Equal(t, int64(0), *report.Remaining.Calls)

	callID, err := tg.Start(ctx, mustBudgetCall(t))
	require.NoError(t, err)
	_, err = tg.ResultByWorkflowID(ctx, callID)
	require.NoError(t, err)
	_, err = tg.Budget(ctx, callID)
	assert.True(t, errors.Is(err, client.ErrNoBudget), "a tool call's workflow has no budget: %v", err)
	_, err = tg.Budget(ctx, queue+"/no-such-agent")
	assert.ErrorIs(t, err, wire.ErrNotFound)
}

func mustBudgetCall(t *testing.T) toolcore.ToolCall {
	t.Helper()
	call, err := toolcore.NewToolCall("plain", toolbox.NameEcho, []byte(`{"text":"hi"}`))
	require.NoError(t, err)
	return call
}
