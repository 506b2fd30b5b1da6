package wire

// Wire names of reconciling an Unsafe call whose only attempt ended without a verdict.
const (
	// ReconcileToolName is the activity type that asks a tool's Reconcile whether the lost
	// attempt's effect happened. It is retried with backoff, at most ReconcileMaxAttempts times.
	ReconcileToolName = "ReconcileTool"
	// ErrTypeReconcileFailed is the retryable ApplicationError type of a Reconcile that returned
	// an error or panicked.
	ErrTypeReconcileFailed = "ReconcileFailed"
	// ChangeReconcile is the workflow.GetVersion change ID of the reconcile step: histories
	// recorded before it replay without reconciling.
	ChangeReconcile = "toolgate-reconcile"
	// ChangeReconcileCheckpoint is the workflow.GetVersion change ID of passing the lost
	// attempt's last checkpoint to ReconcileTool (ReconcileToolInput.LastCheckpoint). It is asked
	// only when the lost attempt left a checkpoint: histories recorded before it reconcile
	// without one.
	ChangeReconcileCheckpoint = "toolgate-reconcile-checkpoint"
	// ReconcileMaxAttempts bounds the attempts of ReconcileTool.
	ReconcileMaxAttempts = 5
)
