package activities

import "sync"

// Attempts is the set of ExecuteTool attempts running in this process, by workflow ID. The
// workflow worker of the same process calls Hurry when a call is canceled, so that its attempt's
// next heartbeat, the one whose response carries the cancellation, goes out within
// HurryHeartbeatInterval instead of at the idle cadence (half the HeartbeatTimeout).
//
// It is a hint only: the attempt still stops only when the server says the cancellation was
// requested, so a hint for the wrong attempt, a stale one or one replayed costs a few heartbeats
// and nothing else. An attempt in another process gets no hint and hears the cancellation at its
// idle cadence. The zero value is ready; a nil *Attempts ignores everything.
type Attempts struct {
	mu      sync.Mutex
	running map[string]*heartbeats
}

// NewAttempts returns an empty set.
func NewAttempts() *Attempts { return &Attempts{} }

// Hurry hurries the heartbeats of the attempt of workflowID running in this process, if any.
func (a *Attempts) Hurry(workflowID string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	h := a.running[workflowID]
	a.mu.Unlock()
	if h != nil {
		h.hurryUp()
	}
}

// Running returns the number of attempts running in this process.
func (a *Attempts) Running() int {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.running)
}

// add registers h as the attempt of workflowID and returns its removal.
func (a *Attempts) add(workflowID string, h *heartbeats) (remove func()) {
	if a == nil || workflowID == "" {
		return func() {}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running == nil {
		a.running = make(map[string]*heartbeats)
	}
	a.running[workflowID] = h
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.running[workflowID] == h {
			delete(a.running, workflowID)
		}
	}
}
