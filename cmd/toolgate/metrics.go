package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/metrics"
)

// metricsOptions is the --metrics-listen flag of the commands that run a worker.
type metricsOptions struct {
	listen       string
	allowHosts   []string
	allowNetwork bool
}

func addMetricsFlag(cmd *cobra.Command, o *metricsOptions) {
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "metrics-listen", "", "serve Prometheus metrics on this host:port at /metrics (empty: off)")
	bindEnv(fs, "metrics-listen", "TOOLGATE_METRICS_LISTEN")
	fs.StringArrayVar(&o.allowHosts, "metrics-allow-host", nil, "Host name the metrics endpoint answers beside localhost and IP addresses (the scraper's target name; others get 421)")
	fs.BoolVar(&o.allowNetwork, "metrics-insecure-no-auth", false, "serve a non-loopback --metrics-listen address (the endpoint has no authentication: anyone who reaches it reads tool names and counts; warns)")
}

// start starts the metrics server, or returns nil when --metrics-listen is empty. It prints the
// "metrics <url>" line to the logger; the caller closes the server.
func (o metricsOptions) start(logger *zap.Logger) (*metrics.Server, error) {
	if o.listen == "" {
		return nil, nil
	}
	srv, err := metrics.Start(o.listen, metrics.Options{Logger: logger.Named("metrics"), AllowedHosts: o.allowHosts, AllowNonLoopback: o.allowNetwork})
	if errors.Is(err, metrics.ErrNonLoopback) {
		return nil, badInput(fmt.Errorf("--metrics-listen %s: %w; keep it on loopback, or on a scrape network you trust add --metrics-insecure-no-auth", o.listen, metrics.ErrNonLoopback))
	}
	if err != nil {
		return nil, badInput(fmt.Errorf("start metrics (--metrics-listen): %w", err))
	}
	logger.Info("serving Prometheus metrics", zap.String("url", srv.URL()))
	return srv, nil
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

// dialMetered starts the metrics server of --metrics-listen (if set) and dials conn with the SDK
// client reporting to it. closeAll closes the client, then the server, joining a stop error to
// err; call it as `defer func() { err = closeAll(err) }()`.
func dialMetered(ctx context.Context, logger *zap.Logger, m metricsOptions, conn connOptions) (c client.Client, closeAll func(err error) error, err error) {
	ms, err := m.start(logger)
	if err != nil {
		return nil, nil, err
	}
	if ms != nil {
		conn.metrics = ms.Handler()
	}
	if c, err = conn.dial(ctx, logger); err != nil {
		return nil, nil, closeMetrics(ms, err)
	}
	return c, func(err error) error {
		c.Close()
		return closeMetrics(ms, err)
	}, nil
}
