package cluster

import (
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/primitives"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/pgstore"
)

// NumHistoryShards is fixed for the life of a database: every node must use the same number.
const NumHistoryShards = 4

// clusterName is the Temporal cluster's name in its metadata.
const clusterName = "active"

// Stores holds the SQL configuration of Temporal's main and visibility stores.
type Stores = pgstore.Stores

// PostgresStores returns the stores (databases temporal and temporal_visibility) on the
// PostgreSQL server at address (host:port), as the superuser `postgres` without a password (a
// [Postgres] trusts it).
func PostgresStores(address string) Stores {
	return pgstore.NewStores(address, postgresUser, "", pgstore.DefaultDatabase)
}

// Services lists the server's services in the order of a node's ports.
var Services = []primitives.ServiceName{
	primitives.FrontendService,
	primitives.HistoryService,
	primitives.MatchingService,
	primitives.WorkerService,
}

// NodePorts are one service's gRPC and membership (ringpop) ports. The membership port must be
// below 32768: PostgreSQL stores it as a smallint.
type NodePorts struct {
	GRPC       int `json:"grpc"`
	Membership int `json:"membership"`
}

// NodeSpec is everything a node's configuration depends on; the harness passes it to
// cmd/clusternode as JSON.
type NodeSpec struct {
	Stores Stores `json:"stores"`
	// Ports holds one entry per service, in the order of [Services]; index 0 is the frontend.
	Ports []NodePorts `json:"ports"`
}

// Frontend is the node's frontend "127.0.0.1:port", what SDK clients and workers dial.
func (s NodeSpec) Frontend() string {
	return hostPort(s.Ports[0].GRPC)
}

// NodeConfig returns a fresh server configuration for spec (the server mutates it while
// starting): every service on loopback with its gRPC and membership ports, [NumHistoryShards]
// shards, PostgreSQL persistence and visibility, no archival. Nodes find each other through the
// cluster_membership table and ringpop.
func NodeConfig(spec NodeSpec) *config.Config {
	main, visibility := spec.Stores.Main, spec.Stores.Visibility
	cfg := &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: loopback},
		},
		Persistence: config.Persistence{
			DefaultStore:     "main",
			VisibilityStore:  "visibility",
			NumHistoryShards: NumHistoryShards,
			DataStores: map[string]config.DataStore{
				"main":       {SQL: &main},
				"visibility": {SQL: &visibility},
			},
		},
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: spec.Frontend()},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services:            make(map[string]config.Service, len(Services)),
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{
			Archival: config.ArchivalNamespaceDefaults{
				History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
				Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
			},
		},
		// The worker service's own SDK client dials this.
		PublicClient: config.PublicClient{HostPort: spec.Frontend()},
	}
	for i, svc := range Services {
		cfg.Services[string(svc)] = config.Service{RPC: config.RPC{
			GRPCPort:       spec.Ports[i].GRPC,
			MembershipPort: spec.Ports[i].Membership,
			BindOnIP:       loopback,
		}}
	}
	return cfg
}

// DynamicConfig is every node's dynamic configuration: stock values except those that make a
// small test cluster slow or leaky.
func DynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
		// Tests list workflows often; the stock visibility limit is 10/s.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 1000,
		dynamicconfig.HistoryLongPollExpirationInterval.Key():            2 * time.Second,
		// Fair dispatch across fairness keys (docs/flow-control.md): without it the server
		// ignores a call's fairness key and per-key rate limits.
		dynamicconfig.MatchingEnableFairness.Key(): true,
		// Cancellation pushed to the worker (docs/operations.md): the namespace reports the
		// worker-commands capability (the SDK then polls its control queue) and history sends an
		// activity's cancel request there, so workers need heartbeats only for liveness.
		dynamicconfig.WorkerHeartbeatsEnabled.Key():           true, // the stock default; worker commands need it
		dynamicconfig.WorkerCommandsEnabled.Key():             true,
		dynamicconfig.EnableCancelActivityWorkerCommand.Key(): true,
	}
}
