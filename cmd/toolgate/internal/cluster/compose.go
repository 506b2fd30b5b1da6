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
	env, err := composeTemporalEnv(NodeConfig(ComposeSpec()))
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("compose").Parse(composeTemplate)
	if err != nil {
		return nil, fmt.Errorf("compose template: %w", err)
	}
	var compose bytes.Buffer
	if err := tmpl.Execute(&compose, struct {
		TemporalEnv        []envVar
		DynamicConfigPath  string
		DynamicConfigMount string
	}{env, ComposeDynamicConfigPath, composeDynamicConfigMount}); err != nil {
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

// composeTemporalEnv translates cfg into the environment of the temporalio/auto-setup image,
// whose entrypoint renders the server configuration from these variables (and sets up the schemas
// named by DBNAME and VISIBILITY_DBNAME). Addresses to bind are the container's own (the image
// finds them); everything else comes from cfg.
func composeTemporalEnv(cfg *config.Config) ([]envVar, error) {
	main := cfg.Persistence.DataStores[cfg.Persistence.DefaultStore].SQL
	vis := cfg.Persistence.DataStores[cfg.Persistence.VisibilityStore].SQL
	if main == nil || vis == nil || main.ConnectAddr != vis.ConnectAddr || main.User != vis.User || main.Password != vis.Password {
		return nil, fmt.Errorf("compose: both stores must be SQL on one server with one user")
	}
	host, port, err := net.SplitHostPort(main.ConnectAddr)
	if err != nil {
		return nil, fmt.Errorf("compose: store address: %w", err)
	}
	env := map[string]string{
		"DB":                          main.PluginName,
		"DB_PORT":                     port,
		"POSTGRES_SEEDS":              host,
		"POSTGRES_USER":               main.User,
		"POSTGRES_PWD":                main.Password,
		"DBNAME":                      main.DatabaseName,
		"VISIBILITY_DBNAME":           vis.DatabaseName,
		"SQL_MAX_CONNS":               strconv.Itoa(main.MaxConns),
		"SQL_MAX_IDLE_CONNS":          strconv.Itoa(main.MaxIdleConns),
		"SQL_MAX_CONN_TIME":           main.MaxConnLifetime.String(),
		"SQL_VIS_MAX_CONNS":           strconv.Itoa(vis.MaxConns),
		"SQL_VIS_MAX_IDLE_CONNS":      strconv.Itoa(vis.MaxIdleConns),
		"SQL_VIS_MAX_CONN_TIME":       vis.MaxConnLifetime.String(),
		"NUM_HISTORY_SHARDS":          strconv.Itoa(int(cfg.Persistence.NumHistoryShards)),
		"DYNAMIC_CONFIG_FILE_PATH":    composeDynamicConfigMount,
		"DEFAULT_NAMESPACE":           "default",
		"DEFAULT_NAMESPACE_RETENTION": "7d",
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
	out := make([]envVar, 0, len(env))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out = append(out, envVar{name, env[name]})
	}
	return out, nil
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
