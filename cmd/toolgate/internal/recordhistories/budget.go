package main

import (
	"context"
	"encoding/json"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/wire"
)

// budgetScenarios are the agent runs under a budget of 3 calls (fixtures.BudgetRoundWorkflow):
// two rounds of two calls, as children and inline; the fourth call ends BUDGET_EXCEEDED and
// starts nothing.
func budgetScenarios() []scenario {
	rounds := func() [][]json.RawMessage {
		return [][]json.RawMessage{
			{rawCall("a", toolbox.NameAdd, `{"left":1,"right":2}`), rawCall("b", toolbox.NameEcho, `{"text":"hi"}`)},
			{rawCall("c", toolbox.NameAdd, `{"left":3,"right":4}`), rawCall("d", toolbox.NameAdd, `{"left":5,"right":6}`)},
		}
	}
	return []scenario{
		{"budget/children.json", budgetRound("budget-children", fixtures.BudgetInput{Calls: 3, RoundInput: fixtures.RoundInput{Rounds: rounds(), Scope: "budget-children"}})},
		{"budget/inline.json", budgetRound("budget-inline", fixtures.BudgetInput{Calls: 3, Inline: true, RoundInput: fixtures.RoundInput{Rounds: rounds()}})},
	}
}

// budgetRound runs fixtures.BudgetRoundWorkflow with in to its end: inline on the toolgate
// worker's queue (where it validates with the worker's registry), else on roundQueue.
func budgetRound(id string, in fixtures.BudgetInput) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		queue := roundQueue
		if in.Inline {
			queue = wire.DefaultTaskQueue
		}
		_, err := r.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: queue}, fixtures.BudgetRoundWorkflowName, in)
		if err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}
