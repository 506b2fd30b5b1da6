package devserver

import (
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/primitives"
)

// Names of the stores in the server's configuration.
const (
	mainStoreName       = "main"
	visibilityStoreName = "visibility"
)

// numServices counts the server's services: frontend, history, matching, worker.
const numServices = 4

// servicePorts holds one gRPC port per service, in the order of serviceNames; index 0 is the
// frontend.
type servicePorts [numServices]int

// serviceNames lists the server's services in the order of their ports in [servicePorts].
func serviceNames() [numServices]primitives.ServiceName {
	return [numServices]primitives.ServiceName{
		primitives.FrontendService,
		primitives.HistoryService,
		primitives.MatchingService,
		primitives.WorkerService,
	}
}

// serverConfig returns a fresh config for one server (the server mutates it while starting, so
// it is never shared): one history shard, every service on its own loopback port, no metrics,
// no pprof, no archival.
func serverConfig(st stores, ports servicePorts) *config.Config {
	frontend := hostPort(ports[0])
	main := *st.main
	persistence := config.Persistence{
		DefaultStore:     mainStoreName,
		VisibilityStore:  mainStoreName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{mainStoreName: {SQL: &main}},
	}
	if st.visibility != nil {
		vis := *st.visibility
		persistence.VisibilityStore = visibilityStoreName
		persistence.DataStores[visibilityStoreName] = config.DataStore{SQL: &vis}
	}
	cfg := &config.Config{
		Persistence: persistence,
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {
					Enabled:                true,
					InitialFailoverVersion: 1,
					RPCAddress:             frontend,
				},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services:            make(map[string]config.Service, numServices),
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
		PublicClient: config.PublicClient{HostPort: frontend},
	}
	for i, svc := range serviceNames() {
		cfg.Services[string(svc)] = config.Service{RPC: config.RPC{GRPCPort: ports[i], BindOnIP: loopback}}
	}
	return cfg
}

// staticHosts places every service at its one loopback address (no ringpop membership).
func staticHosts(ports servicePorts) map[primitives.ServiceName]static.Hosts {
	hosts := make(map[primitives.ServiceName]static.Hosts, numServices)
	for i, svc := range serviceNames() {
		hosts[svc] = static.SingleLocalHost(hostPort(ports[i]))
	}
	return hosts
}

// dynamicConfig tunes the server for one machine and short tool calls, then applies overrides
// (checked and converted by [Options.withDefaults]).
//
// Stock values cost about 50 ms per workflow step once more than a few calls run in a row: the
// history queues poll 20 times a second on the single shard, and task queue partitions spread
// tasks across pollers. With the tuning p50 is 12-14 ms per call. The tuning makes a server race
// drop the workflow-closed notification in well under 1% of runs, so a result long poll waits
// out its interval: 2 s bounds that wait instead of 20 s.
func dynamicConfig(overrides map[string]any) dynamicconfig.StaticClient {
	const pollRPS, visibilityPollRPS = 1000, 20
	dc := dynamicconfig.StaticClient{
		dynamicconfig.TimerProcessorMaxPollRPS.Key():    pollRPS,
		dynamicconfig.TransferProcessorMaxPollRPS.Key(): pollRPS,
		dynamicconfig.OutboundProcessorMaxPollRPS.Key(): pollRPS,
		dynamicconfig.ArchivalProcessorMaxPollRPS.Key(): pollRPS,
		// Visibility is read at the stock 20/s: a workflow that closes before its start and
		// upsert records are read gets only its close record written (the server skips the
		// others once the workflow is closed). Short calls thus cost one visibility write
		// instead of three; a list shows a call at most ~50 ms late. Measured: 24% less CPU and
		// a lower p50 per call than at 1000/s (BENCHMARKS.md, "Tuning the embedded server").
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): visibilityPollRPS,

		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
		// Fair dispatch across the calls' fairness keys, and the per-key rate limits of
		// UpdateTaskQueueConfig (docs/flow-control.md); it implies the priority matcher, the
		// default in v1.32 anyway.
		dynamicconfig.MatchingEnableFairness.Key(): true,

		dynamicconfig.HistoryLongPollExpirationInterval.Key(): 2 * time.Second,

		// Cancellation pushed to the worker (docs/operations.md): the namespace reports the
		// worker-commands capability, so the SDK polls its control queue, and history sends an
		// activity's cancel request there at once. toolgate's workers then beat only for liveness
		// (every 30 s for an idle held call) instead of every 5 s to hear a cancellation.
		dynamicconfig.WorkerHeartbeatsEnabled.Key():           true, // the stock default; worker commands need it
		dynamicconfig.WorkerCommandsEnabled.Key():             true,
		dynamicconfig.EnableCancelActivityWorkerCommand.Key(): true,

		// Tests and the UI list workflows often; the stock visibility limit is 10/s.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 1000,

		// The worker service never stops the SDK workers of its scanners and of the parent close
		// policy processor (server v1.32.1): after Stop they would poll a dead frontend forever.
		// A dev database needs no scavenging, and history closes children inline without the
		// processor.
		dynamicconfig.TaskQueueScannerEnabled.Key():       false,
		dynamicconfig.HistoryScannerEnabled.Key():         false,
		dynamicconfig.EnableParentClosePolicyWorker.Key(): false,
	}
	for key, value := range overrides {
		dc[dynamicconfig.MakeKey(key)] = value
	}
	return dc
}
