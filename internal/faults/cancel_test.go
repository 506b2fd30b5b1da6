package faults_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// cancelPoint is where in a call's life the storm cancels it.
type cancelPoint string

const (
	// cancelAtOnce: Client.Cancel right after Start returns, usually before validation.
	cancelAtOnce cancelPoint = "at-once"
	// cancelJitter: Client.Cancel after a random delay of up to 1.5 s (fault injection timing,
	// not a wait): anywhere from before validation to after completion.
	cancelJitter cancelPoint = "jitter"
	// cancelRunning: Client.Cancel once the tool runs (it waits on a gate that never opens).
	cancelRunning cancelPoint = "running"
	// cancelReturned: Client.Cancel as soon as the tool has committed its effect and returns: a
	// race with the completion.
	cancelReturned cancelPoint = "returned"
	// cancelAfterResult: Client.Cancel after the result arrived: the result stays.
	cancelAfterResult cancelPoint = "after-result"
	// cancelExecuteRunning: the agent's context of Client.Execute ends once the tool runs.
	cancelExecuteRunning cancelPoint = "execute-running"
	// cancelExecuteJitter: the agent's context of Client.Execute ends after a random delay.
	cancelExecuteJitter cancelPoint = "execute-jitter"
)

var cancelPoints = []cancelPoint{cancelAtOnce, cancelJitter, cancelRunning, cancelReturned, cancelAfterResult, cancelExecuteRunning, cancelExecuteJitter}

// TestCancellationStorm cancels many calls at random points. Each ends canceled or with one
// result, never both, never hung; a canceled call's tool has returned (every run has its exit)
// and an Unsafe tool ran at most once.
func TestCancellationStorm(t *testing.T) {
	sz := sizes()
	f := newFixture(t, sharedDev(t))
	cl, _ := f.client(t)
	f.startWorker(t, false)
	f.startWorker(t, false)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	began := time.Now()
	fig := figures{Scenario: "cancellation-storm", Detail: map[string]int{}}

	type storm struct {
		call      toolcore.ToolCall
		point     cancelPoint
		delay     time.Duration
		res       toolcore.Result // what Execute returned (execute points)
		err       error
		runErr    error // a failure of the storm itself
		cancelErr error // what Cancel returned for cancelAfterResult
	}
	tools := []string{faults.ToolUnsafe, faults.ToolIdempotent, faults.ToolReadOnly}
	storms := make([]*storm, sz.cancelCalls)
	for i := range storms {
		point := cancelPoints[i%len(cancelPoints)]
		a := faults.Args{}
		if point == cancelRunning || point == cancelExecuteRunning {
			a.Gate = "never"
		}
		tool := tools[(i/len(cancelPoints))%len(tools)]
		storms[i] = &storm{
			call:  call(t, fmt.Sprintf("cs-%d-%s-%s", i, point, tool), tool, a),
			point: point,
			delay: time.Duration(rng.Int64N(int64(1500 * time.Millisecond))),
		}
	}

	ran := func(id string) func(faults.Tally) bool {
		return func(tl faults.Tally) bool { return tl.Of(id, faults.KindRun) > 0 }
	}
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for _, s := range storms {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
			defer cancel()
			id := s.call.ID()
			switch s.point {
			case cancelExecuteRunning, cancelExecuteJitter:
				ectx, ecancel := context.WithCancel(ctx)
				defer ecancel()
				if s.point == cancelExecuteJitter {
					time.AfterFunc(s.delay, ecancel)
				} else {
					go func() {
						if f.watch.waitErr(outcomeTimeout, ran(id)) == nil {
							ecancel()
						}
					}()
				}
				s.res, s.err = cl.Execute(ectx, s.call)
				return
			}
			if _, err := cl.Start(ctx, s.call); err != nil {
				s.runErr = err
				return
			}
			switch s.point {
			case cancelJitter:
				timer := time.NewTimer(s.delay)
				defer timer.Stop()
				<-timer.C
			case cancelRunning:
				s.runErr = f.watch.waitErr(outcomeTimeout, ran(id))
			case cancelReturned:
				s.runErr = f.watch.waitErr(outcomeTimeout, func(tl faults.Tally) bool { return tl.Of(id, faults.KindEffect) > 0 })
			case cancelAfterResult:
				if _, err := cl.Result(ctx, id); err != nil {
					s.runErr = err
					return
				}
				// The server accepts a cancel request for a closed workflow as a no-op, so
				// Cancel may return nil here (reported to the client owner); either way the
				// recorded result must stay.
				s.cancelErr = cl.Cancel(ctx, id)
				if s.cancelErr != nil && !errors.Is(s.cancelErr, tgclient.ErrCallClosed) {
					s.runErr = fmt.Errorf("cancel after the result: %w", s.cancelErr)
				}
				return
			}
			if err := cl.Cancel(ctx, id); err != nil && !errors.Is(err, tgclient.ErrCallClosed) {
				s.runErr = errors.Join(s.runErr, err)
			}
		})
	}
	wg.Wait()
	fig.Faults = len(storms)

	calls := make([]toolcore.ToolCall, len(storms))
	for i, s := range storms {
		require.NoError(t, s.runErr, s.call.ID())
		calls[i] = s.call
	}
	got := results(cl, calls)
	tally := faults.Count(f.watch.snapshot(t))
	fig.Calls = len(calls)
	for i, o := range got {
		s := storms[i]
		id, tool := o.call.ID(), o.call.Name()
		runs, effects, exits := tally.Of(id, faults.KindRun), tally.Of(id, faults.KindEffect), tally.Of(id, faults.KindExit)
		if o.hung {
			fig.Hung++
			t.Errorf("%s: no outcome", id)
			continue
		}
		executePoint := s.point == cancelExecuteRunning || s.point == cancelExecuteJitter
		if executePoint && errors.Is(o.err, wire.ErrNotFound) {
			// Execute's context ended before its start reached the server: nothing started,
			// and Execute said so by returning the cancellation.
			fig.Detail["canceledBeforeStart"]++
			assert.ErrorIs(t, s.err, context.Canceled, id)
			assert.Zero(t, runs, "%s: never started, yet its tool ran", id)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		st, err := cl.Status(ctx, id)
		cancel()
		require.NoError(t, err, id)
		switch o.kind {
		case faults.TerminalCanceled:
			fig.Detail["canceled"]++
			assert.NotEqual(t, cancelAfterResult, s.point, "%s: canceled after its result", id)
			// Never both: a canceled call has no result anywhere.
			assert.Equal(t, tgclient.Canceled, st.State, id)
			assert.Nil(t, st.Result, "%s: canceled with a result", id)
			if exits != runs {
				t.Errorf("%s: canceled while its tool still ran (%d runs, %d exits)", id, runs, exits)
			}
			switch {
			case runs == 0:
				fig.Detail["canceledBeforeExecution"]++
			case effects == 0:
				fig.Detail["canceledDuringExecution"]++
			default:
				fig.Detail["canceledAfterToolReturned"]++
			}
			if !s.res.IsZero() {
				t.Errorf("%s: Execute returned a result for a canceled call", id)
			}
		case faults.TerminalResult:
			fig.Detail["completed"]++
			assert.Equal(t, tgclient.Completed, st.State, id)
			if assert.NotNil(t, st.Result, id) {
				assert.Equal(t, o.res, *st.Result, id)
			}
			if !linked(o.res, o.call) {
				fig.Lost++
				t.Errorf("%s: result not linked: %+v", id, o.res)
			}
			_, ok := effectOutput(o.res)
			assert.True(t, ok, "%s: %s", id, o.res.Content())
			if ok && effects != 1 {
				fig.Duplicated++
				t.Errorf("%s: success with %d effects", id, effects)
			}
			if !s.res.IsZero() {
				assert.Equal(t, o.res, s.res, "%s: Execute's result is the recorded one", id)
			}
			fig.Detail["completed-"+string(s.point)]++
			if s.point == cancelAfterResult && s.cancelErr == nil {
				fig.Detail["cancelOfClosedCallReturnedNil"]++
			}
			assert.NotEqual(t, cancelRunning, s.point, "%s: its gate never opens", id)
			assert.NotEqual(t, cancelExecuteRunning, s.point, "%s: its gate never opens", id)
		default:
			fig.Lost++
			t.Errorf("%s: want canceled or a result, got %v (%v)", id, o.kind, o.err)
		}
		if executePoint && s.err != nil && !errors.Is(s.err, context.Canceled) {
			// Execute returns the recorded result or the cause of its ctx, never anything else.
			t.Errorf("%s: Execute: %v", id, s.err)
		}
		if (tool == faults.ToolUnsafe && runs > 1) || effects > 1 {
			fig.Duplicated++
			t.Errorf("%s: %d runs, %d effects", id, runs, effects)
		}
	}
	report(t, fig, began)
}
