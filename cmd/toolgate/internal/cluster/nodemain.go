package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/temporal"
)

// EnvNodeSpec carries a node's [NodeSpec] as JSON to its process: a program whose main (or
// TestMain) finds it set calls [NodeMain] instead of doing its own work.
const EnvNodeSpec = "TOOLGATE_CLUSTER_NODE_SPEC"

// NodeMain runs one node from the spec in $TOOLGATE_CLUSTER_NODE_SPEC: a Temporal server with
// every service, configured by [NodeConfig] and [DynamicConfig]. It prints "ready" on stdout once
// the services started, stops on SIGINT or SIGTERM, and returns the exit code.
func NodeMain() int {
	if err := runNode(os.Getenv(EnvNodeSpec)); err != nil {
		fmt.Fprintln(os.Stderr, "cluster node:", err)
		return 1
	}
	return 0
}

func runNode(specJSON string) error {
	var spec NodeSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("$%s: %w", EnvNodeSpec, err)
	}
	if len(spec.Ports) != len(Services) {
		return fmt.Errorf("$%s: %d ports, want %d", EnvNodeSpec, len(spec.Ports), len(Services))
	}
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, syscall.SIGINT, syscall.SIGTERM)
	srv, err := temporal.NewServer(
		temporal.WithConfig(NodeConfig(spec)),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithDynamicConfigClient(DynamicConfig()),
		temporal.WithLogger(log.NewZapLogger(log.BuildZapLogger(nodeLogConfig(spec)))),
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

// Environment variables a node reads for its log (both optional): EnvNodeLogLevel sets the
// server's log level (default warn), EnvNodeLogDir makes it write its log to
// node-<frontend port>-<pid>.log in that directory as well as kept by the harness in memory.
const (
	EnvNodeLogLevel = "TOOLGATE_CLUSTER_LOG_LEVEL"
	EnvNodeLogDir   = "TOOLGATE_CLUSTER_LOG_DIR"
)

func nodeLogConfig(spec NodeSpec) log.Config {
	cfg := log.Config{Level: "warn", Format: "json"}
	if level := os.Getenv(EnvNodeLogLevel); level != "" {
		cfg.Level = level
	}
	if dir := os.Getenv(EnvNodeLogDir); dir != "" {
		cfg.OutputFile = filepath.Join(dir, fmt.Sprintf("node-%d-%d.log", spec.Ports[0].GRPC, os.Getpid()))
	}
	return cfg
}
