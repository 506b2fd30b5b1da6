package devserver

import (
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/temporal"
)

// metricsReportInterval is how often the server's tally scope flushes into the registry.
const metricsReportInterval = time.Second

// metricsOptions returns the server option that sends the server's own metrics (the ones a
// cluster's Prometheus endpoint serves: task_latency_queue, persistence_requests, ...) to reg
// through tally's Prometheus reporter, as the server's "tally" framework does on a cluster, and
// the closer of its scope. Without reg it returns neither: the server records nothing.
func metricsOptions(reg prometheus.Registerer, logger log.Logger) ([]temporal.ServerOption, io.Closer) {
	if reg == nil {
		return nil, nil
	}
	// The server's default histogram boundaries per unit: MetricsHandlerFromConfig sets them in
	// the config it is given (and, without a reporter configured, returns a no-op handler).
	cfg := &metrics.Config{}
	_, _ = metrics.MetricsHandlerFromConfig(logger, cfg)
	var seconds []float64
	for _, ms := range cfg.ClientConfig.PerUnitHistogramBoundaries[metrics.Milliseconds] {
		seconds = append(seconds, ms/1000)
	}
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:              reg,
		DefaultTimerType:        tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: seconds,
		// A few server metrics are recorded with more than one set of tag names; Prometheus
		// keeps the first set, and the reporter refuses the others. The server logs these at
		// warn on a cluster; here they would fill the dev log, so they go at debug.
		OnRegisterError: func(err error) { logger.Debug("register server metric", tag.Error(err)) },
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &tallyprom.DefaultSanitizerOpts,
		// tally's own tally_internal_* series: the worker's scope serves them, and the same
		// series from two registries fail the scrape's gathering.
		OmitCardinalityMetrics: true,
	}, metricsReportInterval)
	return []temporal.ServerOption{temporal.WithCustomMetricsHandler(metrics.NewTallyMetricsHandler(cfg.ClientConfig, scope))}, closer
}
