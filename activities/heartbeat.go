package activities

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Heartbeat cadence. Cancellation reaches an activity only through a heartbeat response, and the
// SDK throttles heartbeats to 0.8 x HeartbeatTimeout, so the loop beats at a third of the timeout
// (three chances per window) and at once on progress; the SDK coalesces what it cannot send yet
// and always sends the latest details.
const (
	heartbeatFraction = 3
	// defaultHeartbeatInterval applies when the activity has no HeartbeatTimeout (only when
	// scheduled by something other than ToolCallWorkflow): beat anyway, or never hear a cancel.
	defaultHeartbeatInterval = 10 * time.Second
	// MaxProgressMessageBytes bounds Progress.Message in heartbeat details:
	// wire.MaxProgressMessageBytes.
	MaxProgressMessageBytes = wire.MaxProgressMessageBytes
)

// heartbeats is the heartbeat loop of one attempt.
type heartbeats struct {
	ctx     context.Context
	record  func(details ...any) // activity.RecordHeartbeat bound to ctx
	kick    chan struct{}        // cap 1: a pending progress beat; further reports coalesce into it
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once

	mu         sync.Mutex
	progress   *wire.ProgressDetails // latest report, nil until the first
	checkpoint json.RawMessage       // latest checkpoint (see checkpoint.go), nil until the first
}

// startHeartbeats starts the loop; stop must be called before the activity returns.
func startHeartbeats(ctx context.Context, timeout time.Duration) *heartbeats {
	record := func(details ...any) { activity.RecordHeartbeat(ctx, details...) }
	return startLoop(ctx, heartbeatInterval(timeout), record)
}

// heartbeatInterval is the loop's period for an activity's HeartbeatTimeout.
func heartbeatInterval(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return defaultHeartbeatInterval
	}
	return timeout / heartbeatFraction
}

// startLoop starts a loop that calls record every interval and on progress.
func startLoop(ctx context.Context, interval time.Duration, record func(details ...any)) *heartbeats {
	h := &heartbeats{
		ctx:     ctx,
		record:  record,
		kick:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go h.loop(interval)
	return h
}

func (h *heartbeats) loop(interval time.Duration) {
	defer close(h.stopped)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-h.ctx.Done():
			return
		case <-ticker.C:
		case <-h.kick:
		}
		h.beat()
	}
}

// beat records a heartbeat carrying the latest progress, if any. Sending no details after a
// report would erase the progress the server shows, so the latest report is repeated.
func (h *heartbeats) beat() {
	h.mu.Lock()
	p, cp := h.progress, h.checkpoint
	h.mu.Unlock()
	switch {
	case cp != nil:
		h.record(p, cp) // wire.CheckpointDetails: progress (or null) first, checkpoint second
	case p == nil:
		h.record()
	default:
		h.record(*p)
	}
}

// report is the tool's progress reporter: it stores the report and wakes the loop without ever
// blocking the tool.
func (h *heartbeats) report(p toolcore.Progress) {
	d := wire.ProgressDetails(p)
	d.Message = boundMessage(d.Message)
	h.mu.Lock()
	h.progress = &d
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// stop ends the loop and waits for it, so no heartbeat is recorded after the attempt returns.
func (h *heartbeats) stop() {
	h.once.Do(func() { close(h.done) })
	<-h.stopped
}

// boundMessage keeps at most MaxProgressMessageBytes of valid UTF-8.
func boundMessage(s string) string {
	if len(s) <= MaxProgressMessageBytes && utf8.ValidString(s) {
		return s
	}
	if len(s) > MaxProgressMessageBytes {
		cut := MaxProgressMessageBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// quote bounds and quotes an untrusted string for an error message.
func quote(s string) string {
	const maxBytes = 64
	if len(s) > maxBytes {
		s = s[:maxBytes] + "…"
	}
	return strconv.Quote(s)
}
