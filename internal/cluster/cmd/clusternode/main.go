// Command clusternode is one node of the test cluster of package cluster: a Temporal server with
// every service, configured by cluster.NodeConfig from the JSON cluster.NodeSpec in its -spec
// flag. It prints "ready" on stdout once started and runs until SIGINT or SIGTERM.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/temporal"

	"github.com/toolgate/toolgate/internal/cluster"
)

func main() {
	specJSON := flag.String("spec", "", "the node's cluster.NodeSpec as JSON")
	flag.Parse()
	if err := run(*specJSON); err != nil {
		fmt.Fprintln(os.Stderr, "clusternode:", err)
		os.Exit(1)
	}
}

func run(specJSON string) error {
	var spec cluster.NodeSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("-spec: %w", err)
	}
	if len(spec.Ports) != len(cluster.Services) {
		return fmt.Errorf("-spec: %d ports, want %d", len(spec.Ports), len(cluster.Services))
	}
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, syscall.SIGINT, syscall.SIGTERM)
	srv, err := temporal.NewServer(
		temporal.WithConfig(cluster.NodeConfig(spec)),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithDynamicConfigClient(cluster.DynamicConfig()),
		temporal.WithLogger(log.NewZapLogger(log.BuildZapLogger(log.Config{Level: "warn", Format: "json"}))),
	)
	if err != nil {
		return fmt.Errorf("create server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	fmt.Println("ready")
	<-interrupt
	return srv.Stop()
}
