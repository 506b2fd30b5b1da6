package wire

// Names of a call's workflow ID and of a worker's identity on the task queue.
const (
	// WorkflowIDPrefix starts every call's workflow ID: WorkflowIDPrefix + the escaped call ID,
	// or the escaped scope + "/" + WorkflowIDPrefix + the escaped call ID (client.WorkflowID
	// and docs/contract.md give the escaping).
	WorkflowIDPrefix = "toolcall-"
	// ToolSetIdentityMarker separates a toolgate worker's identity ("<pid>@<host>") from the
	// fingerprint of the tool set it serves, as in "4242@host toolset:0387c08e7b6b". Workers
	// read it from each other's poller identities to keep one tool set per task queue.
	ToolSetIdentityMarker = " toolset:"
)
