// Command agent is an example agent loop as a Temporal workflow that calls toolgate tools as
// child workflows, one round of calls per model turn.
//
// # Running it
//
// Start the dev server with its toolbox worker (`make dev`, or `go run ./cmd/toolgate dev`), then
//
//	go run ./examples/agent
//
// It starts a worker for the agent on task queue [TaskQueue] (the agent workflow, the model
// activity and AwaitToolCall), runs one AgentWorkflow with the scripted model and prints the
// answer. In the Web UI (http://127.0.0.1:8233) the agent workflow lists its tool calls as
// children. With no server at the address it fails within seconds, saying how to start one.
//
// The connection flags follow the Temporal CLI's environment: -address ($TEMPORAL_ADDRESS,
// default 127.0.0.1:7233), -namespace ($TEMPORAL_NAMESPACE), -api-key ($TEMPORAL_API_KEY);
// -tool-task-queue ($TOOLGATE_TASK_QUEUE) is the toolgate worker's queue. -id names the agent
// workflow: a second process with the same -id resumes a running agent (after a crash, say)
// instead of starting another. -script plays a conversation of your own from a JSON [Script],
// -json prints the workflow ID, run ID and the whole [AgentResult], and -history FILE writes the
// finished run's event history (the recorded history the replay test replays was written so).
// -max-tool-calls N gives the run a budget of N tool calls (AgentInput.MaxToolCalls,
// workflows.WithBudget): a call beyond it starts nothing and the model reads BUDGET_EXCEEDED.
//
// # The coding example
//
// -example coding plays [CodingScript] against a worker whose sandbox is on (`toolgate dev
// --sandbox`; docs/sandbox.md): the model writes hello.sh with workspace_write_file, runs it with
// exec (`sh hello.sh`, under bubblewrap, which writes out.txt) and reads out.txt with
// workspace_read_file, one call per turn, then answers with what it read. The three calls share
// the agent run's workspace (its name is the agent's workflow ID), kept in the sandbox's store
// after each call that changed it: a call that lands on another worker, or a retry after a lost
// one, finds the files the run's earlier calls left.
//
// # The loop
//
// [AgentWorkflow] asks the model for its next turn (the [Model] behind the CallModel activity: a
// model call is I/O, so it is an activity), runs the turn's tool calls as one round with
// workflows.ExecuteRound, gives every outcome back to the model as a message, and repeats until the
// model answers without calls or MaxTurns is reached. A fatal tool error stops the run: the
// workflow fails with it. The tool calls' workflow IDs are scoped by the agent's workflow ID, so
// two agent runs never share a call, and a replayed or retried turn attaches to its calls instead
// of running them again.
//
// The model here is [ScriptedModel], a function of the conversation (no network); a real model
// client implements [Model] the same way.
package main
