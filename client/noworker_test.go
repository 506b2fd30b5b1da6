package client

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/mocks"

	"github.com/toolgate/toolgate/toolcore"
)

// Execute's NoWorker hook against a scripted server: the wait ends when the test releases it
// (at once, when the hook fires, or once DescribeTaskQueue was asked), so nothing depends on
// timing. The real-server case is e2e.TestNoWorkerHookThenWorker.
func TestExecuteNoWorkerHook(t *testing.T) {
	const (
		releaseAtOnce    = "at once"
		releaseOnHook    = "on hook"
		releaseOnPollers = "on DescribeTaskQueue"
	)
	tests := []struct {
		name     string
		hook     bool
		delay    time.Duration
		pollers  []*taskqueuepb.PollerInfo
		descErr  error
		release  string
		wantDesc bool // DescribeTaskQueue was asked
		wantHook int
	}{
		{name: "a call that ends before the delay costs no RPC", hook: true, delay: time.Hour, release: releaseAtOnce},
		{name: "without a hook nothing is asked", delay: time.Nanosecond, release: releaseAtOnce},
		{name: "no poller: the hook fires once and the call keeps waiting", hook: true, delay: time.Nanosecond, release: releaseOnHook, wantDesc: true, wantHook: 1},
		{name: "a worker polls: no hook", hook: true, delay: time.Nanosecond, pollers: []*taskqueuepb.PollerInfo{{Identity: "w"}}, release: releaseOnPollers, wantDesc: true},
		{name: "the server does not answer: no hook", hook: true, delay: time.Nanosecond, descErr: errors.New("unavailable"), release: releaseOnPollers, wantDesc: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			if tt.release == releaseAtOnce {
				free()
			}

			run := mocks.NewWorkflowRun(t)
			run.On("GetID").Return("toolcall-c1").Maybe()
			run.On("Get", mock.Anything, mock.Anything).Return(func(context.Context, any) error {
				select {
				case <-release:
					return nil
				case <-time.After(time.Minute):
					return errors.New("the test never released the wait")
				}
			})
			sdk := mocks.NewClient(t)
			sdk.On("ExecuteWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(run, nil)
			if tt.wantDesc {
				sdk.On("DescribeTaskQueue", mock.Anything, "q", mock.Anything).
					Run(func(mock.Arguments) {
						if tt.release == releaseOnPollers {
							free()
						}
					}).
					Return(&workflowservice.DescribeTaskQueueResponse{Pollers: tt.pollers}, tt.descErr).Once()
			}

			var events []NoWorkerEvent
			off := false
			opts := Options{TaskQueue: "q", SearchAttributes: &off, NoWorkerDelay: tt.delay}
			if tt.hook {
				opts.NoWorker = func(ev NoWorkerEvent) {
					events = append(events, ev) // Execute returns after the hook: no race
					free()
				}
			}
			call, err := toolcore.NewToolCall("c1", "add", []byte(`{}`))
			require.NoError(t, err)
			_, err = New(sdk, opts).Execute(context.Background(), call)
			require.NoError(t, err)

			require.Len(t, events, tt.wantHook)
			if !tt.wantDesc {
				sdk.AssertNotCalled(t, "DescribeTaskQueue", mock.Anything, mock.Anything, mock.Anything)
			}
			for _, ev := range events {
				assert.Equal(t, NoWorkerEvent{TaskQueue: "q", WorkflowID: "toolcall-c1", ToolCallID: "c1", ToolName: "add", Err: ev.Err}, ev)
				assert.ErrorIs(t, ev.Err, ErrNoWorker)
				assert.ErrorContains(t, ev.Err, `"q"`)
			}
		})
	}
}
