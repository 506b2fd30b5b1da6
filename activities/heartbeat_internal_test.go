package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// beatLog records the heartbeats of a loop under test (the SDK's own throttling is not under
// test). Its send answers with the errors queued in answers, then with nil.
type beatLog struct {
	mu      sync.Mutex
	beats   [][]any
	answers []error
	relays  [][]any
	next    chan []any // every beat sent, for tests that wait on one
	relayed chan []any // every relayed beat
}

func newBeatLog(answers ...error) *beatLog {
	return &beatLog{answers: answers, next: make(chan []any, 1024), relayed: make(chan []any, 1024)}
}

func (l *beatLog) send(_ context.Context, details ...any) error {
	l.mu.Lock()
	l.beats = append(l.beats, details)
	var err error
	if len(l.answers) > 0 {
		err, l.answers = l.answers[0], l.answers[1:]
	}
	l.mu.Unlock()
	select {
	case l.next <- details:
	default: // a test that stopped reading must not block the loop
	}
	return err
}

func (l *beatLog) relay(details ...any) {
	l.mu.Lock()
	l.relays = append(l.relays, details)
	l.mu.Unlock()
	select {
	case l.relayed <- details:
	default:
	}
}

func (l *beatLog) relayCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.relays)
}

func (l *beatLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.beats)
}

func TestHeartbeatLoopTicksWithoutProgress(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Millisecond, log.send, log.relay)
	for range 3 {
		assert.Empty(t, <-log.next, "no progress, no details")
	}
	h.stop()
	n := log.count()
	h.stop() // idempotent
	assert.Equal(t, n, log.count(), "no heartbeat after stop returned")
}

func TestHeartbeatLoopBeatsAtOnceOnProgress(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Hour, log.send, log.relay) // the ticker never fires
	defer h.stop()
	h.report(toolcore.Progress{Completed: 1, Total: 2, Message: "half"})
	assert.Equal(t, []any{numbered(1, wire.ProgressDetails{Completed: 1, Total: 2, Message: "half"})}, <-log.next)
}

// numbered is the window whose latest report is latest, numbered seq, after earlier.
func numbered(seq int64, latest wire.ProgressDetails, earlier ...wire.ProgressDetails) wire.ProgressWindow {
	return wire.ProgressWindow{ProgressDetails: latest, Seq: seq, Earlier: earlier}
}

// upTo is the window of reports 1..n of n (Completed k, Total n).
func upTo(n int64) wire.ProgressWindow {
	var earlier []wire.ProgressDetails
	for k := int64(1); k < n; k++ {
		earlier = append(earlier, wire.ProgressDetails{Completed: k, Total: n})
	}
	return numbered(n, wire.ProgressDetails{Completed: n, Total: n}, earlier...)
}

func TestHeartbeatLoopRepeatsLatestProgress(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Millisecond, log.send, log.relay)
	for i := range 100 { // the loop never blocks the tool; a beat carries the window of all 100
		h.report(toolcore.Progress{Completed: int64(i + 1), Total: 100})
	}
	want := []any{upTo(100)}
	for got := <-log.next; ; got = <-log.next {
		if assert.ObjectsAreEqual(want, got) {
			break
		}
	}
	// Later ticks repeat the window: an empty heartbeat would erase the shown progress.
	assert.Equal(t, want, <-log.next)
	h.stop()
}

func TestHeartbeatLoopEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	log := newBeatLog()
	h := startLoop(ctx, time.Hour, log.send, log.relay)
	cancel()
	<-h.stopped
	h.stop()
	h.report(toolcore.Progress{Completed: 1}) // never blocks, even with no loop
	assert.Zero(t, log.count())
}

func TestIdleInterval(t *testing.T) {
	const s, m = time.Second, time.Minute
	tests := []struct {
		name         string
		window, idle time.Duration
		pushed       bool
		want         time.Duration
	}{
		{name: "not pushed: half the timeout", window: 10 * s, idle: 5 * s, want: 5 * s},
		{name: "not pushed: a short timeout", window: 4 * s, idle: 2 * s, want: 2 * s},
		{name: "not pushed: at most 5 s", window: m, idle: 30 * s, want: FallbackHeartbeatInterval},
		{name: "not pushed: the tool's IdleHeartbeat does not count", window: 20 * m, idle: 10 * m, want: FallbackHeartbeatInterval},
		{name: "not pushed: no timeout", want: defaultHeartbeatInterval},
		{name: "pushed: the default tool beats every 30 s", window: m, idle: 30 * s, pushed: true, want: 30 * s},
		{name: "pushed: the tool's IdleHeartbeat", window: 20 * m, idle: 10 * m, pushed: true, want: 10 * m},
		{name: "pushed: a short timeout", window: 10 * s, idle: 5 * s, pushed: true, want: 5 * s},
		{name: "pushed: no IdleHeartbeat, half the timeout", window: 10 * s, pushed: true, want: 5 * s},
		{name: "pushed: no IdleHeartbeat, at most 30 s", window: 10 * m, pushed: true, want: 30 * s},
		{name: "pushed: an IdleHeartbeat past the scheduled timeout", window: 10 * s, idle: 30 * s, pushed: true, want: 5 * s},
		{name: "pushed: no timeout", pushed: true, want: 30 * s},
		{name: "pushed: no timeout, the tool's IdleHeartbeat", idle: 10 * m, pushed: true, want: 10 * m},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, idleInterval(tt.window, tt.idle, tt.pushed))
		})
	}
}

func TestBoundMessage(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "short", give: "50%", want: "50%"},
		{name: "invalid UTF-8", give: "a\xffb", want: "a\uFFFDb"},
		{name: "long ASCII", give: strings.Repeat("x", 5000), want: strings.Repeat("x", MaxProgressMessageBytes)},
		{name: "long, cut inside a rune", give: "x" + strings.Repeat("é", 1000), want: "x" + strings.Repeat("é", (MaxProgressMessageBytes-1)/2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := boundMessage(tt.give)
			require.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

func TestCadence(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	c := cadence{interval: 3 * time.Second, window: 6 * time.Second, started: start}
	assert.Equal(t, at(3*time.Second), c.next(start), "idle: the interval after the start")
	assert.Equal(t, at(6*time.Second), c.deadline(start), "a beat may take until the window closes")

	c.record()
	assert.False(t, c.next(start).After(start), "the first report: at once")

	c.sent(at(time.Second), false, c.reports)
	assert.False(t, c.pending, "a beat the server took carries the report")
	assert.Equal(t, at(4*time.Second), c.next(at(time.Second)), "idle: the interval after the last beat")
	assert.Equal(t, at(7*time.Second), c.deadline(at(time.Second)), "the window reopens with each beat taken")
	c.record()
	assert.Equal(t, at(time.Second+ProgressHeartbeatGap), c.next(at(time.Second)), "a later report: one gap after the last beat")
	carried := c.reports
	c.record() // recorded while the beat carrying the earlier ones was in flight
	c.sent(at(time.Second), false, carried)
	assert.True(t, c.pending, "a report made during a beat waits for the next one")
	assert.Equal(t, at(time.Second+ProgressHeartbeatGap), c.next(at(time.Second)), "one gap after the beat")

	c.pending = false
	c.hurryUntil = at(time.Second + HurryWindow)
	assert.Equal(t, at(time.Second+HurryHeartbeatInterval), c.next(at(time.Second)), "hurried")
	assert.Equal(t, at(4*time.Second), c.next(at(time.Second+HurryWindow)), "the hurry ends after its window")

	c.pending, c.hurryUntil = true, time.Time{}
	c.sent(at(4*time.Second), true, c.reports) // the idle beat failed for a transient reason at 4 s
	assert.True(t, c.pending, "a failed beat carried nothing")
	assert.Equal(t, at(4*time.Second+RetryHeartbeatPause), c.next(at(4*time.Second)), "sent again after a pause")
	assert.Equal(t, at(7*time.Second), c.deadline(at(4*time.Second)), "within the window the last beat taken opened")
	assert.Equal(t, at(9*time.Second+MinBeatBudget), c.deadline(at(9*time.Second)), "never less than the least budget")
	c.sent(at(5*time.Second), false, c.reports)
	assert.Equal(t, at(8*time.Second), c.next(at(5*time.Second)), "taken: back to the idle cadence")

	// Pushed cancellation: idle beats for liveness only, within a window twice as long; a hurry
	// waits for the push first.
	c = cadence{interval: 30 * time.Second, window: time.Minute, started: start}
	assert.Equal(t, at(30*time.Second), c.next(start))
	assert.Equal(t, at(time.Minute), c.deadline(at(30*time.Second)), "a beat may take until the window closes")
	c.hurryFrom, c.hurryUntil = at(PushedCancelGrace), at(PushedCancelGrace+HurryWindow)
	assert.Equal(t, at(PushedCancelGrace), c.next(start), "hurried only after the grace")
	assert.False(t, c.hurried(at(PushedCancelGrace-time.Millisecond)))
	assert.True(t, c.hurried(at(PushedCancelGrace)))
	c.sent(at(PushedCancelGrace), false, c.reports)
	assert.Equal(t, at(PushedCancelGrace+HurryHeartbeatInterval), c.next(at(PushedCancelGrace)), "then every hurry interval")
	assert.False(t, c.hurried(at(PushedCancelGrace+HurryWindow)), "until the window ends")
}

// TestReportDuringABeatGoesNext: a report made while a beat is in flight goes out one gap after
// that beat, not at the next idle beat (an hour here).
func TestReportDuringABeatGoesNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inFlight, release := make(chan struct{}), make(chan struct{})
		log := newBeatLog()
		send := func(ctx context.Context, details ...any) error {
			if log.count() == 0 {
				close(inFlight)
				<-release
			}
			return log.send(ctx, details...)
		}
		h := startLoop(context.Background(), time.Hour, send, log.relay)
		defer h.stop()
		r := func(k int64) wire.ProgressDetails { return wire.ProgressDetails{Completed: k, Total: 2} }
		h.report(toolcore.Progress{Completed: 1, Total: 2})
		<-inFlight
		h.report(toolcore.Progress{Completed: 2, Total: 2})
		close(release)
		advance(ProgressHeartbeatGap + ProgressHeartbeatGap/2)
		require.Equal(t, 2, log.count())
		assert.Equal(t, []any{numbered(1, r(1))}, <-log.next)
		assert.Equal(t, []any{numbered(2, r(2), r(1))}, <-log.next, "the report made during the first beat")
	})
}

func TestHeartbeatLoopRetriesTransientFailures(t *testing.T) {
	log := newBeatLog(serviceerror.NewDeadlineExceeded("heartbeat took too long"))
	h := startLoop(context.Background(), time.Hour, log.send, log.relay) // idle beats never come
	defer h.stop()
	h.report(toolcore.Progress{Completed: 1, Total: 2})
	want := []any{numbered(1, wire.ProgressDetails{Completed: 1, Total: 2})}
	assert.Equal(t, want, <-log.next, "the beat that fails")
	assert.Equal(t, want, <-log.next, "sent again after RetryHeartbeatPause, the same report")
	h.stop()
	assert.Zero(t, log.relayCount(), "a transient failure ends nothing: no relay to the SDK")
}

func TestTransientBeatError(t *testing.T) {
	for _, err := range []error{context.DeadlineExceeded, serviceerror.NewDeadlineExceeded("late"),
		serviceerror.NewUnavailable("restarting"), serviceerror.NewResourceExhausted(0, "busy")} {
		assert.True(t, transientBeatError(err), "%v", err)
	}
	for _, err := range []error{temporal.NewCanceledError(), serviceerror.NewNotFound("gone"),
		serviceerror.NewInvalidArgument("too large")} {
		assert.False(t, transientBeatError(err), "%v", err)
	}
}

func TestHeartbeatLoopRelaysTheServersAnswer(t *testing.T) {
	for _, answer := range []error{temporal.NewCanceledError(), serviceerror.NewNotFound("activity gone")} {
		t.Run(answer.Error(), func(t *testing.T) {
			log := newBeatLog(answer)
			h := startLoop(context.Background(), time.Hour, log.send, log.relay)
			defer h.stop()
			h.report(toolcore.Progress{Completed: 1, Total: 2})
			want := []any{numbered(1, wire.ProgressDetails{Completed: 1, Total: 2})}
			assert.Equal(t, want, <-log.next)
			assert.Equal(t, want, <-log.relayed, "the SDK hears the answer with the same details")
		})
	}
}

func TestHeartbeatLoopStopCutsABeatInFlight(t *testing.T) {
	entered := make(chan struct{})
	send := func(ctx context.Context, _ ...any) error {
		close(entered)
		<-ctx.Done() // a server that never answers
		return ctx.Err()
	}
	h := startLoop(context.Background(), time.Hour, send, func(...any) { t.Error("nothing to relay") })
	h.report(toolcore.Progress{Completed: 1})
	<-entered
	h.stop() // returns: the attempt's end never waits for a heartbeat
}

func TestAttemptsHurryBeatsTheRunningAttempt(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Hour, log.send, log.relay) // idle beats never come
	attempts := NewAttempts()
	remove := attempts.add("toolcall-1", h)
	assert.Equal(t, 1, attempts.Running())
	attempts.Hurry("toolcall-2") // another call: nothing
	attempts.Hurry("toolcall-1")
	for range 3 { // hurried: beat after beat without progress or ticks
		assert.Empty(t, <-log.next)
	}
	h.stop()
	remove()
	assert.Zero(t, attempts.Running())
	attempts.Hurry("toolcall-1") // gone: nothing, no panic

	var none *Attempts
	none.Hurry("toolcall-1")
	none.add("toolcall-1", h)()
	assert.Zero(t, none.Running())
}

// TestPushedHurryWaitsForThePush: where cancellation is pushed, a hurry sends nothing during the
// grace (the push ends the attempt first: here the context ends), and no missed push is told.
func TestPushedHurryWaitsForThePush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, pushed := context.WithCancel(context.Background())
		log := newBeatLog()
		missed := 0
		h := startPlannedLoop(ctx, beatPlan{interval: time.Hour, window: 2 * time.Hour, pushed: true, missed: func() { missed++ }}, log.send, log.relay)
		h.hurryUp()
		advance(PushedCancelGrace / 2)
		pushed() // the pushed cancellation ends the attempt's context
		synctest.Wait()
		advance(PushedCancelGrace + HurryWindow)
		h.stop()
		assert.Zero(t, log.count(), "no heartbeat: the push came within the grace")
		assert.Zero(t, missed)
	})
}

// TestPushedHurryWhenThePushMisses: a push that does not come within the grace leaves the
// attempt to the hurried heartbeats (whose response carries the cancellation), and the loop
// tells of the missed push once.
func TestPushedHurryWhenThePushMisses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := newBeatLog()
		missed := 0
		h := startPlannedLoop(context.Background(), beatPlan{interval: time.Hour, window: 2 * time.Hour, pushed: true, missed: func() { missed++ }}, log.send, log.relay)
		h.hurryUp()
		advance(PushedCancelGrace - time.Millisecond)
		assert.Zero(t, log.count(), "nothing during the grace")
		advance(time.Millisecond + 3*HurryHeartbeatInterval + HurryHeartbeatInterval/2)
		assert.Equal(t, 4, log.count(), "hurried after the grace: at once, then every hurry interval")
		h.stop()
		assert.Equal(t, 1, missed, "the missed push is told once")
	})
}

// advance moves the fake clock of the synctest bubble it runs in by d and returns once every
// goroutine of the bubble is blocked again: no wall time passes and nothing is waited for by
// time. It is the one way synctest offers to move its clock (a sleep of the bubble's root).
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// countingRecorder counts the heartbeats sent through the worker's client.
type countingRecorder struct {
	mu    sync.Mutex
	beats int
}

func (r *countingRecorder) RecordActivityHeartbeatWithOptions(context.Context, client.RecordActivityHeartbeatOptions) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.beats++
	return nil
}

func (r *countingRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.beats
}

// TestIdleHeartbeatsPerMinute counts the heartbeats an idle held attempt sends in ten minutes
// (on a fake clock): what a tool's options say, 2 a minute by default where cancellation is
// pushed (issue 27 item 4), 12 a minute where it is not, as before.
func TestIdleHeartbeatsPerMinute(t *testing.T) {
	const held = 10*time.Minute - time.Second // the beat due at 10 min is not counted
	defaults := mustOptions(t, toolcore.Options{})
	tests := []struct {
		name   string
		opts   toolcore.Options
		pushed bool
		want   int
	}{
		{name: "pushed, default options", opts: defaults, pushed: true, want: 19}, // every 30 s
		{name: "not pushed, default options", opts: defaults, want: 119},          // every 5 s
		{name: "pushed, HeartbeatTimeout 10 s", opts: mustOptions(t, toolcore.Options{HeartbeatTimeout: 10 * time.Second}), pushed: true, want: 119},
		{name: "pushed, IdleHeartbeat 10 min", opts: mustOptions(t, toolcore.Options{HeartbeatTimeout: 20 * time.Minute, IdleHeartbeat: 10 * time.Minute}), pushed: true, want: 0},
		{name: "pushed, IdleHeartbeat 1 min", opts: mustOptions(t, toolcore.Options{HeartbeatTimeout: 2 * time.Minute, IdleHeartbeat: time.Minute}), pushed: true, want: 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &countingRecorder{}
				a := &Activities{Heartbeats: rec, CancellationPushed: tt.pushed}
				h := a.startHeartbeats(context.Background(), activity.Info{HeartbeatTimeout: tt.opts.HeartbeatTimeout}, tt.opts.IdleHeartbeat)
				advance(held)
				assert.Equal(t, tt.want, rec.count())
				h.stop()
			})
		})
	}
}

// mustOptions returns opts with toolcore's defaults applied, as a defined tool has them.
func mustOptions(t *testing.T, opts toolcore.Options) toolcore.Options {
	t.Helper()
	tool, err := toolcore.Define(toolcore.Definition[struct{}]{
		Name: "held", Description: "A held tool.", Options: opts,
		Execute: func(context.Context, struct{}) (any, error) { return nil, nil },
	})
	require.NoError(t, err)
	return tool.Options()
}

func TestHeartbeatLoopSpacesProgressBeats(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Hour, log.send, log.relay)
	defer h.stop()
	h.report(toolcore.Progress{Completed: 1, Total: 3})
	r := func(k int64) wire.ProgressDetails { return wire.ProgressDetails{Completed: k, Total: 3} }
	assert.Equal(t, []any{numbered(1, r(1))}, <-log.next, "the first report at once")
	h.report(toolcore.Progress{Completed: 2, Total: 3})
	h.report(toolcore.Progress{Completed: 3, Total: 3})
	// Within the gap the reports wait: the next beat carries the window with both (the cadence
	// itself is TestCadence's).
	want := []any{numbered(3, r(3), r(1), r(2))}
	got := <-log.next
	if !assert.ObjectsAreEqual(want, got) { // report 2 may have gone out alone if the test stalled
		require.Equal(t, []any{numbered(2, r(2), r(1))}, got, "only a report, in order")
		assert.Equal(t, want, <-log.next)
	}
}

// TestExecuteToolBeatsAtTheToolsIdleHeartbeat: ExecuteTool's loop idles at the tool's
// IdleHeartbeat where cancellation is pushed, and at the fallback where it is not (the activity
// test environment schedules without a HeartbeatTimeout).
func TestExecuteToolBeatsAtTheToolsIdleHeartbeat(t *testing.T) {
	for _, pushed := range []bool{true, false} {
		t.Run(fmt.Sprintf("pushed=%v", pushed), func(t *testing.T) {
			attempts := NewAttempts()
			seen := make(chan time.Duration, 1)
			held := toolcore.MustDefine(toolcore.Definition[struct{}]{
				Name: "held", Description: "A held tool.",
				Options: toolcore.Options{HeartbeatTimeout: 20 * time.Minute, IdleHeartbeat: 7 * time.Minute},
				Execute: func(context.Context, struct{}) (any, error) {
					attempts.mu.Lock()
					defer attempts.mu.Unlock()
					for _, h := range attempts.running {
						h.mu.Lock()
						seen <- h.c.interval
						h.mu.Unlock()
					}
					return "ok", nil
				},
			})
			reg, err := toolcore.NewRegistry(held)
			require.NoError(t, err)
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			(&Activities{Registry: reg, Attempts: attempts, CancellationPushed: pushed}).Register(env)
			_, err = env.ExecuteActivity(wire.ExecuteToolName, ExecuteToolInput{ToolCallID: "call-1", ToolName: "held",
				Accepted: json.RawMessage(`{}`), IdempotencyKey: "toolcall-call-1"})
			require.NoError(t, err)
			want := defaultHeartbeatInterval
			if pushed {
				want = 7 * time.Minute
			}
			assert.Equal(t, want, <-seen)
		})
	}
}
