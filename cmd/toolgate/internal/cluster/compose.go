package cluster

import (
	"bytes"
	_ "embed" // the compose file's template
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/primitives"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/pgstore"
)

// Generated files, relative to the module root. `go generate ./cmd/toolgate/internal/cluster` writes them
// (cmd/composegen); a test fails when the committed files differ from what [ComposeFiles] renders.
const (
	ComposePath              = "docker-compose.yml"
	ComposeDynamicConfigPath = "deploy/temporal/dynamicconfig.yaml"
)

// ComposeServerVersion is the version of the compose file's temporalio/server and
// temporalio/admin-tools images: the go.temporal.io/server module the cluster tests run
// (TestComposeServerIsTheTestedOne), v1.32 or later for worker commands (pushed cancellation).
const ComposeServerVersion = "1.32.1"

// The namespace the compose file's temporal-namespace job registers, and its retention.
const (
	composeNamespace = "default"
	composeRetention = "168h"
)

// composeDynamicConfigMount is where the compose file mounts the dynamic config in the server
// container.
const composeDynamicConfigMount = "/etc/temporal/config/dynamicconfig/toolgate.yaml"

//go:embed compose.yml.tmpl
var composeTemplate string

// ComposeSpec is the [NodeSpec] of the compose file's one server node: PostgreSQL at
// postgresql:5432 (user and password temporal) and Temporal's standard ports.
func ComposeSpec() NodeSpec {
	stores := pgstore.NewStores("postgresql:5432", "temporal", "temporal", pgstore.DefaultDatabase)
	return NodeSpec{Stores: stores, Ports: []NodePorts{
		{GRPC: 7233, Membership: 6933}, // frontend
		{GRPC: 7234, Membership: 6934}, // history
		{GRPC: 7235, Membership: 6935}, // matching
		{GRPC: 7239, Membership: 6939}, // worker
	}}
}

// ComposeFiles renders the compose file and its dynamic config from [NodeConfig] of
// [ComposeSpec] and from [DynamicConfig], keyed by their paths.
func ComposeFiles() (map[string][]byte, error) {
	cfg := NodeConfig(ComposeSpec())
	env, err := composeTemporalEnv(cfg)
	if err != nil {
		return nil, err
	}
	schemaEnv, err := composeSchemaEnv(cfg)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("compose").Parse(composeTemplate)
	if err != nil {
		return nil, fmt.Errorf("compose template: %w", err)
	}
	var compose bytes.Buffer
	if err := tmpl.Execute(&compose, struct {
		ServerVersion        string
		TemporalEnv          []envVar
		SchemaEnv            []envVar
		Namespace, Retention string
		DynamicConfigPath    string
		DynamicConfigMount   string
	}{ComposeServerVersion, env, schemaEnv, composeNamespace, composeRetention, ComposeDynamicConfigPath, composeDynamicConfigMount}); err != nil {
		return nil, fmt.Errorf("compose template: %w", err)
	}
	dc, err := dynamicConfigYAML(DynamicConfig())
	if err != nil {
		return nil, err
	}
	return map[string][]byte{ComposePath: compose.Bytes(), ComposeDynamicConfigPath: dc}, nil
}

// envVar is one variable of the server container's environment.
type envVar struct{ Name, Value string }

// composeStores returns cfg's main and visibility stores and their server's host and port: the
// compose file has one PostgreSQL with one user.
func composeStores(cfg *config.Config) (main, vis *config.SQL, host, port string, err error) {
	main = cfg.Persistence.DataStores[cfg.Persistence.DefaultStore].SQL
	vis = cfg.Persistence.DataStores[cfg.Persistence.VisibilityStore].SQL
	if main == nil || vis == nil || main.ConnectAddr != vis.ConnectAddr || main.User != vis.User || main.Password != vis.Password {
		return nil, nil, "", "", fmt.Errorf("compose: both stores must be SQL on one server with one user")
	}
	host, port, err = net.SplitHostPort(main.ConnectAddr)
	if err != nil {
		return nil, nil, "", "", fmt.Errorf("compose: store address: %w", err)
	}
	return main, vis, host, port, nil
}

// composeSchemaEnv is the environment of the temporal-schema job: temporal-sql-tool's connection
// variables, and the databases to set up in DBNAME and VISIBILITY_DBNAME.
func composeSchemaEnv(cfg *config.Config) ([]envVar, error) {
	main, vis, host, port, err := composeStores(cfg)
	if err != nil {
		return nil, err
	}
	return sortedEnv(map[string]string{
		"SQL_PLUGIN":        main.PluginName,
		"SQL_HOST":          host,
		"SQL_PORT":          port,
		"SQL_USER":          main.User,
		"SQL_PASSWORD":      main.Password,
		"DBNAME":            main.DatabaseName,
		"VISIBILITY_DBNAME": vis.DatabaseName,
	}), nil
}

// composeTemporalEnv translates cfg into the environment of the temporalio/server image, whose
// entrypoint renders the server configuration from these variables (the temporal-schema job has
// set up the databases they name). The services bind every address of the container
// (BIND_ON_IP 0.0.0.0; the image then broadcasts the container's own to the membership ring);
// everything else comes from cfg.
func composeTemporalEnv(cfg *config.Config) ([]envVar, error) {
	main, vis, host, port, err := composeStores(cfg)
	if err != nil {
		return nil, err
	}
	env := map[string]string{
		"BIND_ON_IP":               "0.0.0.0",
		"DB":                       main.PluginName,
		"DB_PORT":                  port,
		"POSTGRES_SEEDS":           host,
		"POSTGRES_USER":            main.User,
		"POSTGRES_PWD":             main.Password,
		"DBNAME":                   main.DatabaseName,
		"VISIBILITY_DBNAME":        vis.DatabaseName,
		"SQL_MAX_CONNS":            strconv.Itoa(main.MaxConns),
		"SQL_MAX_IDLE_CONNS":       strconv.Itoa(main.MaxIdleConns),
		"SQL_MAX_CONN_TIME":        main.MaxConnLifetime.String(),
		"SQL_VIS_MAX_CONNS":        strconv.Itoa(vis.MaxConns),
		"SQL_VIS_MAX_IDLE_CONNS":   strconv.Itoa(vis.MaxIdleConns),
		"SQL_VIS_MAX_CONN_TIME":    vis.MaxConnLifetime.String(),
		"NUM_HISTORY_SHARDS":       strconv.Itoa(int(cfg.Persistence.NumHistoryShards)),
		"DYNAMIC_CONFIG_FILE_PATH": composeDynamicConfigMount,
	}
	for _, svc := range Services {
		rpc := cfg.Services[string(svc)].RPC
		prefix := map[primitives.ServiceName]string{
			primitives.FrontendService: "FRONTEND",
			primitives.HistoryService:  "HISTORY",
			primitives.MatchingService: "MATCHING",
			primitives.WorkerService:   "WORKER",
		}[svc]
		env[prefix+"_GRPC_PORT"] = strconv.Itoa(rpc.GRPCPort)
		env[prefix+"_MEMBERSHIP_PORT"] = strconv.Itoa(rpc.MembershipPort)
	}
	return sortedEnv(env), nil
}

// sortedEnv lists env by name.
func sortedEnv(env map[string]string) []envVar {
	out := make([]envVar, 0, len(env))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out = append(out, envVar{name, env[name]})
	}
	return out
}

// dynamicConfigYAML writes dc in the server's dynamic config file format, keys sorted;
// durations as Go duration strings, which the server's converters accept.
func dynamicConfigYAML(dc dynamicconfig.StaticClient) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Generated by `go generate ./cmd/toolgate/internal/cluster` from cluster.DynamicConfig: do not edit.\n")
	b.WriteString("# The dynamic configuration of the compose file's Temporal server, the same as the tested cluster's.\n")
	keys := slices.SortedFunc(maps.Keys(dc), func(a, b dynamicconfig.Key) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range keys {
		var value string
		switch v := dc[k].(type) {
		case int:
			value = strconv.Itoa(v)
		case bool:
			value = strconv.FormatBool(v)
		case time.Duration:
			value = strconv.Quote(v.String())
		default:
			return nil, fmt.Errorf("dynamic config %s: value of type %T", k, v)
		}
		fmt.Fprintf(&b, "%s:\n  - value: %s\n    constraints: {}\n", k, value)
	}
	return b.Bytes(), nil
}
