package wire

// ProgressDetails is the shape of a running tool's latest progress report in the ExecuteTool
// activity's heartbeat details: the first details payload, JSON
// {"completed":3,"total":6,"message":"..."}. A heartbeat without details means no report yet.
// It has the fields of toolcore.Progress, so each converts to the other.
type ProgressDetails struct {
	Completed int64  `json:"completed"`
	Total     int64  `json:"total,omitempty"`
	Message   string `json:"message,omitempty"`
}

// MaxProgressMessageBytes bounds ProgressDetails.Message: the activity keeps at most this many
// bytes of valid UTF-8.
const MaxProgressMessageBytes = 1024

// FinalProgress is the part of the ExecuteTool activity's result that carries the last report of
// the attempt that returned it (the member "progress", absent when the tool reported none).
// Heartbeat details are throttled and vanish when the attempt ends, so a report made just before
// the tool returns reaches a caller only here, in the run's history.
type FinalProgress struct {
	Progress *ProgressDetails `json:"progress,omitempty"`
}
