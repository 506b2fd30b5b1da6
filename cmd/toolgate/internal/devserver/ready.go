package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/toolgate/toolgate/internal/searchattr"
)

// readyTimeout bounds the wait for a started server to answer, when ctx has no earlier deadline.
const readyTimeout = time.Minute

// waitReady dials the frontend and returns once a request has gone through the frontend to the
// history shard: it describes a workflow that does not exist until the answer is NotFound (not
// Unavailable or a shard error). It then makes sure the namespace has the search attributes.
func waitReady(ctx context.Context, frontend, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{
		HostPort:  frontend,
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		return fmt.Errorf("dial frontend %s: %w", frontend, err)
	}
	defer c.Close()
	probe := func(ctx context.Context) error {
		_, err := c.WorkflowService().DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
			Namespace: namespace,
			Execution: &commonpb.WorkflowExecution{WorkflowId: "toolgate-devserver-readiness-probe"},
		})
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return nil
		}
		if err == nil {
			return nil // someone started a workflow with that ID; the path works all the same
		}
		return err
	}
	if err := poll(ctx, probe); err != nil {
		return fmt.Errorf("wait for frontend and history: %w", err)
	}
	return ensureSearchAttributes(ctx, c.OperatorService(), namespace)
}

// namespaceRefreshWait covers one refresh of every service's namespace cache
// (system.namespaceCacheRefreshInterval, 2 s by default) plus a margin.
const namespaceRefreshWait = 2*time.Second + 250*time.Millisecond

// ensureSearchAttributes adds the toolgate search attributes the namespace lacks (a database
// created before they existed, or by another tool). Having added some, it waits until the
// frontend lists them and then one namespace cache refresh more, so that the history service,
// which checks upserts against its own cache, knows them too: an upsert it rejects fails the
// workflow task. An attribute that exists with another type is an error.
func ensureSearchAttributes(ctx context.Context, op operatorservice.OperatorServiceClient, namespace string) error {
	missing := func(ctx context.Context) (map[string]enumspb.IndexedValueType, error) {
		return searchattr.MissingIn(ctx, op, namespace)
	}
	add, err := missing(ctx)
	if err != nil || len(add) == 0 {
		return err
	}
	if _, err := op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: add,
	}); err != nil {
		return fmt.Errorf("add search attributes to %q: %w", namespace, err)
	}
	err = poll(ctx, func(ctx context.Context) error {
		left, err := missing(ctx)
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("search attributes not listed yet: %v", left)
		}
		return err
	})
	if err != nil {
		return err
	}
	t := time.NewTimer(namespaceRefreshWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait for namespace caches: %w", context.Cause(ctx))
	case <-t.C:
		return nil
	}
}

// poll calls f until it succeeds or ctx ends, backing off from 5 ms to 100 ms between tries. On
// timeout the error says what f last returned.
func poll(ctx context.Context, f func(context.Context) error) error {
	delay := 5 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last error: %w)", context.Cause(ctx), err)
		case <-t.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}
