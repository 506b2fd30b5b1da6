package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/internal/metrics"
)

// metricsOptions is the --metrics-listen flag of the commands that run a worker.
type metricsOptions struct {
	listen string
}

func addMetricsFlag(cmd *cobra.Command, o *metricsOptions) {
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "metrics-listen", "", "serve Prometheus metrics on this host:port at /metrics (empty: off)")
	bindEnv(fs, "metrics-listen", "TOOLGATE_METRICS_LISTEN")
}

// start starts the metrics server, or returns nil when --metrics-listen is empty. It prints the
// "metrics <url>" line to the logger; the caller closes the server.
func (o metricsOptions) start(logger *zap.Logger) (*metrics.Server, error) {
	if o.listen == "" {
		return nil, nil
	}
	srv, err := metrics.Start(o.listen, metrics.Options{Logger: logger.Named("metrics")})
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
