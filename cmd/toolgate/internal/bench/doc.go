// Package bench measures what durability costs: toolgate's durable path against the least a
// Temporal user would write for the same job, side by side in one process, on one server, in one
// run, reported as ratios. It is the engine of `toolgate bench`; it does not start a server
// (the command does, with cmd/toolgate/internal/devserver), so its unit tests never link one.
//
// # Subjects
//
// A subject is one way to run a no-op call durably:
//
//   - [SubjectToolgate] "toolgate": client.Execute of a no-op tool served by worker.New, with
//     the defaults a user gets (eager start; search attributes when the namespace has them).
//   - [SubjectBare] "bare", the baseline: a workflow that runs one no-op activity
//     (StartToCloseTimeout only) on its own task queue of the same process, started with
//     ExecuteWorkflow and awaited with Get: the least a Temporal user writes.
//   - [SubjectBareEager] "bare-eager": the same, started with EnableEagerStart, the like-for-like
//     baseline of toolgate (a Temporal user who knows the option).
//   - Variants that isolate one choice: "toolgate-noeager" (client.Options.DisableEagerStart,
//     toolgate before eager start), "toolgate-nosa" (no search attributes, client and workflow),
//     "bare-local" (the activity as a local activity: one workflow task, no activity task; what a
//     local-activity fast path would buy, at the price of heartbeats and server-side retries),
//     "bare-noeageract" (bare with eager activity dispatch off, which toolgate and bare have on:
//     what that default buys).
//
// Every ratio is subject / bare: above 1 is slower (latency) or faster (throughput).
//
// # Phases
//
//  1. Latency: Warmup calls per subject, then Calls sequential calls per subject in blocks of
//     Block, subjects round-robin with the order rotated every round (ABAB... BABA), so drift
//     of a shared machine lands on every subject alike. p50, p95, p99 and their ratios. A CPU
//     profile of the process covers this phase: every sample is charged to a component (SQLite
//     persistence, the rest of the server, toolgate's code, the SDK, gRPC, the Go runtime; see
//     component) and the profile is copied to Config.CPUProfile for go tool pprof. Afterwards
//     the histories of a sample of the measured calls give the breakdown: where a call's wall
//     time goes, segment by segment (client to start, each workflow task's dispatch and run, the
//     activity, result to client).
//
//  2. Throughput: Concurrency callers, ThroughputCalls per subject in ThroughputBlocks blocks,
//     alternating subjects: calls per second (calls / time inside the subject's blocks).
//
//  3. In process: toolcore.Execute of the no-op tool against a direct call of its function,
//     ns and allocations per call.
//
//  4. In flight: InFlight concurrent `sleep` calls held running by one worker; while they are
//     held, Probes sequential no-op calls measure latency under load; RSS of the process (server,
//     worker and client together) before, while held, and its peak. Then they are released and
//     drained. A held call whose heartbeats reach an overloaded server too late is timed out by
//     it: the phase counts such calls as lost rather than failing.
//
//  5. History: events and bytes (sum of proto sizes of GetWorkflowHistory events) of one call
//     that succeeds and one that ends in an error, per subject. toolgate's error is an error
//     result (isError: true, the workflow completes); bare's is an activity failing with a
//     non-retryable error, which fails the workflow.
//
//  6. MCP: a tools/call over streamable HTTP to toolgate's MCP server (package mcp, in process,
//     on loopback) against client.Execute of the same no-op call, alternating call by call
//     (MCPCalls each, after Warmup): p50 and p95 ratios MCP / Execute ([GoalMCPP50]).
//
//  7. Cost: billable actions (Temporal Cloud's list) per call, counted from the recorded
//     histories (countActions; children included) plus the RecordActivityTaskHeartbeat RPCs the
//     process's client sent (worker.ActionCounter on the harness's client), for a standalone
//     toolgate call, bare, bare-eager, and from an agent workflow a child call, a plain activity,
//     an inline call (workflows.Inline) and rounds of 8; then one idle held call, its heartbeats
//     per minute from their cadence over CostHold ([GoalCostStandalone], [GoalCostInline],
//     [GoalCostHeldMinute]). The inline calls' agent runs on the toolgate worker, as
//     workflows.Inline's documentation sets it up, so ExecuteTool is dispatched eagerly, as the
//     plain activities on their agent's own queue are; the rounds phase compares the two in wall
//     time and CPU ([GoalInline]).
//
// They run in the order 3, 1, 2, 5, cancel, 6, rounds, 7, 4 (Config.Phases selects some): in process while the server is idle, in flight last
// because it loads the server most. Any failed call ends the run; Run returns the phases
// completed before it.
//
// # Figures, not assertions
//
// Nothing here asserts a figure: goals are printed beside the ratios ([GoalLatencyP50],
// [GoalThroughput]). [Report.Check] asserts only that a report is structurally complete, which is
// what the short-mode test checks.
package bench
