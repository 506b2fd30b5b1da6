package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// TestRetryAfter: a ReadOnly tool whose API answered "429, retry after 2 s" gets its second
// attempt no sooner than 2 s after the first failed, exactly once. The second attempt blocks
// until the test has read the call's pending activity, so the check always runs: the server
// recorded the first attempt's failure and started the second at least the delay after it
// (the server's own timestamps), and Status shows attempt 2. (The bounds are lower ones: the
// server may start the attempt later, never sooner.)
func TestRetryAfter(t *testing.T) {
	const delay = 2 * time.Second
	var runs atomic.Int32
	failed := make(chan time.Time, 1)
	second := make(chan time.Time, 1)
	release := make(chan struct{})
	tool := define(t, "rate_limited", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3},
		func(ctx context.Context, _ args) (any, error) {
			runs.Add(1)
			if toolcore.Attempt(ctx) == 1 {
				defer func() { failed <- time.Now() }()
				return nil, toolcore.RetryAfter(errors.New("429 Too Many Requests"), delay)
			}
			second <- time.Now()
			select {
			case <-release:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			return map[string]int{"attempt": toolcore.Attempt(ctx)}, nil
		})
	e := newEnv(t, tool)
	ctx := e.ctx()

	done := goExecute(ctx, e.client, call(t, "ra1", "rate_limited", `{}`))
	failedAt := recv(t, failed)
	secondAt := recv(t, second)
	assert.GreaterOrEqual(t, secondAt.Sub(failedAt), delay, "the second attempt waited for Retry-After")

	// The second attempt is running: the server's record of the wait that preceded it.
	var act *workflowpb.PendingActivityInfo
	require.Eventually(t, func() bool {
		desc, err := e.sdk.DescribeWorkflowExecution(ctx, e.client.WorkflowID("ra1"), "")
		if err != nil {
			return false
		}
		for _, a := range desc.GetPendingActivities() {
			if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED && a.GetAttempt() == 2 {
				act = a
			}
		}
		return act != nil
	}, testTimeout, 10*time.Millisecond, "the second attempt is started on the server")
	assert.Equal(t, "429 Too Many Requests", act.GetLastFailure().GetMessage())
	waited := act.GetLastStartedTime().AsTime().Sub(act.GetLastAttemptCompleteTime().AsTime())
	assert.GreaterOrEqual(t, waited, delay, "the server started attempt 2 %s after attempt 1 failed", waited)
	st, err := e.client.Status(ctx, "ra1")
	require.NoError(t, err)
	assert.Equal(t, 2, st.Attempt)
	assert.True(t, st.RetryAt.IsZero(), "no wait while an attempt runs")

	close(release)
	got := await(t, done)
	require.NoError(t, got.err)
	assert.False(t, got.result.IsError())
	assert.Equal(t, `{"attempt":2}`, got.result.Content())
	assert.Equal(t, int32(2), runs.Load(), "one retry, after the delay")
}

// TestRetryAfterWaitShowsInStatus: while a call waits out a tool's Retry-After, Status (and so
// `toolgate status`) says until when and after which failure. The delay is far longer than the
// test may run, so Status always looks while the wait is on; the call is then canceled, which
// ends the wait at once.
func TestRetryAfterWaitShowsInStatus(t *testing.T) {
	const delay = 5 * time.Minute // > testTimeout
	var runs atomic.Int32
	failed := make(chan time.Time, 1)
	tool := define(t, "rate_limited", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3},
		func(context.Context, args) (any, error) {
			runs.Add(1)
			defer func() { failed <- time.Now() }()
			return nil, toolcore.RetryAfter(errors.New("429 Too Many Requests"), delay)
		})
	e := newEnv(t, tool)
	ctx := e.ctx()

	_, err := e.client.Start(ctx, call(t, "ra3", "rate_limited", `{}`))
	require.NoError(t, err)
	failedAt := recv(t, failed)
	var st client.Status
	require.Eventually(t, func() bool {
		var err error
		st, err = e.client.Status(ctx, "ra3")
		return err == nil && !st.RetryAt.IsZero()
	}, testTimeout, 20*time.Millisecond, "Status shows the wait")
	t.Logf("status while waiting: attempt %d, retry at %s after %q", st.Attempt, st.RetryAt, st.LastFailure)
	assert.Equal(t, client.Running, st.State)
	assert.Equal(t, "429 Too Many Requests", st.LastFailure)
	assert.False(t, st.RetryAt.Before(failedAt.Add(delay-time.Second)), "next attempt at %s, failure at %s", st.RetryAt, failedAt)
	assert.False(t, st.RetryAt.After(time.Now().Add(delay)), "next attempt at %s", st.RetryAt)

	require.NoError(t, e.sdk.CancelWorkflow(ctx, e.client.WorkflowID("ra3"), ""))
	_, err = e.client.Result(ctx, "ra3")
	assert.ErrorIs(t, err, wire.ErrCallCanceled)
	assert.Equal(t, int32(1), runs.Load(), "the canceled wait started no attempt")
}

// TestRetryAfterHTTPGet: the toolbox's http_get against an API answering 429 with "Retry-After:
// 2" and then 200: the API sees the second request at least 2 s after the first (its own
// clock), exactly two requests, and the call's result is the 200 answer. The test server is on
// loopback, which http_get refuses by default: the worker's toolbox allows its address
// (Config.AllowHosts, the operator's allow list).
func TestRetryAfterHTTPGet(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []time.Time
	)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		seen = append(seen, time.Now())
		n := len(seen)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		_, _ = io.WriteString(w, "the answer")
	}))
	t.Cleanup(api.Close)
	tools, err := toolbox.Tools(toolbox.Config{AllowHosts: []string{api.Listener.Addr().String()}})
	require.NoError(t, err)
	e := newEnv(t, tools...)
	args, err := json.Marshal(map[string]string{"url": api.URL + "/v1/things"})
	require.NoError(t, err)

	res, err := e.client.Execute(e.ctx(), call(t, "ra4", toolbox.NameHTTPGet, string(args)))

	require.NoError(t, err)
	require.False(t, res.IsError(), res.Content())
	var out struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &out), res.Content())
	assert.Equal(t, http.StatusOK, out.Status)
	assert.Equal(t, "the answer", out.Body)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2, "one retry")
	assert.GreaterOrEqual(t, seen[1].Sub(seen[0]), 2*time.Second, "the second request came after Retry-After")
}

// recv returns the next value of ch, failing the test after testTimeout.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatal("nothing received")
		var zero T
		return zero
	}
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
