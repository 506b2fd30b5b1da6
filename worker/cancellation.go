package worker

import (
	"context"
	"fmt"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// cancellationPushed reports whether namespace pushes an activity's cancellation to its workers:
// it reports the worker-commands capability (frontend.WorkerCommandsEnabled), which makes the
// SDK poll its worker control queue, and worker heartbeats (frontend.WorkerHeartbeatsEnabled),
// without which the SDK starts no such poller. It is what the SDK itself reads (DescribeNamespace)
// before it runs worker commands. Two things no API reports are assumed: the server sends the
// cancel commands (system.enableCancelActivityWorkerCommand) and c keeps worker heartbeats on
// (client.Options.WorkerHeartbeatInterval not negative). If either is missing, a canceled
// call's attempt in this process is hurried after activities.PushedCancelGrace, and says so.
func cancellationPushed(ctx context.Context, c client.Client, namespace string) (bool, error) {
	resp, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	if err != nil {
		return false, fmt.Errorf("describe namespace %q: %w", namespace, err)
	}
	caps := resp.GetNamespaceInfo().GetCapabilities()
	switch {
	case !caps.GetWorkerCommands():
		return false, fmt.Errorf("namespace %q does not report the worker-commands capability", namespace)
	case !caps.GetWorkerHeartbeats():
		return false, fmt.Errorf("namespace %q does not report the worker-heartbeats capability", namespace)
	}
	return true, nil
}

// notPushedMessage is the worker's log line when cancellation is not pushed, said once at New.
func notPushedMessage(why error) string {
	return "activity cancellation is not pushed to this worker (" + why.Error() + "): " +
		"held calls heartbeat every half of their HeartbeatTimeout, at most every 5 s, to hear a cancellation, " +
		"instead of at their IdleHeartbeat (30 s by default); see docs/operations.md"
}
