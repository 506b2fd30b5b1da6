package activities

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// beatLog records the heartbeats of a loop under test (the SDK's own throttling is not under test).
type beatLog struct {
	mu    sync.Mutex
	beats [][]any
	next  chan []any // every beat, for tests that wait on one
}

func newBeatLog() *beatLog { return &beatLog{next: make(chan []any, 1024)} }

func (l *beatLog) record(details ...any) {
	l.mu.Lock()
	l.beats = append(l.beats, details)
	l.mu.Unlock()
	select {
	case l.next <- details:
	default: // a test that stopped reading must not block the loop
	}
}

func (l *beatLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.beats)
}

func TestHeartbeatLoopTicksWithoutProgress(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Millisecond, log.record)
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
	h := startLoop(context.Background(), time.Hour, log.record) // the ticker never fires
	defer h.stop()
	h.report(toolcore.Progress{Completed: 1, Total: 2, Message: "half"})
	assert.Equal(t, []any{wire.ProgressDetails{Completed: 1, Total: 2, Message: "half"}}, <-log.next)
}

func TestHeartbeatLoopRepeatsLatestProgress(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Millisecond, log.record)
	for i := range 100 { // reports coalesce: the loop sends the latest, never blocks the tool
		h.report(toolcore.Progress{Completed: int64(i + 1), Total: 100})
	}
	want := []any{wire.ProgressDetails{Completed: 100, Total: 100}}
	for got := <-log.next; ; got = <-log.next {
		if assert.ObjectsAreEqual(want, got) {
			break
		}
	}
	// Later ticks repeat the latest report: an empty heartbeat would erase the shown progress.
	assert.Equal(t, want, <-log.next)
	h.stop()
}

func TestHeartbeatLoopEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	log := newBeatLog()
	h := startLoop(ctx, time.Hour, log.record)
	cancel()
	<-h.stopped
	h.stop()
	h.report(toolcore.Progress{Completed: 1}) // never blocks, even with no loop
	assert.Zero(t, log.count())
}

func TestHeartbeatInterval(t *testing.T) {
	tests := []struct {
		name string
		give time.Duration
		want time.Duration
	}{
		{name: "a third of the timeout", give: 9 * time.Second, want: 3 * time.Second},
		{name: "no timeout", give: 0, want: defaultHeartbeatInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, heartbeatInterval(tt.give))
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
	c := cadence{interval: 3 * time.Second, started: start}
	assert.Equal(t, at(3*time.Second), c.next(start), "idle: the interval after the start")

	c.pending = true
	assert.False(t, c.next(start).After(start), "the first report: at once")

	c.last, c.pending = at(time.Second), false
	assert.Equal(t, at(4*time.Second), c.next(at(time.Second)), "idle: the interval after the last beat")
	c.pending = true
	assert.Equal(t, at(time.Second+ProgressHeartbeatGap), c.next(at(time.Second)), "a later report: one gap after the last beat")

	c.pending = false
	c.hurryUntil = at(time.Second + HurryWindow)
	assert.Equal(t, at(time.Second+HurryHeartbeatInterval), c.next(at(time.Second)), "hurried")
	assert.Equal(t, at(4*time.Second), c.next(at(time.Second+HurryWindow)), "the hurry ends after its window")
}

func TestAttemptsHurryBeatsTheRunningAttempt(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Hour, log.record) // idle beats never come
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

func TestHeartbeatLoopSpacesProgressBeats(t *testing.T) {
	log := newBeatLog()
	h := startLoop(context.Background(), time.Hour, log.record)
	defer h.stop()
	h.report(toolcore.Progress{Completed: 1, Total: 3})
	assert.Equal(t, []any{wire.ProgressDetails{Completed: 1, Total: 3}}, <-log.next, "the first report at once")
	h.report(toolcore.Progress{Completed: 2, Total: 3})
	h.report(toolcore.Progress{Completed: 3, Total: 3})
	// Within the gap the reports coalesce: the next beat carries the latest (the cadence itself
	// is TestCadence's).
	want := []any{wire.ProgressDetails{Completed: 3, Total: 3}}
	got := <-log.next
	if !assert.ObjectsAreEqual(want, got) { // report 2 may have gone out alone if the test stalled
		require.Equal(t, []any{wire.ProgressDetails{Completed: 2, Total: 3}}, got, "only a report, in order")
		assert.Equal(t, want, <-log.next)
	}
}
