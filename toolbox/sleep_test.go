package toolbox

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// fakeTicker is a Config.Ticker that ticks when the test says so.
type fakeTicker struct {
	ticks   chan time.Time
	period  chan time.Duration // receives the period of each ticker created
	stopped chan struct{}      // closed when the ticker is stopped
	once    sync.Once
}

func newFakeTicker() *fakeTicker {
	return &fakeTicker{
		ticks:   make(chan time.Time),
		period:  make(chan time.Duration, 1),
		stopped: make(chan struct{}),
	}
}

func (f *fakeTicker) ticker(d time.Duration) (<-chan time.Time, func()) {
	f.period <- d
	return f.ticks, func() { f.once.Do(func() { close(f.stopped) }) }
}

// waitProgress reads reports until one has completed at least n, and returns it.
func waitProgress(t *testing.T, reports <-chan toolcore.Progress, n int64) toolcore.Progress {
	t.Helper()
	for {
		select {
		case p := <-reports:
			if p.Completed >= n {
				return p
			}
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no progress report", "want completed %d", n)
		}
	}
}

func TestSleepReportsProgressEachSecond(t *testing.T) {
	fake := newFakeTicker()
	reg := newTestRegistry(t, Config{Ticker: fake.ticker})
	reports := make(chan toolcore.Progress, 64)
	call, err := toolcore.NewToolCall("call-sleep", NameSleep, []byte(`{"seconds":3}`))
	require.NoError(t, err)
	done := make(chan toolcore.Result, 1)
	go func() {
		res, err := toolcore.ExecuteWith(context.Background(), reg, call, toolcore.ExecuteOptions{
			OnProgress: func(p toolcore.Progress) { reports <- p },
		})
		assert.NoError(t, err)
		done <- res
	}()
	assert.Equal(t, time.Second, <-fake.period)
	assert.Equal(t, toolcore.Progress{Completed: 0, Total: 3, Message: "slept 0 of 3 seconds"}, waitProgress(t, reports, 0))
	for i := int64(1); i <= 3; i++ {
		fake.ticks <- time.Time{}
		p := waitProgress(t, reports, i)
		assert.Equal(t, int64(3), p.Total)
		assert.Equal(t, i, p.Completed)
	}
	res := <-done
	assert.False(t, res.IsError())
	assert.Equal(t, `{"seconds":3}`, res.Content())
	<-fake.stopped
}

func TestSleepZeroReturnsAtOnce(t *testing.T) {
	fake := newFakeTicker()
	reg := newTestRegistry(t, Config{Ticker: fake.ticker})
	res := run(t, reg, NameSleep, `{"seconds":0}`)
	assert.Equal(t, `{"seconds":0}`, res.Content())
	assert.Empty(t, fake.period, "no ticker for zero seconds")
}

func TestSleepHonoursCancellation(t *testing.T) {
	fake := newFakeTicker()
	reg := newTestRegistry(t, Config{Ticker: fake.ticker})
	reports := make(chan toolcore.Progress, 64)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	call, err := toolcore.NewToolCall("call-sleep", NameSleep, []byte(`{"seconds":3600}`))
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := toolcore.ExecuteWith(ctx, reg, call, toolcore.ExecuteOptions{
			OnProgress: func(p toolcore.Progress) { reports <- p },
		})
		errc <- err
	}()
	waitProgress(t, reports, 0)
	fake.ticks <- time.Time{}
	waitProgress(t, reports, 1)
	stop := errors.New("agent stopped")
	cancel(stop)
	assert.ErrorIs(t, <-errc, stop)
	// The tool itself returns (and stops its ticker) instead of sleeping on.
	select {
	case <-fake.stopped:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "sleep did not stop after cancellation")
	}
}

func TestSleepToolReturnsCause(t *testing.T) {
	fake := newFakeTicker()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop")
	cancel(stop)
	_, err := sleepFor(ctx, fake.ticker, 5)
	assert.ErrorIs(t, err, stop)
}

func TestSleepRejects(t *testing.T) {
	assertRejects(t, newTestRegistry(t, Config{}), NameSleep, []rejectCase{
		{"negative", `{"seconds":-1}`, `"seconds" must be between 0 and 3600`},
		{"too long", `{"seconds":3601}`, `"seconds" must be between 0 and 3600`},
		{"overflow", `{"seconds":1e400}`, `"seconds" must be between 0 and 3600`},
		{"fraction", `{"seconds":1.5}`, `"seconds" must be a whole number of seconds`},
		{"string", `{"seconds":"5"}`, `"seconds" must be a number, not a string`},
		{"missing", `{}`, `"seconds" is required`},
		{"unknown", `{"seconds":1,"ms":5}`, `unknown argument "ms"; allowed: "seconds"`},
	})
}

func TestSleepAcceptsIntegralForms(t *testing.T) {
	fake := newFakeTicker()
	reg := newTestRegistry(t, Config{Ticker: fake.ticker})
	for _, give := range []string{`{"seconds":0.0}`, `{"seconds":0e5}`, `{"seconds":-0}`} {
		res := run(t, reg, NameSleep, give)
		assert.Equal(t, `{"seconds":0}`, res.Content(), give)
	}
}
