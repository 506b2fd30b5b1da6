package workflows

import "go.temporal.io/sdk/workflow"

// ToolCatalogWorkflow returns the tool set of the worker that runs it: the registry snapshot the
// worker was built with, as toolcore.ToolInfo in name order. A client learns a task queue's
// real tools by running it on that queue (client.ListTools); it takes one workflow task and
// schedules nothing. Workers of one task queue serve one tool set, so any of them answers for all.
func (w *Workflows) ToolCatalogWorkflow(ctx workflow.Context) (Catalog, error) {
	return Catalog{TaskQueue: workflow.GetInfo(ctx).TaskQueueName, Tools: w.Registry.Infos()}, nil
}
