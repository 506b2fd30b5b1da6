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

// Heartbeat cadence. Cancellation reaches an activity only through a heartbeat response, and
// progress reaches the caller only in heartbeat details, so the loop decides when to beat and the
// SDK's own batching (0.8 x HeartbeatTimeout by default) must be capped below every gap the loop
// uses: workers set the SDK's MaxHeartbeatThrottleInterval to SDKHeartbeatThrottle.
//
//   - Idle: every third of the HeartbeatTimeout (three chances per window, so a beat delayed by
//     up to two thirds of the timeout still counts).
//   - Progress: at once on a report, at most once per ProgressHeartbeatGap (later reports
//     coalesce; the latest is sent).
//   - Hurried: every HurryHeartbeatInterval for HurryWindow after Attempts.Hurry, which the
//     workflow worker of the same process calls when the call is canceled, so the heartbeat
//     that carries the cancellation back comes within a fraction of a second.
const (
	heartbeatFraction = 3
	// defaultHeartbeatInterval applies when the activity has no HeartbeatTimeout (only when
	// scheduled by something other than ToolCallWorkflow): beat anyway, or never hear a cancel.
	defaultHeartbeatInterval = 10 * time.Second
	// ProgressHeartbeatGap is the least time between two heartbeats sent for progress reports.
	ProgressHeartbeatGap = 500 * time.Millisecond
	// HurryHeartbeatInterval is the cadence of a hurried attempt.
	HurryHeartbeatInterval = 100 * time.Millisecond
	// HurryWindow is how long a hurried attempt beats at HurryHeartbeatInterval.
	HurryWindow = 5 * time.Second
	// SDKHeartbeatThrottle is the SDK heartbeat throttle (worker option
	// MaxHeartbeatThrottleInterval) under which the loop's cadence holds: below every gap above.
	SDKHeartbeatThrottle = 50 * time.Millisecond
	// MaxProgressMessageBytes bounds Progress.Message in heartbeat details:
	// wire.MaxProgressMessageBytes.
	MaxProgressMessageBytes = wire.MaxProgressMessageBytes
)

// heartbeats is the heartbeat loop of one attempt.
type heartbeats struct {
	ctx     context.Context
	record  func(details ...any) // activity.RecordHeartbeat bound to ctx
	kick    chan struct{}        // cap 1: a pending progress beat; further reports coalesce into it
	hurry   chan struct{}        // cap 1: a pending hurry request
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

// heartbeatInterval is the loop's idle period for an activity's HeartbeatTimeout.
func heartbeatInterval(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return defaultHeartbeatInterval
	}
	return timeout / heartbeatFraction
}

// startLoop starts a loop that calls record every interval, on progress and when hurried.
func startLoop(ctx context.Context, interval time.Duration, record func(details ...any)) *heartbeats {
	h := &heartbeats{
		ctx:     ctx,
		record:  record,
		kick:    make(chan struct{}, 1),
		hurry:   make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go h.loop(interval)
	return h
}

// cadence is the loop's schedule state.
type cadence struct {
	interval   time.Duration
	started    time.Time // the attempt's start: the server's heartbeat window opens there
	last       time.Time // the last beat; zero before the first
	pending    bool      // a progress report not yet sent
	hurryUntil time.Time
}

// next returns when the next beat is due.
func (c *cadence) next(now time.Time) time.Time {
	base := c.last
	if base.IsZero() {
		base = c.started
	}
	due := base.Add(c.interval)
	if c.pending {
		due = earliest(due, c.last.Add(ProgressHeartbeatGap)) // zero last: at once
	}
	if now.Before(c.hurryUntil) {
		due = earliest(due, c.last.Add(HurryHeartbeatInterval))
	}
	return due
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func (h *heartbeats) loop(interval time.Duration) {
	defer close(h.stopped)
	c := cadence{interval: interval, started: time.Now()}
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-h.ctx.Done():
			return
		case <-h.kick:
			c.pending = true
		case <-h.hurry:
			c.hurryUntil = time.Now().Add(HurryWindow)
		case <-timer.C:
		}
		now := time.Now()
		if !now.Before(c.next(now)) {
			h.beat()
			c.last, c.pending = time.Now(), false
			now = c.last
		}
		timer.Reset(c.next(now).Sub(now))
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
	signal(h.kick)
}

// hurryUp makes the loop beat every HurryHeartbeatInterval for HurryWindow, without blocking.
func (h *heartbeats) hurryUp() { signal(h.hurry) }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
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
