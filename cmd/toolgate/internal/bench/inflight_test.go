package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
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
