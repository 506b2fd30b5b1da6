package activities

import "go.temporal.io/sdk/activity"

// runOf is the run an attempt belongs to: the one the workflow recorded, else (histories
// recorded before it did) the workflow the activity runs in.
func runOf(info activity.Info, recorded string) string {
	if recorded != "" {
		return recorded
	}
	return info.WorkflowExecution.ID
}
