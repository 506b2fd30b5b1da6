package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/serviceerror"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Budget returns the budget of the agent run with workflowID (workflows.WithBudget): its limits,
// what it has used and what remains, from its query wire.QueryBudget. ErrNoBudget when the run
// has none; wire.ErrNotFound when no such workflow exists. It queries the workflow, so a worker
// of the agent's workflow type must be running (a closed run answers too, within retention).
func (c *Client) Budget(ctx context.Context, workflowID string) (toolcore.BudgetReport, error) {
	v, err := c.sdk.QueryWorkflow(ctx, workflowID, "", wire.QueryBudget)
	if err != nil {
		var queryFailed *serviceerror.QueryFailed
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			return toolcore.BudgetReport{}, fmt.Errorf("query %s: %w", workflowID, wire.ErrNotFound)
		case errors.As(err, &queryFailed) && strings.Contains(queryFailed.Error(), "unknown queryType"):
			return toolcore.BudgetReport{}, fmt.Errorf("query %s: %w", workflowID, ErrNoBudget)
		}
		return toolcore.BudgetReport{}, fmt.Errorf("query %s: %w", workflowID, err)
	}
	var r toolcore.BudgetReport
	if err := v.Get(&r); err != nil {
		return toolcore.BudgetReport{}, fmt.Errorf("decode budget of %s: %w", workflowID, err)
	}
	return r, nil
}
