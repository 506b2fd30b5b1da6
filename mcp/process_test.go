package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
)

// toolgateBinary returns the toolgate binary ($TOOLGATE_BIN, or built once per test process).
func toolgateBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("process test: runs the toolgate binary")
	}
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	return bin
}

// childEnv is this process's environment without TEMPORAL_* and TOOLGATE_* variables (the tests
// pass what they mean as flags), plus extra.
var childEnv = testbin.ChildEnv

// mcpCommand is the `toolgate mcp` command line serving f's worker, plus extra flags.
func mcpCommand(t *testing.T, f *fixture, extra ...string) []string {
	srv := devtest.Server(t)
	return append([]string{toolgateBinary(t), "mcp", "--address", srv.FrontendAddress(),
		"--namespace", srv.Namespace(), "--task-queue", f.queue}, extra...)
}

// stdioEnv is the TypeScript client's environment to spawn `toolgate mcp` over stdio.
func stdioEnv(t *testing.T, f *fixture) []string {
	command, err := json.Marshal(mcpCommand(t, f))
	require.NoError(t, err)
	return []string{"MCP_TRANSPORT=stdio", "MCP_COMMAND=" + string(command)}
}

// mcpProcess is a running `toolgate mcp --listen` process.
type mcpProcess struct {
	cmd *exec.Cmd
	url string        // the streamable HTTP endpoint
	log func() string // its stderr so far
}

// env is the TypeScript client's environment to reach p.
func (p *mcpProcess) env() []string {
	return []string{"MCP_TRANSPORT=http", "MCP_URL=" + p.url}
}

// listenLine is the log line naming the endpoint.
var listenLine = regexp.MustCompile(`MCP streamable HTTP on (http://\S+/mcp)`)

// startMCPProcess starts `toolgate mcp --listen 127.0.0.1:0` (plus extra flags) for f's worker
// and waits until it logs its endpoint. The process is killed when the test ends.
func startMCPProcess(t *testing.T, f *fixture, extra ...string) *mcpProcess {
	args := mcpCommand(t, f, append([]string{"--listen", "127.0.0.1:0"}, extra...)...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = childEnv()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	found := make(chan string, 1)
	var logged bytes.Buffer
	var mu sync.Mutex
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logged.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	select {
	case url := <-found:
		return &mcpProcess{cmd: cmd, url: url, log: func() string {
			mu.Lock()
			defer mu.Unlock()
			return logged.String()
		}}
	case <-exited:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("toolgate mcp exited before serving: %s", logged.String())
		return nil
	}
}

// The real `toolgate mcp` process is SIGKILLed while the TypeScript client's call runs: the
// workflow goes on, and the client retrying with the same idempotency key against a restarted
// process gets the outcome of the one run.
func TestTypeScriptClientAfterServerKilled(t *testing.T) {
	f := newFixture(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			key := "ts-killed-" + transport
			gate := f.tools.hold(key)
			heldEnv := stdioEnv(t, f)
			var first *mcpProcess
			if transport == "http" {
				first = startMCPProcess(t, f)
				heldEnv = first.env()
			}

			held := typeScriptClient(t, "held", append(heldEnv, "MCP_KEY="+key))
			stdout, err := held.StdoutPipe()
			var stderr testbin.SyncBuffer
			held.Stderr = &stderr
			require.NoError(t, err)
			require.NoError(t, held.Start())
			lines := bufio.NewScanner(stdout)
			require.True(t, lines.Scan(), "node held: %s", stderr.String())
			var spawned struct {
				PID *int `json:"pid"`
			}
			require.NoError(t, json.Unmarshal(lines.Bytes(), &spawned), "%s", lines.Text())
			require.Equal(t, key, <-f.tools.started)

			// SIGKILL the MCP server mid-call: nothing of it may cancel the workflow.
			if transport == "stdio" {
				require.NotNil(t, spawned.PID, "the stdio transport names its child")
				require.NoError(t, syscall.Kill(*spawned.PID, syscall.SIGKILL))
			} else {
				require.NoError(t, first.cmd.Process.Kill())
			}
			require.True(t, lines.Scan(), "node held: %s", stderr.String())
			var heldReport struct {
				Outcome string `json:"outcome"`
			}
			require.NoError(t, json.Unmarshal(lines.Bytes(), &heldReport), "%s", lines.Text())
			assert.Equal(t, "error", heldReport.Outcome, "the call outlived its server: %s", lines.Text())
			require.NoError(t, held.Wait(), "node held: %s", stderr.String())

			close(gate)
			retryEnv := stdioEnv(t, f)
			if transport == "http" {
				retryEnv = startMCPProcess(t, f).env()
			}
			var retried struct {
				Result tsToolResult `json:"result"`
			}
			runTypeScriptClient(t, "retry", append(retryEnv, "MCP_KEY="+key), &retried)
			assert.False(t, retried.Result.IsError)
			assert.JSONEq(t, `{"runs":1}`, retried.Result.Content[0].Text)
			assert.Equal(t, 1, f.tools.runsOf(key), "the retried call ran the tool again")
		})
	}
}

// `toolgate worker --mcp PREFIX=COMMAND` mounts the TypeScript SDK's stdio example server: its
// tool runs as a durable toolgate call.
func TestWorkerCommandMountsMCPServer(t *testing.T) {
	queue := devtest.TaskQueue(t)
	stderr := startWorker(t, queue, childEnv(), "--mcp", "ts=node "+sdkExampleServer(t, "progressExample.js"))
	tg := tgclient.New(devtest.Client(t), tgclient.Options{TaskQueue: queue})
	require.Eventually(t, func() bool {
		tools, err := tg.ListTools(t.Context())
		return err == nil && slices.ContainsFunc(tools, func(info toolcore.ToolInfo) bool { return info.Name == "ts_count" })
	}, time.Minute, 100*time.Millisecond, "the worker lists ts_count: %s", stderr)
	res := execute(t, tg, "worker-ts-count", "ts_count", `{"n":2}`)
	assert.False(t, res.IsError(), res.Content())
	assert.Equal(t, "Counted to 2", res.Content(), "the remote text as it is")
}

// startWorker runs `toolgate worker` on the shared dev server's task queue queue with env and
// args after the connection flags, stops it with SIGTERM at cleanup, and returns its stderr.
func startWorker(t *testing.T, queue string, env []string, args ...string) *testbin.SyncBuffer {
	t.Helper()
	_, stderr := startWorkerProcess(t, queue, env, args...)
	return stderr
}

// startWorkerProcess is startWorker returning the process too, for a test that kills it.
func startWorkerProcess(t *testing.T, queue string, env []string, args ...string) (*exec.Cmd, *testbin.SyncBuffer) {
	t.Helper()
	srv := devtest.Server(t)
	cmd := exec.Command(toolgateBinary(t), append([]string{"worker", "--address", srv.FrontendAddress(),
		"--namespace", srv.Namespace(), "--task-queue", queue}, args...)...)
	cmd.Env = env
	stderr := new(testbin.SyncBuffer)
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	return cmd, stderr
}

// lineReport starts cmd, a client process that reports one JSON line per step on stdout, and
// returns next, which decodes its next line into v, and wait, which waits for it to exit 0; both
// fail the test with the process's stderr.
func lineReport(t *testing.T, cmd *exec.Cmd) (next func(v any), wait func()) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := new(testbin.SyncBuffer)
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	next = func(v any) {
		t.Helper()
		require.True(t, lines.Scan(), "%s ended early: %s", cmd.Args, stderr.String())
		require.NoError(t, json.Unmarshal(lines.Bytes(), v), "%s\nstderr: %s", lines.Text(), stderr.String())
	}
	wait = func() {
		t.Helper()
		require.NoError(t, cmd.Wait(), "%s: %s", cmd.Args, stderr.String())
	}
	return next, wait
}
