package wire

// Drain: a worker that stops gracefully (SIGTERM, worker.Stop) lets its running attempts finish
// within its stop timeout, then interrupts the rest and reports each to the server at once.
const (
	// ErrTypeDrained is the ApplicationError type of an attempt of a ReadOnly or Idempotent tool
	// interrupted by its worker's graceful stop. The workflow's retry policy lists it as
	// non-retryable, so the server hands it to the workflow at once, which schedules the call
	// again on another worker without counting the interrupted attempt (its details:
	// activities.DrainedAttempt). An Unsafe tool's interrupted attempt stays ErrTypeInterrupted:
	// its outcome is unknown and it is reconciled, never run again blindly.
	ErrTypeDrained = "ToolDrained"
	// ChangeDrainResume is the workflow.GetVersion change ID of scheduling a drained call again:
	// a history recorded before it maps an ErrTypeDrained failure as an interrupted attempt.
	ChangeDrainResume = "toolgate-drain-resume"
	// MaxDrainResumes bounds how often one call is scheduled again after drained attempts; past
	// it, a drained attempt ends the call as an interrupted one (TOOL_EXECUTION_FAILED).
	MaxDrainResumes = 50
)
