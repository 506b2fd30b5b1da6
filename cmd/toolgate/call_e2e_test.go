package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
