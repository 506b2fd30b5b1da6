package client

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
)

// checkPollers returns an ErrNoWorker error naming queue when the server has seen no
// workflow poller on it recently (its poller list keeps pollers for a few minutes after their
// last poll), nil otherwise or when the question cannot be answered. Cost: one DescribeTaskQueue.
func (c *Client) checkPollers(ctx context.Context, queue string) error {
	resp, err := c.sdk.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil || len(resp.GetPollers()) > 0 {
		return nil
	}
	return fmt.Errorf("no worker polls task queue %q (is the worker running, on this queue and namespace?): %w", queue, ErrNoWorker)
}
