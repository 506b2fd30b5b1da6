// Package devserver runs a real Temporal server (go.temporal.io/server) inside this process, for
// `toolgate dev` and for integration tests: SQLite persistence, one history shard, the frontend,
// history, matching and worker services each on a loopback port, and optionally the Temporal Web
// UI. Nothing is downloaded and nothing listens beyond 127.0.0.1.
//
// This is the only package that imports the server: it links about 1,800 packages and takes
// minutes to compile, so code that only needs the search attribute names imports
// internal/searchattr, and tests that need a server use internal/devtest.
//
// # Storage
//
// With Options.DataDir empty the state lives in in-memory SQLite databases with names unique to
// the server, so several servers can run in one process. With a DataDir it lives in
// <DataDir>/temporal.db: created with the server's schema when missing, reopened as it is when
// present (workflows, histories and results survive a restart). Visibility (the records lists and
// the Web UI read) has a database of its own, <DataDir>/visibility.db or a second in-memory one:
// SQLite runs one statement at a time per database, and visibility's batched writes would hold up
// the calls' own. A DataDir whose temporal.db predates visibility.db keeps visibility in
// temporal.db; visibility.db without temporal.db is refused. The files are in WAL mode with
// synchronous=normal (<file>-wal and -shm sit beside each): a process crash loses nothing, a
// power loss may lose the last commits. A DataDir the server creates (and its missing parents) is
// 0700, since it holds every call's arguments and results; an existing one keeps its mode (it may
// be shared on purpose), with a warning when others may enter it.
//
// The server's SQLite plugin never closes a database connection: after Stop, an in-memory
// database stays in memory and a file stays open until the process exits. A later Start on the
// same DataDir in the same process reuses the open connection, which is harmless. Do not run two
// servers on one DataDir at a time (they would fight over the one shard).
//
// # Namespace and search attributes
//
// Start creates Options.Namespace (default "default", retention Options.Retention, default 7
// days) with the Keyword search attributes of package searchattr. A namespace that already
// exists keeps its retention; Start adds any missing search attribute through the
// OperatorService once the server is up, and fails if one exists with another type.
//
// # Ports and readiness
//
// Every service gets a free loopback port: picked by listening on port 0, then handed to the
// server. If another process binds one first, the server reports it through Logger.Fatal; the
// logger given to the server panics instead of exiting, Start recovers and retries with new
// ports (up to five times). A retried attempt may leave listeners of the failed attempt open: the
// server library offers no way to close them. Options.FrontendPort fixes the frontend's port
// (Start fails at once if it is taken); the other services always take free ports.
//
// Start returns once a request has travelled frontend -> history shard and back, and the search
// attributes are listed: about 0.3 s for an in-memory server on two cores.
//
// # Tuning
//
// The dynamic config is tuned for one machine and short workflows: history queue processors poll
// at 1000/s instead of 20/s (visibility's stays at 20/s), task queues have one partition, a
// history long poll expires after 2 s, visibility requests are allowed 1000/s per namespace, and
// matching dispatches fairly across fairness keys (matching.enableFairness; docs/flow-control.md).
// See dynamicConfig.
//
// # Logs
//
// The server's lines from Options.ServerLogLevel up (default warn) go to Options.Logger; during
// Stop only errors are kept (the server warns about its own shutdown). The package's own notes
// about the server (an open data directory, the store layout, a port retried) go to
// Options.Logger at their level, whatever ServerLogLevel says.
//
// # Web UI
//
// With Options.UI the Temporal Web UI (github.com/temporalio/ui-server/v2) serves on a loopback
// port, pointing at the frontend, with news fetching and version checks off. Its JSON API is
// under /api/v1, e.g. /api/v1/namespaces/default/workflows lists workflows. It answers only
// requests whose Host is localhost, 127.0.0.1 or [::1] (any port), others get 421 Misdirected
// Request: the UI can start and cancel workflows, and a web page that rebinds its DNS name to
// 127.0.0.1 still sends its own name as Host.
package devserver
