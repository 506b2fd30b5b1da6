package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
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
