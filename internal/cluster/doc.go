// Package cluster runs a real Temporal cluster for tests: a private PostgreSQL 15 on a free
// loopback port and a temporary directory, Temporal's main and visibility schemas set up with the
// server module's own SQL tooling (the code behind temporal-sql-tool), and several Temporal server
// processes (cmd/clusternode), each running every service, sharing the database and finding each
// other through ringpop membership on loopback ports.
//
// Every node's configuration comes from [NodeConfig], one Go function: the harness hands a node
// its [NodeSpec] as JSON and the node builds its config from it, so harness and nodes cannot
// drift.
//
// PostgreSQL refuses to run as root: as root, the harness runs initdb and postgres as the user
// `postgres` and hands it the data directory. The binaries come from Debian's postgresql-15
// (/usr/lib/postgresql/15/bin), which `make setup` installs when missing.
//
// Processes the harness starts die with it (Linux parent-death signal) and are stopped by the
// Stop methods; nothing outlives a test.
package cluster
