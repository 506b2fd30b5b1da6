package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolcore"
)

// budgetHistories are the recorded histories of fixtures.BudgetRoundWorkflow under a budget of 3
// calls (go run ./cmd/toolgate/internal/recordhistories -run '^budget/'): two rounds of two
// calls, as child workflows and inline; the fourth call ends BUDGET_EXCEEDED.
var budgetHistories = []string{"children.json", "inline.json"}

// replayBudget replays a recorded budget history with agent registered as the budget workflow.
func replayBudget(file string, agent func(workflow.Context, fixtures.BudgetInput) (fixtures.BudgetOutput, error)) error {
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(agent, workflow.RegisterOptions{Name: fixtures.BudgetRoundWorkflowName})
	return replayer.ReplayWorkflowHistoryFromJSONFile(discardLogger(), filepath.Join(historiesDir, "budget", file))
}

// TestReplayRecordedBudgetHistories replays each budgeted run, and checks what its history
// recorded: three calls started (children a, b, c; or three ExecuteTool activities and no child)
// and the fourth, d, ended BUDGET_EXCEEDED without starting anything.
func TestReplayRecordedBudgetHistories(t *testing.T) {
	require.ElementsMatch(t, budgetHistories, recordedFiles(t, "budget"))
	reg := recordedRegistry(t)
	for _, file := range budgetHistories {
		t.Run(file, func(t *testing.T) {
			assert.NoError(t, replayBudget(file, fixtures.BudgetRoundWorkflow(reg)))
			children, activities, out := budgetHistory(t, file)
			require.Len(t, out.Rounds, 2)
			refused := out.Rounds[1][1]
			require.NotNil(t, refused.Result)
			assert.Equal(t, "d", refused.CallID)
			assert.Equal(t, toolcore.CodeBudgetExceeded, refused.Result.ErrorCode())
			if file == "children.json" {
				assert.Equal(t, []string{"budget-children/toolcall-a", "budget-children/toolcall-b", "budget-children/toolcall-c"}, children)
				assert.Zero(t, activities)
			} else {
				assert.Empty(t, children)
				assert.Equal(t, 3, activities)
			}
		})
	}
}

// TestReplayDetectsBudgetChanges proves the budget replay test can fail: the same run without
// its budget starts the fourth call its history does not have.
func TestReplayDetectsBudgetChanges(t *testing.T) {
	unbudgeted := func(ctx workflow.Context, in fixtures.BudgetInput) (fixtures.BudgetOutput, error) {
		in.Calls = 0
		return fixtures.BudgetRoundWorkflow(recordedRegistry(t))(ctx, in)
	}
	for _, file := range budgetHistories {
		assert.ErrorContains(t, replayBudget(file, unbudgeted), "nondeterministic", file)
	}
}

// budgetHistory reads a recorded budget history: the child workflow IDs it initiated, the
// ExecuteTool activities it scheduled, and the run's result.
func budgetHistory(t *testing.T, file string) (children []string, activities int, out fixtures.BudgetOutput) {
	t.Helper()
	f, err := os.Open(filepath.Join(historiesDir, "budget", file))
	require.NoError(t, err)
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	for _, e := range hist.GetEvents() {
		if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
			children = append(children, a.GetWorkflowId())
		}
		if e.GetActivityTaskScheduledEventAttributes() != nil {
			activities++
		}
		if a := e.GetWorkflowExecutionCompletedEventAttributes(); a != nil {
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &out))
		}
	}
	return children, activities, out
}
