package activities

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Heartbeat cadence. A heartbeat tells the server the worker lives (within the activity's
// HeartbeatTimeout, or the attempt times out) and carries progress to the caller; where the
// namespace does not push cancellation to its workers (Activities.CancellationPushed), a
// cancellation also reaches an activity only through a heartbeat response. So the loop decides
// when to beat:
//
//   - Idle: every idle period after the last beat the server took (idleInterval): the tool's
//     IdleHeartbeat where cancellation is pushed (30 s by default), else half the
//     HeartbeatTimeout, at most FallbackHeartbeatInterval.
//   - Progress: at once on a report, at most once per ProgressHeartbeatGap. Every beat carries
//     the progress window (progress.go), so the reports made between two beats travel together
//     in the second.
//   - Hurried: every HurryHeartbeatInterval for HurryWindow after Attempts.Hurry, which the
//     workflow worker of the same process calls when the call is canceled, so the heartbeat
//     that carries the cancellation back comes within a fraction of a second. Where cancellation
//     is pushed the hurry first waits PushedCancelGrace for the push (which ends the attempt's
//     context and the loop with it): a hurry that starts means the push did not come, and the
//     worker says so once in its log.
//
// How a beat is sent. The SDK's own heartbeat (activity.RecordHeartbeat) bounds its RPC by
// max(its batching interval, 1 s) and cancels the attempt when that RPC fails for a transient
// reason: on a loaded server a 1 s bound loses held calls whose heartbeats were merely late.
// With a Recorder (workers pass their client), the loop sends each beat itself by task token,
// bounded by what is left of the server's heartbeat window (at least MinBeatBudget), and sends a
// beat that failed for a transient reason again RetryHeartbeatPause after the failure (never
// sooner: an overloaded server must not get a storm of retries). Any other answer
// (cancel requested, the activity gone, paused or reset) is relayed: one SDK heartbeat asks the
// server again and cancels the attempt's context with the SDK's cause, so the SDK reports the
// attempt as it would have. Without a Recorder every beat is an SDK heartbeat. Either way the
// SDK's batching is capped below every gap above: workers set MaxHeartbeatThrottleInterval to
// SDKHeartbeatThrottle.
const (
	heartbeatFraction = 2
	// defaultHeartbeatInterval is the idle period of an activity without a HeartbeatTimeout
	// (only when scheduled by something other than toolgate's workflows) where cancellation is
	// not pushed: beat anyway, or never hear a cancel.
	defaultHeartbeatInterval = 10 * time.Second
	// FallbackHeartbeatInterval caps the idle period where cancellation is not pushed: an idle
	// attempt beats every half of its HeartbeatTimeout, at most this long apart, so a
	// cancellation is heard within it (half the old 10 s default HeartbeatTimeout, as before).
	FallbackHeartbeatInterval = 5 * time.Second
	// PushedCancelGrace is how long a hurry waits for the pushed cancellation where
	// cancellation is pushed, before it hurries the heartbeats as where it is not.
	PushedCancelGrace = 2 * time.Second
	// ProgressHeartbeatGap is the least time between two heartbeats sent for progress reports.
	ProgressHeartbeatGap = 500 * time.Millisecond
	// HurryHeartbeatInterval is the cadence of a hurried attempt.
	HurryHeartbeatInterval = 100 * time.Millisecond
	// RetryHeartbeatPause is the pause between a beat that failed for a transient reason and the
	// next one.
	RetryHeartbeatPause = time.Second
	// HurryWindow is how long a hurried attempt beats at HurryHeartbeatInterval.
	HurryWindow = 5 * time.Second
	// MinBeatBudget is the least time a beat sent by the loop may take (the SDK's own bound).
	MinBeatBudget = time.Second
	// SDKHeartbeatThrottle is the SDK heartbeat throttle (worker option
	// MaxHeartbeatThrottleInterval) under which the loop's cadence holds: below every gap above.
	SDKHeartbeatThrottle = 50 * time.Millisecond
	// MaxProgressMessageBytes bounds Progress.Message in heartbeat details:
	// wire.MaxProgressMessageBytes.
	MaxProgressMessageBytes = wire.MaxProgressMessageBytes
)

// Recorder sends an attempt's heartbeats by task token; client.Client implements it.
type Recorder interface {
	RecordActivityHeartbeatWithOptions(ctx context.Context, opts client.RecordActivityHeartbeatOptions) error
}

// sendFunc sends one beat within ctx and returns the server's answer.
type sendFunc func(ctx context.Context, details ...any) error

// heartbeats is the heartbeat loop of one attempt. It owns no goroutine while it waits: a timer
// wakes it when a beat is due, and the beat runs on the timer's goroutine (a held call costs a
// timer, not a parked goroutine and its stack).
type heartbeats struct {
	ctx     context.Context // ends when the attempt ends or stop is called
	cancel  context.CancelFunc
	send    sendFunc
	relay   func(details ...any) // an SDK heartbeat: hands a non-transient answer to the SDK
	plan    beatPlan
	stopped chan struct{} // closed once ended and no beat is in flight

	mu         sync.Mutex
	c          cadence
	timer      *time.Timer     // the next wake-up
	beating    bool            // a beat is in flight
	ended      bool            // stop was called or the attempt ended: no further beat
	missed     bool            // plan.missed was called
	progress   progressWindow  // the latest reports, numbered
	logs       logWindow       // the latest log messages, numbered (logs.go)
	checkpoint json.RawMessage // latest checkpoint (see checkpoint.go), nil until the first
}

// beatPlan is how an attempt's loop beats.
type beatPlan struct {
	interval time.Duration // the idle period
	window   time.Duration // the server's heartbeat window (HeartbeatTimeout); 0: 2 x interval
	// pushed: the namespace pushes cancellation, so a hurry waits PushedCancelGrace first.
	pushed bool
	// missed, if not nil, is called (once, on the timer's goroutine) when a hurry starts beating
	// although cancellation is pushed: the push did not come within PushedCancelGrace.
	missed func()
}

// startHeartbeats starts the loop of the attempt of ctx, whose tool's IdleHeartbeat is idle (0:
// none); stop must be called before the activity returns. Without a.Heartbeats every beat goes
// through the SDK.
func (a *Activities) startHeartbeats(ctx context.Context, info activity.Info, idle time.Duration) *heartbeats {
	sdk := func(details ...any) { activity.RecordHeartbeat(ctx, details...) }
	send := func(_ context.Context, details ...any) error { sdk(details...); return nil }
	if rec := a.Heartbeats; rec != nil {
		send = func(bctx context.Context, details ...any) error {
			return rec.RecordActivityHeartbeatWithOptions(bctx, client.RecordActivityHeartbeatOptions{
				TaskToken:    info.TaskToken,
				Details:      details,
				WorkflowID:   info.WorkflowExecution.ID,
				ActivityType: info.ActivityType.Name,
				WorkflowType: workflowTypeName(info),
				TaskQueue:    info.TaskQueue,
			})
		}
	}
	plan := beatPlan{
		interval: idleInterval(info.HeartbeatTimeout, idle, a.CancellationPushed),
		window:   info.HeartbeatTimeout,
		pushed:   a.CancellationPushed,
	}
	if plan.pushed {
		plan.missed = func() { a.pushMissed(ctx, info) }
	}
	h := startPlannedLoop(ctx, plan, send, sdk)
	h.mu.Lock()
	h.logs.continueFrom(lastLogSeq(ctx)) // a reader's numbers only grow
	h.mu.Unlock()
	return h
}

// pushMissed logs, once per Activities, that a canceled call's attempt was hurried because its
// pushed cancellation had not come within PushedCancelGrace.
func (a *Activities) pushMissed(ctx context.Context, info activity.Info) {
	if a.pushWarned.Swap(true) {
		return
	}
	activity.GetLogger(ctx).Warn("A canceled call's attempt heard no pushed cancellation within "+PushedCancelGrace.String()+
		"; its heartbeats are hurried instead. The server may not send cancel commands (system.enableCancelActivityWorkerCommand, docs/operations.md), "+
		"the worker's client may have worker heartbeats off (client.Options.WorkerHeartbeatInterval < 0), or the server is overloaded. Said once per worker.",
		"workflowId", info.WorkflowExecution.ID)
}

func workflowTypeName(info activity.Info) string {
	if info.WorkflowType == nil {
		return ""
	}
	return info.WorkflowType.Name
}

// idleInterval is the idle period of an attempt whose HeartbeatTimeout is window (0: none), of a
// tool whose IdleHeartbeat is idle (0: none). Where cancellation is pushed a beat only has to
// reach the server within the window: the tool's IdleHeartbeat if shorter than the window (a
// definition changed since the call was scheduled may not be), else half the window, at most
// toolcore.DefaultIdleHeartbeat. Where it is not, a cancellation is heard on a beat: half the
// window, at most FallbackHeartbeatInterval, whatever the tool's IdleHeartbeat.
func idleInterval(window, idle time.Duration, pushed bool) time.Duration {
	switch {
	case !pushed && window <= 0:
		return defaultHeartbeatInterval
	case !pushed:
		return min(window/heartbeatFraction, FallbackHeartbeatInterval)
	case window <= 0 && idle > 0:
		return idle
	case window <= 0:
		return toolcore.DefaultIdleHeartbeat
	case idle > 0 && idle < window:
		return idle
	default:
		return min(window/heartbeatFraction, toolcore.DefaultIdleHeartbeat)
	}
}

// startLoop starts a loop that sends a beat every interval, on progress and when hurried, within
// a window of heartbeatFraction intervals, as where cancellation is not pushed.
func startLoop(ctx context.Context, interval time.Duration, send sendFunc, relay func(details ...any)) *heartbeats {
	return startPlannedLoop(ctx, beatPlan{interval: interval}, send, relay)
}

// startPlannedLoop starts a loop that beats as plan says.
func startPlannedLoop(ctx context.Context, plan beatPlan, send sendFunc, relay func(details ...any)) *heartbeats {
	ctx, cancel := context.WithCancel(ctx)
	window := plan.window
	if window <= 0 {
		window = heartbeatFraction * plan.interval
	}
	h := &heartbeats{
		ctx:     ctx,
		cancel:  cancel,
		send:    send,
		relay:   relay,
		plan:    plan,
		stopped: make(chan struct{}),
		c:       cadence{interval: plan.interval, window: window, started: time.Now()},
	}
	h.mu.Lock()
	h.timer = time.AfterFunc(plan.interval, h.wake)
	h.mu.Unlock()
	context.AfterFunc(ctx, h.end)
	return h
}

// cadence is the loop's schedule state.
type cadence struct {
	interval   time.Duration
	window     time.Duration // the server's heartbeat window: a beat must arrive within it
	started    time.Time     // the attempt's start: the server's heartbeat window opens there
	last       time.Time     // when the last beat was sent, or when it failed; zero before the first
	taken      time.Time     // when the last beat the server took was sent; zero before the first
	pending    bool          // a progress report or checkpoint not yet sent
	reports    uint64        // reports and checkpoints recorded: a beat carries those before it
	retry      bool          // the last beat failed for a transient reason
	hurryFrom  time.Time     // a hurry's first beat comes no sooner (PushedCancelGrace; zero: at once)
	hurryUntil time.Time
}

// base is when the server's heartbeat window last opened.
func (c *cadence) base() time.Time {
	if c.taken.IsZero() {
		return c.started
	}
	return c.taken
}

// next returns when the next beat is due.
func (c *cadence) next(now time.Time) time.Time {
	if c.retry {
		return c.last.Add(RetryHeartbeatPause)
	}
	due := c.base().Add(c.interval)
	if c.pending {
		due = earliest(due, c.last.Add(ProgressHeartbeatGap)) // zero last: at once
	}
	if now.Before(c.hurryUntil) {
		due = earliest(due, latest(c.last.Add(HurryHeartbeatInterval), c.hurryFrom))
	}
	return due
}

// hurried reports whether a beat sent at now is a hurried one.
func (c *cadence) hurried(now time.Time) bool {
	return now.Before(c.hurryUntil) && !now.Before(c.hurryFrom)
}

// deadline bounds a beat sent at now: the server's window after it last opened, and never less
// than MinBeatBudget.
func (c *cadence) deadline(now time.Time) time.Time {
	end := c.base().Add(c.window)
	if floor := now.Add(MinBeatBudget); end.Before(floor) {
		return floor
	}
	return end
}

// record marks a progress report or checkpoint to send.
func (c *cadence) record() {
	c.pending = true
	c.reports++
}

// sent records the outcome of a beat that carried the first carried reports: at is when it was
// sent if the server took it (or answered), when it failed if it failed for a transient reason.
// A report recorded while the beat was in flight is still pending.
func (c *cadence) sent(at time.Time, transient bool, carried uint64) {
	c.last, c.retry = at, transient
	if !transient {
		c.taken = at
		c.pending = c.reports != carried
	}
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// wake runs on the timer's goroutine: it sends a beat if one is due, then sets the timer for the
// next. Beats never overlap: a wake-up during a beat does nothing (the beat reschedules).
func (h *heartbeats) wake() {
	h.mu.Lock()
	if h.ended || h.beating {
		h.mu.Unlock()
		return
	}
	now := time.Now()
	if now.Before(h.c.next(now)) {
		h.schedule(now)
		h.mu.Unlock()
		return
	}
	h.beating = true
	deadline, details, carried := h.c.deadline(now), h.detailsLocked(), h.c.reports
	missed := h.plan.missed != nil && !h.missed && h.c.hurried(now)
	h.missed = h.missed || missed
	h.mu.Unlock()

	if missed {
		h.plan.missed()
	}
	err := h.beat(now, deadline, details)
	transient := err != nil && transientBeatError(err)
	if err != nil && !transient && h.ctx.Err() == nil {
		h.relay(details...) // the server's answer (cancel requested, gone, ...) goes to the SDK
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	h.beating = false
	if h.ended {
		close(h.stopped)
		return
	}
	if end := time.Now(); transient {
		h.c.sent(end, true, carried)
	} else {
		h.c.sent(now, false, carried)
	}
	h.schedule(time.Now())
}

// schedule sets the timer for the next beat; h.mu is held.
func (h *heartbeats) schedule(now time.Time) {
	h.timer.Reset(max(h.c.next(now).Sub(now), 0))
}

// poke records a report or a hurry with change and wakes the loop if the next beat moved
// earlier; it never blocks on a beat in flight (the beat reschedules when it ends).
func (h *heartbeats) poke(change func(c *cadence)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	change(&h.c)
	if !h.ended && !h.beating {
		h.schedule(time.Now())
	}
}

// end stops the loop for good (the attempt's context ended or stop was called); stopped closes
// now, or when the beat in flight returns.
func (h *heartbeats) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	h.ended = true
	h.timer.Stop()
	if !h.beating {
		close(h.stopped)
	}
}

// transientBeatError reports whether a beat failed without an answer from the server about the
// activity: worth sending again while the server's heartbeat window is open.
func transientBeatError(err error) bool {
	switch serviceerror.ToStatus(err).Code() {
	case codes.DeadlineExceeded, codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.Canceled:
		return true
	default:
		return false
	}
}

// detailsLocked returns what a beat carries: the progress window, if any report was made, the
// checkpoint, if any, and the log window, if any message was logged; h.mu is held. Sending no
// details after a report would erase the progress the server shows, so the window is repeated.
func (h *heartbeats) detailsLocked() []any {
	p, cp, logs := h.progress.window(), h.checkpoint, h.logs.window()
	switch {
	case logs != nil:
		return []any{p, cp, logs} // wire.LogDetailsIndex: progress and checkpoint (or nulls) first
	case cp != nil:
		return []any{p, cp} // wire.CheckpointDetails: progress (or null) first, checkpoint second
	case p == nil:
		return nil
	default:
		return []any{*p}
	}
}

// beat sends one heartbeat at now, bounded by deadline. The SDK's client bounds an RPC by half
// the time its context has left (keeping the rest for retries, which it never makes after a
// deadline), so the context gets twice the budget: the RPC gets the whole of it.
func (h *heartbeats) beat(now, deadline time.Time, details []any) error {
	ctx, cancel := context.WithDeadline(h.ctx, now.Add(2*deadline.Sub(now)))
	defer cancel()
	return h.send(ctx, details...)
}

// report is the tool's progress reporter: it numbers the report, puts it in the window and wakes
// the loop without ever blocking the tool.
func (h *heartbeats) report(p toolcore.Progress) {
	d := wire.ProgressDetails(p)
	d.Message = boundMessage(d.Message)
	size := reportSize(d) // outside the lock: a beat's details are taken under it
	h.poke(func(c *cadence) {
		h.progress.addSized(d, size)
		c.record()
	})
}

// continueProgress makes the next report number seq+1 (the previous attempt's last number).
func (h *heartbeats) continueProgress(seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.progress.continueFrom(seq)
}

// latest returns the progress window, nil before the first report: the ExecuteTool result
// carries it, so the reports made since the last beat outlive the attempt's heartbeat details.
func (h *heartbeats) latest() *wire.ProgressWindow {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.progress.window()
}

// hurryUp makes the loop beat every HurryHeartbeatInterval for HurryWindow, without blocking;
// where cancellation is pushed, from PushedCancelGrace on (the push normally ends the attempt
// first, and the loop with it).
func (h *heartbeats) hurryUp() {
	var grace time.Duration
	if h.plan.pushed {
		grace = PushedCancelGrace
	}
	h.poke(func(c *cadence) {
		now := time.Now()
		c.hurryFrom, c.hurryUntil = now.Add(grace), now.Add(grace+HurryWindow)
	})
}

// stop ends the loop and waits for a beat in flight (cut short), so no heartbeat is recorded after
// the attempt returns.
func (h *heartbeats) stop() {
	h.cancel()
	h.end()
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
