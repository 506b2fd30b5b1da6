// Package archtest holds the import rules of toolgate as a test: it lists every package of the
// module with `go list -deps` and fails on an import arrow that points the wrong way.
//
// # Rules
//
//   - toolcore (the contract, pure Go) depends on nothing of go.temporal.io, tests included.
//   - wire imports only the standard library (and, if ever needed, go.temporal.io/sdk).
//   - workflows, activities, worker, client, toolbox and wire never depend, even transitively,
//     on go.temporal.io/server or cmd/toolgate/internal/devserver: they never link the server.
//   - client never depends on activities: the names they share live in package wire.
//   - Only cmd/toolgate/internal/devserver imports go.temporal.io/server directly; commands and tests that
//     need a server use cmd/toolgate/internal/devserver (or internal/devtest). The one other
//     exceptions are cmd/toolgate/internal/cluster (and its cmds): the test harness that runs several server
//     processes on PostgreSQL, cmd/toolgate/internal/pgstore, which sets up PostgreSQL stores for both,
//     and cmd/toolgate/internal/reviewauth, the frontend authorizer that checks approval decisions.
//   - cmd/toolgate imports cmd/toolgate/internal/devserver in embedded_server.go only: built with the
//     toolgate_noserver tag (as make test's staticcheck builds it) it reaches nothing of the
//     server, tests included.
//
// The test needs the go command (it runs `go list`, which compiles nothing).
package archtest
