package e2e

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
)

// TestRetryAfter: a ReadOnly tool whose API answered "429, retry after 2 s" gets its second
// attempt no sooner than 2 s after the first failed, exactly once, and the wait shows in Status
// while it lasts. (The bound is a lower one: the server may start the attempt later, never
// sooner.)
func TestRetryAfter(t *testing.T) {
	const delay = 2 * time.Second
	var runs atomic.Int32
	failed := make(chan time.Time, 1)
	started := make(chan time.Time, 4)
	tool := define(t, "rate_limited", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3},
		func(ctx context.Context, _ args) (any, error) {
			runs.Add(1)
			started <- time.Now()
			if toolcore.Attempt(ctx) == 1 {
				defer func() { failed <- time.Now() }()
				return nil, toolcore.RetryAfter(errors.New("429 Too Many Requests"), delay)
			}
			return map[string]int{"attempt": toolcore.Attempt(ctx)}, nil
		})
	e := newEnv(t, tool)
	ctx := e.ctx()

	done := goExecute(ctx, e.client, call(t, "ra1", "rate_limited", `{}`))
	<-started
	failedAt := <-failed

	// While the tool waits, Status says until when and why.
	var st client.Status
	require.Eventually(t, func() bool {
		var err error
		st, err = e.client.Status(ctx, "ra1")
		return err == nil && (!st.RetryAt.IsZero() || len(started) > 0)
	}, testTimeout, 20*time.Millisecond)
	t.Logf("status while waiting: attempt %d, retry at %s after %q", st.Attempt, st.RetryAt, st.LastFailure)
	if len(started) == 0 { // the wait was still on when Status looked
		assert.Equal(t, "429 Too Many Requests", st.LastFailure)
		assert.False(t, st.RetryAt.Before(failedAt.Add(delay-time.Second)), "next attempt at %s, failure at %s", st.RetryAt, failedAt)
	}

	got := await(t, done)
	require.NoError(t, got.err)
	assert.False(t, got.result.IsError())
	assert.Equal(t, `{"attempt":2}`, got.result.Content())
	assert.Equal(t, int32(2), runs.Load(), "one retry, after the delay")
	secondAt := <-started
	assert.GreaterOrEqual(t, secondAt.Sub(failedAt), delay, "the second attempt waited for Retry-After")
}

// TestRetryAfterOfAnUnsafeToolIsFinal: an Unsafe tool's effect may have happened, so its
// RetryAfter is never honoured: one attempt, a linked TOOL_EXECUTION_FAILED result.
func TestRetryAfterOfAnUnsafeToolIsFinal(t *testing.T) {
	var runs atomic.Int32
	tool := define(t, "charge", toolcore.Options{SideEffect: toolcore.Unsafe},
		func(context.Context, args) (any, error) {
			runs.Add(1)
			return nil, toolcore.RetryAfter(errors.New("503, retry after 1 s"), time.Second)
		})
	e := newEnv(t, tool)

	got, err := e.client.Execute(e.ctx(), call(t, "ra2", "charge", `{}`))

	require.NoError(t, err)
	assert.True(t, got.IsError())
	assert.JSONEq(t, `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"503, retry after 1 s"}}`, got.Content())
	assert.Equal(t, int32(1), runs.Load())
}
