package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/internal/searchattr"
	"github.com/toolgate/toolgate/wire"
)

// missingSearchAttributes returns the toolgate attributes namespace lacks; one registered with
// another type than Keyword is an error (no workflow could upsert it).
func missingSearchAttributes(ctx context.Context, c client.Client, namespace string) (map[string]enumspb.IndexedValueType, error) {
	return searchattr.MissingIn(ctx, c.OperatorService(), namespace)
}

// hasSearchAttributes reports whether namespace has the toolgate attributes workflows upsert or
// set on their children (ToolSubject, which only starts set, may be missing: a namespace set up
// before it existed keeps its outcomes upserted).
func hasSearchAttributes(ctx context.Context, c client.Client, namespace string) (bool, error) {
	missing, err := missingSearchAttributes(ctx, c, namespace)
	if err != nil {
		return false, err
	}
	delete(missing, wire.SearchAttributeToolSubject)
	return len(missing) == 0, nil
}

// SetupSearchAttributes registers the Keyword search attributes ToolName, ToolCallId and
// ToolOutcome that namespace lacks, and waits (within ctx) until the namespace lists them. It is
// idempotent: with all present it only lists them. It needs the operator permission to add search
// attributes (on Temporal Cloud add them with tcld or the Cloud UI instead). Workers started
// before the attributes existed must be restarted to upsert them.
func SetupSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	missing, err := missingSearchAttributes(ctx, c, namespace)
	if err != nil {
		return fmt.Errorf("set up search attributes of %q: %w", namespace, err)
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("add search attributes %v to %q: %w", slices.Sorted(maps.Keys(missing)), namespace, err)
	}
	// Another process may have added some concurrently (AlreadyExists): wait for the full set.
	delay := 10 * time.Millisecond
	for {
		left, err := missingSearchAttributes(ctx, c, namespace)
		if err != nil {
			return fmt.Errorf("set up search attributes of %q: %w", namespace, err)
		}
		if len(left) == 0 {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("wait for search attributes %v of %q: %w", slices.Sorted(maps.Keys(left)), namespace, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(2*delay, 500*time.Millisecond)
	}
}
