package devserver

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/server/common/authorization"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Defaults applied by [Start] to zero-valued [Options] fields.
const (
	DefaultNamespace = "default"
	DefaultRetention = 7 * 24 * time.Hour
)

// Options configures [Start]. The zero value starts an in-memory server with namespace "default"
// on free loopback ports, without the Web UI, and discards the server's logs.
type Options struct {
	// DataDir keeps the server's state in the SQLite files <DataDir>/temporal.db and
	// visibility.db, created (with their schema) when missing and reopened when present. The
	// directory is created if needed.
	// Optional: default "" keeps the state in memory; it is gone when the process exits.
	DataDir string

	// Postgres runs the server on PostgreSQL instead of SQLite: a URL
	// postgres://user[:password]@host[:port][/database][?sslmode=...]. The main store is the
	// database (default "temporal"), visibility the database with "_visibility" appended; both are
	// created, with the server's schemas, when missing, and brought to the server's schema version.
	// The server has one history shard, fixed for the life of the database: use databases of
	// their own, not those of a cluster. Optional: default "" (SQLite, see DataDir).
	Postgres string

	// Namespace is created if missing, with the toolgate search attributes.
	// Optional: default "default".
	Namespace string

	// Retention is how long closed workflows are kept (and how long a completed tool call's
	// workflow ID stays deduplicated). It applies when the namespace is created; an existing
	// namespace keeps its retention. Optional: default 7 days.
	Retention time.Duration

	// UI starts the Temporal Web UI on a loopback port. Optional: default false.
	UI bool

	// Logger receives the server's own lines from ServerLogLevel up, and this package's notes
	// about the server (an open data directory, the store layout, ports retried) whatever
	// ServerLogLevel says. Optional: default discards everything.
	Logger *zap.Logger

	// ServerLogLevel is the lowest level of the server's own lines that reach Logger (the server
	// is chatty: hundreds of info lines at start). During Stop only errors pass. Optional:
	// default nil, warn.
	ServerLogLevel *zapcore.Level

	// FrontendPort is the loopback port of the frontend (the address clients dial).
	// Optional: default 0 picks a free port.
	FrontendPort int

	// UICodecEndpoint is the codec server the Web UI decodes payloads with (the browser calls
	// it; it must allow the UI's origin by CORS). Optional: default "" (payloads shown as stored).
	UICodecEndpoint string

	// UIPort is the loopback port of the Web UI when UI is set. Optional: default 0 picks a free
	// port.
	UIPort int

	// DynamicConfig overrides settings of the server's dynamic configuration on top of the dev
	// tuning: keys as the server names them ("history.hostLevelCacheMaxSize"), values of the setting's
	// type (int, bool, string, a duration as "2s", ...). A key the server does not know or a
	// value it cannot take is an error. See [ParseDynamicConfigValue] for the flag form.
	// Optional: default nil.
	DynamicConfig map[string]any

	// MetricsRegisterer receives the server's own metrics (what a cluster's Prometheus
	// endpoint serves with the server's default "tally" framework: task_latency_queue,
	// persistence_requests, service_requests, ...), through tally's Prometheus reporter.
	// Serve it beside the worker's (toolgate dev does, on --metrics-listen). Optional: default
	// nil, the server records no metrics.
	MetricsRegisterer prometheus.Registerer

	// ClaimMapper and Authorizer turn on the frontend's authorization, as on a cluster: the
	// claim mapper turns a caller's "authorization" header (or client certificate) into claims
	// (nil without either), and the authorizer decides every request with them. The server's own
	// workers and this package's readiness checks call the frontend without credentials, so the
	// authorizer must allow requests without claims outside what it guards: wrap an allow-all
	// authorizer, as reviewauth.New(nil) does. Optional: both nil (the default) or both set.
	ClaimMapper authorization.ClaimMapper
	Authorizer  authorization.Authorizer
}

// withDefaults returns a copy of o with defaults applied, or an error for invalid values.
func (o Options) withDefaults() (Options, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	switch {
	case o.Postgres != "" && o.DataDir != "":
		return o, fmt.Errorf("check options: DataDir and Postgres both set")
	case o.Retention < 0:
		return o, fmt.Errorf("check options: negative retention %v", o.Retention)
	case o.FrontendPort < 0 || o.FrontendPort > 65535:
		return o, fmt.Errorf("check options: frontend port %d out of range", o.FrontendPort)
	case (o.ClaimMapper == nil) != (o.Authorizer == nil):
		return o, fmt.Errorf("check options: ClaimMapper and Authorizer go together")
	case o.UIPort < 0 || o.UIPort > 65535:
		return o, fmt.Errorf("check options: UI port %d out of range", o.UIPort)
	}
	if o.DynamicConfig != nil {
		// Checked and converted once, into a map of our own (the caller's is left as it is).
		converted := make(map[string]any, len(o.DynamicConfig))
		for key, value := range o.DynamicConfig {
			v, err := checkDynamicConfigValue(key, value)
			if err != nil {
				return o, fmt.Errorf("check options: %w", err)
			}
			converted[key] = v
		}
		o.DynamicConfig = converted
	}
	return o, nil
}
