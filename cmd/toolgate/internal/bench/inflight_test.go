package bench

import (
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
)

func TestStartRetryingRetriesOnlyTheServersDeadline(t *testing.T) {
	answers := func(errs ...error) (func() error, *int) {
		n := 0
		return func() error {
			n++
			if n <= len(errs) {
				return errs[n-1]
			}
			return nil
		}, &n
	}
	start, n := answers(context.DeadlineExceeded, serviceerror.NewUnavailable("busy"))
	assert.NoError(t, startRetrying(context.Background(), start))
	assert.Equal(t, 3, *n, "two transient failures, then the start")

	refused := errors.New("refused")
	start, n = answers(refused)
	assert.ErrorIs(t, startRetrying(context.Background(), start), refused)
	assert.Equal(t, 1, *n, "any other error ends at once")

	start, n = answers(context.DeadlineExceeded, context.DeadlineExceeded, context.DeadlineExceeded,
		context.DeadlineExceeded, context.DeadlineExceeded, context.DeadlineExceeded)
	assert.ErrorIs(t, startRetrying(context.Background(), start), context.DeadlineExceeded)
	assert.Equal(t, startAttempts, *n, "bounded")
}

// TestStartLoad: startLoad starts the busy processes and its stop kills and reaps every one; a
// load without a command is refused.
func TestStartLoad(t *testing.T) {
	var started []*exec.Cmd
	stop, err := startLoad(2, func() *exec.Cmd {
		c := exec.Command("sleep", "600")
		started = append(started, c)
		return c
	})
	require.NoError(t, err)
	require.Len(t, started, 2)
	for _, c := range started {
		require.NotNil(t, c.Process, "started")
	}
	stop()
	for _, c := range started {
		require.NotNil(t, c.ProcessState, "reaped")
		assert.False(t, c.ProcessState.Success(), "killed, not finished")
	}
	_, err = startLoad(1, nil)
	assert.Error(t, err)
}
