package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// A foreground call on a queue no worker polls says so on stderr, at the default log level, and
// keeps waiting: a worker started afterwards runs it and call prints the result.
func TestCallSaysNoWorkerAndWaits(t *testing.T) {
	dev := startDev(t, "--in-memory", "--no-ui")
	const queue = "e2e-unpolled"
	call := startProcess(t, dev.env(), "call", "--task-queue", queue, "--id", "e2e-unpolled", "echo", `{"text":"late"}`)
	line := call.waitLine(t, call.stderr, "no worker polls")
	assert.Equal(t, noWorkerNotice(queue), line)

	w := startProcess(t, childEnv(), "worker", "--address", dev.addr["frontend"], "--task-queue", queue)
	out := call.waitLine(t, call.stdout, `"toolCallId"`)
	assert.Equal(t, `{"id":"tool-result-e2e-unpolled","role":"toolResult","toolCallId":"e2e-unpolled","toolName":"echo","content":"{\"text\":\"late\"}","isError":false}`, out)
	select {
	case <-call.exited:
	case <-time.After(processTimeout):
		require.FailNow(t, "call did not exit after its result", "stderr:\n%s", call.stderrText())
	}
	assert.Equal(t, ExitOK, call.code, call.stderrText())
	assert.Equal(t, 1, strings.Count(call.stderrText(), "no worker polls"), "one notice, no log lines: %s", call.stderrText())
	assert.Equal(t, ExitOK, w.interrupt(t), w.stderrText())
}

// A foreground call shows each progress change once, in order, and the tool's last report (sleep
// reports n of n just before returning) before the result: the bar's last frame stays on its
// line, the plain mode's last line is it (issue 23 item 2).
func TestCallProgressEndsOnTheLastReport(t *testing.T) {
	dev := startDev(t, "--in-memory", "--no-ui")
	const seconds = 2
	frames := make([]string, seconds+1) // sleep's reports, 0 of 2 to 2 of 2
	for k := range frames {
		frames[k] = renderProgress(toolcore.Progress{Completed: int64(k), Total: seconds, Message: fmt.Sprintf("slept %d of %d seconds", k, seconds)})
	}
	for _, mode := range []progressMode{progressBar, progressPlain} {
		t.Run(string(mode), func(t *testing.T) {
			id := "e2e-progress-" + string(mode)
			got := toolgate(t, dev.env(), "", "call", "sleep", fmt.Sprintf(`{"seconds":%d}`, seconds), "--id", id, "--progress", string(mode))
			require.Equal(t, ExitOK, got.code, got.stderr)
			assert.Equal(t, fmt.Sprintf(`{"id":"tool-result-%s","role":"toolResult","toolCallId":"%s","toolName":"sleep","content":"{\"seconds\":%d}","isError":false}`+"\n", id, id, seconds), got.stdout)

			var shown []string
			switch mode {
			case progressBar:
				require.True(t, strings.HasSuffix(got.stderr, "\n"), "the last frame stays on its line: %q", got.stderr)
				for _, f := range strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\r\x1b[K") {
					if f != "" {
						shown = append(shown, f)
					}
				}
			case progressPlain:
				for _, line := range strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n") {
					f, ok := strings.CutPrefix(line, "progress ")
					require.True(t, ok, "%q", got.stderr)
					shown = append(shown, f)
				}
			}
			require.NotEmpty(t, shown, "%q", got.stderr)
			assert.Equal(t, frames[seconds], shown[len(shown)-1], "the last frame is the last report: %q", got.stderr)
			next := 0 // each frame once, in order
			for _, f := range shown {
				k := slices.Index(frames, f)
				require.GreaterOrEqual(t, k, next, "frames out of order or repeated: %q", shown)
				next = k + 1
			}
		})
	}
}

// A foreground call shows every report of a tool that reports 100 times in a tight loop (well
// within 50 ms) and returns, once each, in order, the last one before the result, and the one
// report of a tool that reports once just before returning (issue 23 item 2; the heartbeats and
// the result carry the progress window). The tools run on a worker of this test process.
func TestCallProgressShowsEveryReportOfABurst(t *testing.T) {
	dev := startDev(t, "--in-memory", "--no-ui")
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.addr["frontend"], Namespace: "default"})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	type noArgs struct{}
	reg, err := toolcore.NewRegistry(
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "burst",
			Description: "Report 1/100 to 100/100 in a tight loop, then return.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				for k := int64(1); k <= 100; k++ {
					toolcore.ReportProgress(ctx, toolcore.Progress{Completed: k, Total: 100})
				}
				return "burst", nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "once",
			Description: "Report 1/1 just before returning.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 1, Total: 1, Message: "done"})
				return "once", nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		}))
	require.NoError(t, err)
	const queue = "e2e-burst"
	w, err := worker.New(c, "default", reg, worker.Options{TaskQueue: queue, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	for _, tt := range []struct {
		tool string
		want []toolcore.Progress
	}{
		{tool: "burst", want: func() (all []toolcore.Progress) {
			for k := int64(1); k <= 100; k++ {
				all = append(all, toolcore.Progress{Completed: k, Total: 100})
			}
			return all
		}()},
		{tool: "once", want: []toolcore.Progress{{Completed: 1, Total: 1, Message: "done"}}},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			id := "e2e-progress-" + tt.tool
			got := toolgate(t, dev.env(), "", "call", "--task-queue", queue, "--id", id, "--progress", string(progressPlain), tt.tool, `{}`)
			require.Equal(t, ExitOK, got.code, got.stderr)
			assert.Contains(t, got.stdout, fmt.Sprintf(`"content":"\"%s\""`, tt.tool), "the result")
			var want []string
			for _, p := range tt.want {
				want = append(want, "progress "+renderProgress(p))
			}
			assert.Equal(t, want, strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n"), "every report once, in order, the last one last")
		})
	}
}
