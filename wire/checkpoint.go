package wire

// CheckpointDetailsIndex is where a tool's checkpoint (toolcore.Checkpoint) travels in the heartbeat
// details of an ExecuteTool attempt: once the tool has recorded one, the details are two payloads,
// the ProgressWindow (JSON null when the tool has reported no progress) and the
// checkpoint, the tool's own JSON of at most toolcore.MaxCheckpointBytes. Without a checkpoint
// the details are as ProgressWindow says. A retried attempt reads the checkpoint from the last
// details of the attempt before it.
const CheckpointDetailsIndex = 1
