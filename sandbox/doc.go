// Package sandbox runs untrusted commands under bubblewrap in a workspace per agent run, and keeps
// each workspace in a store the workers share, so a call that lands on another worker (or a
// retry after a lost worker) finds the files the run's earlier calls left.
//
// Three roles, one file each:
//
//   - Runner (run.go, limits.go): one command in a fresh bubblewrap sandbox: an unprivileged
//     user, a read-only system, the workspace as the only writable host directory, no network
//     (or only the named hosts through a proxy), no host environment, a fresh PID namespace,
//     rlimits on CPU, memory, processes, open files and file size, a wall clock, bounded output,
//     and the whole process tree killed on cancellation.
//   - Workspaces (workspace.go): the local copy of each run's workspace on this worker, locked
//     per workspace, restored from the shared store when it is behind, and committed as a new
//     snapshot after a call changed it (compare-and-set on the workspace's head).
//   - Snapshots (snapshot.go, store.go and its implementations): a content-addressed manifest of
//     the workspace's files (each file's bytes compressed, stored once by its SHA-256, sealed
//     with the codec keyring when the blob store is blobs.Sealed) and the head that names the
//     last one.
//
// docs/sandbox.md says what is isolated and what is not.
package sandbox
