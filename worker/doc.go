// Package worker runs toolgate's Temporal workers for one toolcore registry: ToolCallWorkflow and
// the ExecuteTool activity on the main task queue, plus an activity-only worker for every other
// task queue a tool names in its Options.TaskQueue.
//
// # Lifecycle
//
// [New] snapshots the registry (tools registered later are not served: a durable run must see
// the tool set its worker was built with), detects the search attributes and registers
// everything. [Worker.Start] starts polling; [Worker.Stop] stops gracefully: in-flight tools get
// [Options.StopTimeout] to finish, then their context is canceled and the attempt ends as
// interrupted (retried for ReadOnly and Idempotent tools, outcome unknown for Unsafe ones).
// [Worker.Run] is Start, then Stop when ctx ends or a worker hits a fatal error (namespace gone,
// credentials refused), whichever comes first.
//
// # Search attributes
//
// A workflow that upserts a search attribute the namespace lacks fails its workflow task over and
// over: the call is stuck. So New asks the namespace (OperatorService ListSearchAttributes) once
// whether ToolName, ToolCallId and ToolOutcome are all registered as Keyword, and tells the
// workflows to upsert only if they are. [Options.SearchAttributes] overrides the detection (e.g.
// where the operator API is not allowed). [SetupSearchAttributes] registers the missing ones
// (`toolgate worker --setup`); it is idempotent. Restart workers after adding attributes: the
// detection runs only in New.
//
// # One tool set per task queue
//
// Whichever worker takes a call's workflow task decides the call: a worker that lacks the tool
// records TOOL_NOT_FOUND for good. So every worker's identity carries its tool set's
// [ToolSetFingerprint] ("<pid>@<host> toolset:<fingerprint>", over each tool's name and
// definition hash), and [Worker.Start] asks the server (DescribeTaskQueue) who polls its queues:
// for an unversioned worker, a toolgate worker of another tool set seen in the last 75 s makes
// Start fail with [ErrToolSetConflict], whose message says how to roll out instead. Workers with
// the same tool set share a queue (scale-out); give every other tool set its own
// [Options.TaskQueue], and start its calls there, or version the workers. Two workers started at
// the same instant can both pass the check; pollers that are not toolgate workers (or older
// ones, without a fingerprint or with the 12-digit fingerprint of names only) are not judged.
//
// # Versioned rollout
//
// With [Options.Deployment] every SDK worker of a Worker (the main task queue's and each tool's
// own queue's) joins one Worker Deployment Version (Temporal's Worker Deployment Versioning:
// deployment name and build ID). The server routes each workflow to the workers of its version:
//
//   - ToolCallWorkflow, UndoWorkflow and the catalog workflow are registered Pinned: a call
//     completes on the version that validated it, an undo on the version whose tools it
//     compensates, so a new tool set never meets a call recorded by the old one;
//   - a workflow of the user's own registered without a behavior ([Worker.RegisterWorkflow])
//     gets [Deployment.DefaultVersioningBehavior], AutoUpgrade by default: a long agent run
//     moves to each promoted version at its next workflow task (keep its code replay-compatible,
//     or register it Pinned);
//   - new workflows start on the deployment's current (or ramping) version, set by `toolgate
//     deploy promote|ramp` or client.WorkerDeploymentClient.
//
// A versioned worker is judged for conflicts only against live workers of its own version, and
// against the tool set its version records: a changed tool set under a new build ID is never
// refused; the same build ID with another tool set is. Start records the tool set
// ([VersionToolSet]) in the version's metadata under [VersionMetadataKey], retrying for up to
// 30 s while the server creates the version after the first poll; `toolgate deploy status` and
// promote read it. Keep a version's workers running until the deployment reports the version
// drained: its pinned calls run nowhere else.
//
// # Workflow IDs that are not ASCII
//
// The Go SDK sends the workflow ID in a gRPC header, and gRPC refuses a header value that is not
// printable ASCII before the request leaves the process: a worker could never answer a call
// started (by a client that ignored toolgate's ID escaping) under such an ID, and the call would
// stay running. Build the worker's Temporal client with [DialOption] in
// ConnectionOptions.DialOptions: the header is then escaped and the workflow fails at once with
// INVALID_TOOL_CALL naming the escaping rule. New checks the client with one request and logs a
// warning when the option is missing.
//
// # Decisions
//
//   - Panic policy: BlockWorkflow, the SDK default, unless [Options.FailWorkflowOnPanic]. The
//     workflow code itself does not panic (inputs are decoded raw, validators are recovered and
//     time-guarded), so what is left is a bug or a non-determinism error after an incompatible
//     deploy. Both are fixed by deploying a corrected worker, after which a blocked call resumes
//     and records its true outcome; failing it instead would record a false outcome for a call
//     whose tool may already have run. The price: the caller waits (and a ctx-canceled Execute
//     waits only up to its CancelWaitTimeout) while the workflow task retries, visible in the UI
//     as a failing workflow task and in the log.
//   - Sticky workflow cache: this package leaves it alone. Its size is process-global
//     (go.temporal.io/sdk/worker.SetStickyWorkflowCacheSize, before the first worker starts), so
//     the main decides. A tool call's workflow needs its entry only while its tool runs, and
//     evicting it costs a replay of 12 events when the tool returns, so a small cache suits
//     toolgate: the toolgate binaries default to 256 (--workflow-cache), which saves about 26 KiB
//     per held call against the SDK's default of 10,000 (BENCHMARKS.md).
//   - Concurrency: up to [Options.MaxConcurrentActivities] tools run at once per task queue
//     (default 2000, room for other calls beside 1,000 held ones: tools mostly wait on I/O); workflow tasks use the SDK defaults.
//   - Graceful stop (drain, see [Worker.Stop]): polling stops at once, in-flight tools get
//     [Options.StopTimeout] (default 30s, not the SDK's 0, which would cut them off at once),
//     then the attempts left are interrupted and reported to the server before Stop returns
//     (the SDK's WorkerStopTimeout is StopTimeout + [DrainReportTimeout]), so their calls go on
//     elsewhere at once instead of after their heartbeat timeout.
//
// # Logging
//
// toolgate's own lines go to [Options.Logger]. The SDK logs through the Temporal client's logger;
// dial that client with Logger: [ZapLogger](l) to route those lines into the same zap core.
package worker
