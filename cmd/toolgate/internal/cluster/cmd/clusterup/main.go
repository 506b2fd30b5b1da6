// Command clusterup runs a cluster of package cluster until interrupted: a private PostgreSQL 15
// and -nodes Temporal server processes (this program again, as nodes), with the namespace and
// toolgate's search attributes registered. It prints one "frontend host:port" line per node, then
// "postgres host:port", and on SIGINT or SIGTERM stops everything and removes the database.
//
//	go run ./cmd/toolgate/internal/cluster/cmd/clusterup -nodes 2
//
// It is how BENCHMARKS.md's cluster figures are taken (toolgate bench --address <frontend>).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
)

func main() {
	if os.Getenv(cluster.EnvNodeSpec) != "" {
		os.Exit(cluster.NodeMain())
	}
	nodes := flag.Int("nodes", 2, "Temporal server processes")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *nodes); err != nil {
		fmt.Fprintln(os.Stderr, "clusterup:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, nodes int) (err error) {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	c, err := cluster.Start(ctx, cluster.Options{NodeBinary: self, Nodes: nodes})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Stop()) }()
	for _, f := range c.Frontends() {
		fmt.Printf("frontend %s\n", f)
	}
	fmt.Printf("postgres %s\n", c.Postgres.Address())
	<-ctx.Done()
	return nil
}
