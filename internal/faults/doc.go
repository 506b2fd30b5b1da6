// Package faults proves toolgate's durability with real processes and real faults: workers,
// the dev server and agents killed with SIGKILL, cancellation storms, load across two workers,
// hostile input through the whole durable path, and a fuzz campaign of the activity's error
// mapping. RELIABILITY.md in the repository root states each scenario, what it asserts, the
// latest figures and the command that reproduces them.
//
// # Processes
//
// The tests build two binaries once per test binary: cmd/toolgate (the dev server is `toolgate
// dev --no-ui` on a temporary data directory) and cmd/faultworker in this package, a worker and
// an agent whose tools write one JSON line per execution step to a ledger file the test owns.
// The agent-workflow scenario also builds examples/agent, whose agent loop is a workflow that
// runs each model turn's calls as child workflows (workflows.ExecuteRound). The inline scenario
// runs its agent workflow ([InlineAgent], calls run with workflows.Inline) in the faultworker
// itself, beside the tools whose registry validates its calls.
// Nothing runs in the test process but the test's own Temporal client, so a fault is always a
// fault of a separate process.
//
// # Ledger
//
// Every execution of a tool in [Registry] appends [Record]s to the ledger: "run" when an attempt
// starts, "effect" when the tool commits its side effect (just before it returns a success), and
// "exit" when the attempt returns, whatever the outcome. Lines are appended with one write(2)
// each on a file opened with O_APPEND, so several worker processes can share one ledger. Counting
// them is how the tests see what really ran: an Unsafe call has at most one "run", a successful
// call exactly one "effect", a canceled call an "exit" for every "run".
//
// # Tools
//
// [Registry] defines effect_unsafe, effect_idempotent and effect_readonly (one per side-effect
// class, heartbeat timeout 5 s so a lost worker is noticed within seconds) and pathological (ReadOnly,
// outputs and errors far beyond every bound). Their arguments ([Args]) choose the outcome: a
// result, an error, a panic, a fatal error, a transient error on the first attempt, a rejection
// by the validator, a gate file to wait for, or a pathological shape. A worker started with
// [Config.Hold] runs every attempt until its context ends, so a test can kill it mid-call.
// effect_reconciled (Unsafe, approval required) commits its effect before it holds, and its
// Reconcile finds that effect in the ledger by idempotency key; effect_checkpointed (Idempotent)
// processes [CheckpointItems] items with a ledger record and a checkpoint after each, holding
// after two per attempt on a holding worker. effect_asks (Unsafe) commits its effect and
// checkpoints it, then asks its caller to confirm (toolcore.Confirm): the attempt that runs with
// the answer resumes from the checkpoint, so the effect is in the ledger once.
//
// # Short and long forms
//
// `go test ./internal/faults` runs the short form of every scenario (tens of seconds once the
// binaries are built); `go test ./internal/faults -soak` (or `make soak`) the long form;
// `-short` skips the process scenarios. `make fuzz` runs the fuzz targets, FuzzErrorMapping
// among them.
package faults
