package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
)

// client.Execute's progress callback gets every report once, in order, and the tool's last
// report before Execute returns the result (issue 23 item 2): for a tool that reports 100 times
// in a tight loop (well within 50 ms) and returns (all 100 arrive: the heartbeat and the result
// carry the progress window), one that reports once just before returning, one whose every
// report the callback sees (the tool goes on only once it did), and one that reports and then
// fails with an error result. The slice the callback appends to has no lock: the race detector checks
// that deliveries never overlap and all happen before Execute returns.
func TestExecuteProgressEveryReportOnceAndLastBeforeResult(t *testing.T) {
	ack := make(chan struct{})
	tools := []toolcore.Tool{
		define(t, "burst", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(ctx context.Context, _ args) (any, error) {
			for i := int64(1); i <= 100; i++ {
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: i, Total: 100})
			}
			return "burst", nil
		}),
		define(t, "once", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(ctx context.Context, _ args) (any, error) {
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 1, Total: 1, Message: "done"})
			return "once", nil
		}),
		define(t, "steps", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(ctx context.Context, _ args) (any, error) {
			for k := range int64(3) {
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: k, Total: 3, Message: fmt.Sprintf("step %d", k)})
				select {
				case <-ack:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 3, Total: 3, Message: "done"})
			return "steps", nil
		}),
		define(t, "fails", toolcore.Options{}, func(ctx context.Context, _ args) (any, error) {
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 1, Total: 2, Message: "half"})
			return nil, errors.New("disk full")
		}),
	}
	e := newEnv(t, tools...)

	var hundred []int64
	for k := int64(1); k <= 100; k++ {
		hundred = append(hundred, k)
	}
	tests := []struct {
		tool      string
		wantError bool
		wantAll   []int64 // every report's Completed
		wantLast  toolcore.Progress
	}{
		{tool: "burst", wantAll: hundred, wantLast: toolcore.Progress{Completed: 100, Total: 100}},
		{tool: "once", wantAll: []int64{1}, wantLast: toolcore.Progress{Completed: 1, Total: 1, Message: "done"}},
		{tool: "steps", wantAll: []int64{0, 1, 2, 3}, wantLast: toolcore.Progress{Completed: 3, Total: 3, Message: "done"}},
		{tool: "fails", wantError: true, wantAll: []int64{1}, wantLast: toolcore.Progress{Completed: 1, Total: 2, Message: "half"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			ctx := e.ctx()
			var got []client.ProgressEvent
			cl := client.New(e.sdk, client.Options{
				TaskQueue: e.queue,
				Scope:     e.queue,
				Namespace: devtest.Server(t).Namespace(),
				OnProgress: func(ev client.ProgressEvent) {
					got = append(got, ev)
					if ev.ToolName == "steps" && ev.Progress.Completed < 3 {
						select {
						case ack <- struct{}{}: // the tool goes on to its next report
						case <-ctx.Done():
						}
					}
				},
			})
			id := "progress-" + tt.tool
			result, err := cl.Execute(ctx, call(t, id, tt.tool, `{}`))
			require.NoError(t, err)
			assert.Equal(t, tt.wantError, result.IsError(), result.Content())

			require.NotEmpty(t, got, "the last report always arrives")
			assert.Equal(t, tt.wantLast, got[len(got)-1].Progress, "the tool's last report, delivered last")
			var completed []int64
			for i, ev := range got {
				assert.Equal(t, cl.WorkflowID(id), ev.WorkflowID)
				assert.Equal(t, id, ev.ToolCallID)
				assert.Equal(t, tt.tool, ev.ToolName)
				if i > 0 {
					assert.Greater(t, ev.Progress.Completed, got[i-1].Progress.Completed, "in order, each value once: %v", got)
				}
				completed = append(completed, ev.Progress.Completed)
			}
			if tt.wantAll != nil {
				assert.Equal(t, tt.wantAll, completed)
			}
		})
	}
}
