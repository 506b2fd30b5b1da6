package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// CatalogTimeout bounds a catalog workflow's run: without a worker on the task queue nothing
// answers, and the run ends by itself after it.
const CatalogTimeout = time.Minute

// ErrNoWorker is returned by ListTools when no worker answered on the task queue in time, and
// joined to the context's error by Execute when its ctx ends while no worker polls the queue.
var ErrNoWorker = errors.New("no toolgate worker answered on the task queue")

// ListTools returns the tool set of the workers polling the client's task queue: names,
// descriptions, side-effect classes, input and output schemas and definition hashes, in name
// order (what that worker's build registered, not the local toolbox). It runs
// the ToolCatalogWorkflow on the queue with workflow ID "toolcatalog-<task queue>"
// (concurrent listings share one run; a finished run is replaced by the next listing) and waits
// for its result, at most until ctx ends or CatalogTimeout passes; no answer by then is
// ErrNoWorker. Render the result for a provider with package tooldefs.
func (c *Client) ListTools(ctx context.Context) ([]toolcore.ToolInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, CatalogTimeout)
	defer cancel()
	opts := client.StartWorkflowOptions{
		ID:                       wire.ToolCatalogWorkflowIDPrefix + c.opts.TaskQueue,
		TaskQueue:                c.opts.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowExecutionTimeout: CatalogTimeout,
		StaticSummary:            "tool catalog of " + c.opts.TaskQueue,
		EnableEagerStart:         !c.opts.DisableEagerStart,
	}
	run, err := c.sdk.ExecuteWorkflow(ctx, opts, wire.ToolCatalogWorkflowName)
	if err != nil {
		return nil, fmt.Errorf("list tools on %s: %w", c.opts.TaskQueue, err)
	}
	var catalog catalogResult
	if err := run.Get(ctx, &catalog); err != nil {
		// isDeadlineError: the server ends the long poll a moment before ctx's deadline (see wait).
		if ctx.Err() != nil || isTimeout(err) || isDeadlineError(err) {
			return nil, fmt.Errorf("list tools on %s: %w (is a worker polling it?)", c.opts.TaskQueue, ErrNoWorker)
		}
		return nil, fmt.Errorf("list tools on %s: %w", c.opts.TaskQueue, err)
	}
	if catalog.Tools == nil {
		catalog.Tools = []toolcore.ToolInfo{}
	}
	return catalog.Tools, nil
}

// catalogResult decodes the catalog workflow's result (workflows.Catalog, without importing it).
type catalogResult struct {
	TaskQueue string              `json:"taskQueue"`
	Tools     []toolcore.ToolInfo `json:"tools"`
}

func isTimeout(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te)
}
