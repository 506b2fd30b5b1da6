package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/health"
)

// metricsOptions is the --metrics-listen flag of the commands that run a worker.
type metricsOptions struct {
	listen        string
	allowHosts    []string
	allowNetwork  bool
	countInterval time.Duration // --calls-count-interval (worker and dev)
	stuckAfter    time.Duration // --stuck-after (worker and dev)
}

func addMetricsFlag(cmd *cobra.Command, o *metricsOptions) {
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "metrics-listen", "", "serve Prometheus metrics on this host:port at /metrics, and the probes /healthz and /readyz (empty: off)")
	bindEnv(fs, "metrics-listen", "TOOLGATE_METRICS_LISTEN")
	fs.StringArrayVar(&o.allowHosts, "metrics-allow-host", nil, "Host name the metrics endpoint answers beside localhost and IP addresses (the scraper's target name; others get 421)")
	fs.BoolVar(&o.allowNetwork, "metrics-insecure-no-auth", false, "serve a non-loopback --metrics-listen address (the endpoint has no authentication: anyone who reaches it reads tool names and counts; warns)")
}

// addCallCountFlags adds the flags of the call gauges, which the commands running a worker
// serve on --metrics-listen.
func addCallCountFlags(cmd *cobra.Command, o *metricsOptions) {
	fs := cmd.Flags()
	fs.DurationVar(&o.countInterval, "calls-count-interval", metrics.DefaultCountInterval, "with --metrics-listen, how often the call gauges (running, awaiting approval, stuck) are counted in visibility, whatever the scrape rate")
	fs.DurationVar(&o.stuckAfter, "stuck-after", metrics.DefaultStuckAfter, "with --metrics-listen, how long a call may run (not counting an approval wait) before toolgate_calls_stuck counts it")
}

// checkCallCounts refuses call-gauge flags out of range.
func (o metricsOptions) checkCallCounts() error {
	if o.countInterval < metrics.MinCountInterval {
		return badInput(fmt.Errorf("--calls-count-interval %s: want at least %s", o.countInterval, metrics.MinCountInterval))
	}
	if o.stuckAfter <= 0 {
		return badInput(fmt.Errorf("--stuck-after %s: want a positive duration", o.stuckAfter))
	}
	return nil
}

// start starts the metrics server, also serving the registries of gatherers, or returns nil
// when --metrics-listen is empty. It prints the "metrics <url>" line to the logger; the caller
// closes the server.
func (o metricsOptions) start(logger *zap.Logger, gatherers ...prometheus.Gatherer) (*metrics.Server, error) {
	if o.listen == "" {
		return nil, nil
	}
	srv, err := metrics.Start(o.listen, metrics.Options{Logger: logger.Named("metrics"), AllowedHosts: o.allowHosts, AllowNonLoopback: o.allowNetwork, Gatherers: gatherers})
	if errors.Is(err, metrics.ErrNonLoopback) {
		return nil, badInput(fmt.Errorf("--metrics-listen %s: %w; keep it on loopback, or on a scrape network you trust add --metrics-insecure-no-auth", o.listen, metrics.ErrNonLoopback))
	}
	if err != nil {
		return nil, badInput(fmt.Errorf("start metrics (--metrics-listen): %w", err))
	}
	logger.Info("serving Prometheus metrics", zap.String("url", srv.URL()))
	return srv, nil
}

// readyWorker is the worker a metrics server reports on (*worker.Worker).
type readyWorker interface {
	Ready(ctx context.Context) error
	SearchAttributes() bool
}

// serveWorker makes ms (nil is fine) ready with w's readiness, not ready from the moment ctx ends
// (the process begins to stop: the worker drains), and count the calls of taskQueue.
func (o metricsOptions) serveWorker(ctx context.Context, ms *metrics.Server, c client.Client, w readyWorker, namespace, taskQueue string) error {
	if ms == nil {
		return nil
	}
	ms.Health().SetCheck(w.Ready)
	context.AfterFunc(ctx, ms.Health().Down)
	if err := ms.CountCalls(c, metrics.CallCountOptions{Namespace: namespace, TaskQueue: taskQueueOrDefault(taskQueue),
		Interval: o.countInterval, StuckAfter: o.stuckAfter, NoSearchAttributes: !w.SearchAttributes()}); err != nil {
		return fmt.Errorf("start metrics (--metrics-listen): %w", err)
	}
	return nil
}

// clientHealth is the readiness of a process whose work is its Temporal client: the frontend
// answers a health check.
func clientHealth(c client.Client) health.Check {
	return func(ctx context.Context) error {
		if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			return fmt.Errorf("check Temporal frontend health: %w", err)
		}
		return nil
	}
}

// closeMetrics closes srv (nil is fine) and joins its error to err.
func closeMetrics(srv *metrics.Server, err error) error {
	if srv == nil {
		return err
	}
	if cerr := srv.Close(); cerr != nil {
		return errors.Join(err, fmt.Errorf("stop metrics: %w", cerr))
	}
	return err
}

// dialMetered starts the metrics server of --metrics-listen (if set; nil otherwise) and dials
// conn with the SDK client reporting to it. closeAll closes the server, then the client, joining
// a stop error to err; call it as `defer func() { err = closeAll(err) }()`.
func dialMetered(ctx context.Context, logger *zap.Logger, m metricsOptions, conn connOptions) (c client.Client, ms *metrics.Server, closeAll func(err error) error, err error) {
	ms, err = m.start(logger)
	if err != nil {
		return nil, nil, nil, err
	}
	if ms != nil {
		conn.metrics = ms.Handler()
	}
	if c, err = conn.dial(ctx, logger); err != nil {
		return nil, nil, nil, closeMetrics(ms, err)
	}
	return c, ms, func(err error) error {
		err = closeMetrics(ms, err) // first: its call counts use c
		c.Close()
		return err
	}, nil
}
