package workflows_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// drained is the failure of an attempt a stopping worker interrupted, after spent attempts.
func drained(spent int) error {
	return temporal.NewApplicationErrorWithOptions("the worker stopped gracefully and interrupted the attempt", wire.ErrTypeDrained,
		temporal.ApplicationErrorOptions{Details: []any{activities.DrainedAttempt{Attempts: spent, Checkpoint: []byte(`{"next":2}`), ProgressSeq: 7}}})
}

// A drained attempt does not count against MaxAttempts: the workflow schedules the call again at
// once with the attempts it has left (the server's retries of one ExecuteTool are mocked per
// execution), handing over the spent count, checkpoint and progress number. An Unsafe call's
// drained attempt never ran its tool (the activity says ToolDrained only then), so it goes on
// too. Every other failure is mapped as before.
func TestToolCallWorkflowDrainedAttempts(t *testing.T) {
	noop := func(context.Context) (any, error) { return nil, nil }
	reg := newRegistry(t,
		running("unsafe", toolcore.Options{}, noop),
		running("readonly", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3}, noop),
	)
	heartbeat := temporal.NewHeartbeatTimeoutError()
	tests := []struct {
		name        string
		tool        string
		failures    []error // returned by executions 1..n in order; later ones succeed with "ok"
		wantContent string
		wantResumes []int // in.Resume.Attempts of each execution (-1: no Resume)
	}{
		{name: "drained on every roll, then done", tool: "readonly", failures: []error{drained(0), drained(0), drained(0)},
			wantContent: `"ok"`, wantResumes: []int{-1, 0, 0, 0}},
		{name: "unsafe drained before its tool started", tool: "unsafe", failures: []error{drained(0)},
			wantContent: `"ok"`, wantResumes: []int{-1, 0}},
		{name: "the budget counts real attempts only", tool: "readonly", failures: []error{heartbeat, drained(1), heartbeat, heartbeat},
			wantContent: errContent("gave up after 3 attempts; last attempt: no heartbeat within 1m0s: worker lost or stalled"), wantResumes: []int{-1, -1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var resumes []int
			got := runWorkflow(t, reg, call("c1", tt.tool, `{}`), runOptions{setup: func(env *testsuite.TestWorkflowEnvironment) {
				env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).Return(
					func(_ context.Context, in activities.ExecuteToolInput) (activities.ExecuteToolOutput, error) {
						mu.Lock()
						defer mu.Unlock()
						spent := -1
						if in.Resume != nil {
							spent = in.Resume.Attempts
							assert.JSONEq(t, `{"next":2}`, string(in.Resume.Checkpoint))
							assert.EqualValues(t, 7, in.Resume.ProgressSeq)
						}
						resumes = append(resumes, spent)
						if n := len(resumes); n <= len(tt.failures) {
							return activities.ExecuteToolOutput{}, tt.failures[n-1]
						}
						return activities.ExecuteToolOutput{Content: `"ok"`}, nil
					})
			}})
			require.NoError(t, got.err)
			assert.Equal(t, tt.wantContent, got.result.Content())
			assert.Equal(t, tt.wantResumes, resumes)
		})
	}
}

// A call drained more than wire.MaxDrainResumes times ends as an interrupted one: a worker
// fleet that never keeps a worker up cannot hold a call forever.
func TestToolCallWorkflowDrainResumesBounded(t *testing.T) {
	reg := newRegistry(t, running("readonly", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3}, func(context.Context) (any, error) { return nil, nil }))
	var mu sync.Mutex
	executions := 0
	got := runWorkflow(t, reg, call("c1", "readonly", `{}`), runOptions{setup: func(env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).Return(
			func(context.Context, activities.ExecuteToolInput) (activities.ExecuteToolOutput, error) {
				mu.Lock()
				defer mu.Unlock()
				executions++
				return activities.ExecuteToolOutput{}, drained(0)
			})
	}})
	require.NoError(t, got.err)
	assert.Equal(t, wire.MaxDrainResumes+1, executions)
	assert.Equal(t, errContent("gave up after 3 attempts; last attempt: interrupted: the worker stopped gracefully and interrupted the attempt"), got.result.Content())
}
