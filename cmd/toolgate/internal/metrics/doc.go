// Package metrics serves Prometheus metrics for a toolgate process: the Temporal SDK's own
// (through go.temporal.io/sdk/contrib/tally and tally's Prometheus reporter) and toolgate's
// (workflows.Metric*, activities.Metric*), which the workflows and activities emit through the
// same SDK MetricsHandler.
//
// # Use
//
// Start a Server, put its Handler in the client.Options of every client a worker (or any other
// SDK user) dials, and scrape http://<Addr>/metrics. Close stops the listener.
//
// # Probes
//
// The Server also answers /healthz and /readyz (package internal/health): set the readiness check
// with Health().SetCheck once what the process serves is up (a worker: Worker.Ready), and call
// Health().Down when it begins to stop.
//
// # Call gauges
//
// CountCalls counts a task queue's calls in visibility (running, awaiting approval, stuck) on a
// loop of its own and serves them as gauges: the same value from every worker of the queue, so
// queries aggregate them with max. Options.Gatherers adds registries to the scrape, such as the
// embedded Temporal server's.
//
// # Naming
//
// Counters end in _total and durations are histograms in seconds (_seconds), as Prometheus
// conventions ask (the SDK's metric names get the suffixes through the contrib package's naming
// scope). Label values are kept verbatim (tool names may contain '-').
package metrics
