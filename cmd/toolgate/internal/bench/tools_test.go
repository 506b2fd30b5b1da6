package bench

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
)

func TestBenchTools(t *testing.T) {
	h := newHold()
	h.release() // sleep returns at once
	reg, err := registry(h, newTickLog(), time.Minute)
	require.NoError(t, err)
	tests := []struct {
		name      string
		tool      string
		wantError bool
	}{
		{name: "noop succeeds", tool: toolNoop},
		{name: "fail is an error result", tool: toolFail, wantError: true},
		{name: "released sleep succeeds", tool: toolSleep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := toolcore.NewToolCall("c1", tt.tool, []byte("{}"))
			require.NoError(t, err)
			res, err := toolcore.Execute(context.Background(), reg, call)
			require.NoError(t, err)
			assert.Equal(t, tt.wantError, res.IsError(), res.Content())
		})
	}
}

func TestHold(t *testing.T) {
	h := newHold()
	h.expect(3)
	ctx := context.Background()
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- h.wait(ctx) }()
	}
	<-h.reached
	assert.Equal(t, 3, h.count())
	h.release()
	for range 3 {
		require.NoError(t, <-errs)
	}
	running, lost := h.counts()
	assert.Equal(t, 0, running)
	assert.Equal(t, 0, lost, "released calls are not lost")
}

func TestHoldExpectAfterArrivals(t *testing.T) {
	h := newHold()
	ctx, cancel := context.WithCancelCause(context.Background())
	errs := make(chan error, 1)
	go func() { errs <- h.wait(ctx) }()
	cause := errors.New("stop")
	for h.count() != 1 {
		select {
		case err := <-errs:
			t.Fatalf("wait returned early: %v", err)
		default:
		}
		runtime.Gosched()
	}
	h.expect(1)
	<-h.reached // already met: closed by expect
	cancel(cause)
	assert.ErrorIs(t, <-errs, cause)
	_, lost := h.counts()
	assert.Equal(t, 1, lost, "a call whose context ended before release is lost")
}

func TestBareActivity(t *testing.T) {
	out, err := bareActivity(context.Background(), "noop")
	require.NoError(t, err)
	assert.Equal(t, "noop", out)

	_, err = bareActivity(context.Background(), bareFail)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.True(t, appErr.NonRetryable())
}
