package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/pgstore"
	"github.com/toolgate/toolgate/internal/searchattr"
)

// startTimeout bounds Start when ctx has no earlier deadline.
const startTimeout = 3 * time.Minute

// namespaceRefreshWait covers one refresh of every service's namespace cache (2 s by default)
// plus a margin: history checks search-attribute upserts against its own cache.
const namespaceRefreshWait = 2*time.Second + 500*time.Millisecond

// Options configure [Start].
type Options struct {
	// NodeBinary is the program each node runs: a built cmd/clusternode, or any program whose
	// main (a test's TestMain) calls [NodeMain] when $TOOLGATE_CLUSTER_NODE_SPEC is set. Required.
	NodeBinary string
	// Nodes is the number of server processes. Optional: default 2.
	Nodes int
	// Namespace is registered with the toolgate search attributes. Optional: default "default".
	Namespace string
}

// Cluster is a running PostgreSQL and its Temporal server nodes.
type Cluster struct {
	Postgres  *Postgres
	Nodes     []*Node
	Namespace string
}

// Start starts PostgreSQL, sets up the schemas, starts the nodes, registers the namespace with
// toolgate's search attributes and returns once every node's frontend reaches a history shard
// and lists the attributes. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.NodeBinary == "" {
		return nil, errors.New("cluster: Options.NodeBinary is required")
	}
	if opts.Nodes == 0 {
		opts.Nodes = 2
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	pg, err := StartPostgres(ctx)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Postgres: pg, Namespace: opts.Namespace}
	fail := func(err error) (*Cluster, error) {
		return nil, errors.Join(err, c.Stop())
	}
	stores := PostgresStores(pg.Address())
	if err := pgstore.Setup(stores); err != nil {
		return fail(err)
	}
	grpcPorts, err := freePorts(opts.Nodes * len(Services))
	if err != nil {
		return fail(err)
	}
	membershipPorts, err := freeLowPorts(opts.Nodes * len(Services))
	if err != nil {
		return fail(err)
	}
	for i := range opts.Nodes {
		spec := NodeSpec{Stores: stores}
		for j := range Services {
			k := i*len(Services) + j
			spec.Ports = append(spec.Ports, NodePorts{GRPC: grpcPorts[k], Membership: membershipPorts[k]})
		}
		c.Nodes = append(c.Nodes, &Node{binary: opts.NodeBinary, spec: spec})
	}
	for _, n := range c.Nodes {
		if err := n.start(ctx); err != nil {
			return fail(err)
		}
	}
	if err := c.setupNamespace(ctx); err != nil {
		return fail(err)
	}
	for _, n := range c.Nodes {
		if err := c.WaitReady(ctx, n); err != nil {
			return fail(err)
		}
	}
	return c, nil
}

// Frontends lists every node's frontend address.
func (c *Cluster) Frontends() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Frontend()
	}
	return out
}

// Restart starts a stopped or killed node again on its ports and waits until it is ready.
func (c *Cluster) Restart(ctx context.Context, n *Node) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := n.start(ctx); err != nil {
		return err
	}
	return c.WaitReady(ctx, n)
}

// Stop stops every node (at once), then PostgreSQL, and removes the database directory.
func (c *Cluster) Stop() error {
	var wg sync.WaitGroup
	for _, n := range c.Nodes {
		wg.Go(n.Stop)
	}
	wg.Wait()
	if c.Postgres == nil {
		return nil
	}
	return c.Postgres.Stop()
}

// dial returns an SDK client of the node's frontend that logs nothing.
func (c *Cluster) dial(ctx context.Context, n *Node) (client.Client, error) {
	return client.DialContext(ctx, client.Options{
		HostPort:  n.Frontend(),
		Namespace: c.Namespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
}

// setupNamespace registers the namespace through the first node and adds the toolgate search
// attributes to it.
func (c *Cluster) setupNamespace(ctx context.Context) error {
	sdk, err := c.dial(ctx, c.Nodes[0])
	if err != nil {
		return fmt.Errorf("dial %s: %w", c.Nodes[0].Frontend(), err)
	}
	defer sdk.Close()
	err = poll(ctx, func(ctx context.Context) error {
		_, err := sdk.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace:                        c.Namespace,
			WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
		})
		var exists *serviceerror.NamespaceAlreadyExists
		if errors.As(err, &exists) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("register namespace %q: %w", c.Namespace, err)
	}
	return poll(ctx, func(ctx context.Context) error {
		add, err := searchattr.MissingIn(ctx, sdk.OperatorService(), c.Namespace)
		if err != nil || len(add) == 0 {
			return err
		}
		_, err = sdk.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			Namespace:        c.Namespace,
			SearchAttributes: add,
		})
		if err == nil {
			err = errors.New("search attributes added, not listed yet")
		}
		return err
	})
}

// WaitReady returns once the node's frontend reaches a history shard (describing a workflow that
// does not exist answers NotFound) and lists toolgate's search attributes, and one namespace
// cache refresh more has passed.
func (c *Cluster) WaitReady(ctx context.Context, n *Node) error {
	sdk, err := c.dial(ctx, n)
	if err != nil {
		return fmt.Errorf("dial %s: %w", n.Frontend(), err)
	}
	defer sdk.Close()
	err = poll(ctx, func(ctx context.Context) error {
		_, err := sdk.WorkflowService().DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
			Namespace: c.Namespace,
			Execution: &commonpb.WorkflowExecution{WorkflowId: "toolgate-cluster-readiness-probe"},
		})
		var notFound *serviceerror.NotFound
		if err != nil && !errors.As(err, &notFound) {
			return err
		}
		missing, err := searchattr.MissingIn(ctx, sdk.OperatorService(), c.Namespace)
		if err == nil && len(missing) > 0 {
			err = fmt.Errorf("search attributes not listed yet: %v", missing)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s not ready: %w\n%s", n.Frontend(), err, n.Log())
	}
	t := time.NewTimer(namespaceRefreshWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
