// Package cluster runs a real Temporal cluster for tests: a private PostgreSQL 15 on a free
// loopback port and a temporary directory, Temporal's main and visibility schemas set up with the
// server module's own SQL tooling (the code behind temporal-sql-tool), and several Temporal server
// processes, each running every service, sharing the database and finding each other through
// ringpop membership on loopback ports.
//
// Every node's configuration comes from [NodeConfig], one Go function: the harness hands a node
// its [NodeSpec] as JSON ($TOOLGATE_CLUSTER_NODE_SPEC) and the node builds its config from it, so
// harness and nodes cannot drift. A node is any program that calls [NodeMain] when that variable
// is set: cmd/clusternode, or the package's own test binary (its TestMain), which saves a link of
// the server in `make test`.
//
// # Scenarios
//
// `go test ./cmd/toolgate/internal/cluster` (and so `make test`) runs the short form of TestClusterFaults: two
// nodes, two worker processes of internal/faults' ledger tools, and a worker kill, a node kill and
// a PostgreSQL crash-restart while calls run (about 25 s). `-cluster` (`make test-cluster`) runs it
// with more calls and adds the longer scenarios.
//
// PostgreSQL refuses to run as root: as root, the harness runs initdb and postgres as the user
// `postgres` and hands it the data directory. The binaries come from Debian's postgresql-15
// (/usr/lib/postgresql/15/bin), which `make setup` installs when missing.
//
// Processes the harness starts die with it (Linux parent-death signal) and are stopped by the
// Stop methods; nothing outlives a test.
package cluster

//go:generate go run ./cmd/composegen -root ../../../..
