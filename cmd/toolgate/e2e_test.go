package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testbin"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The end-to-end tests run the real toolgate binary as separate processes against `toolgate dev`
// on free loopback ports: what a user types is what is tested. The binary is built once per test
// process (go build links the Temporal server: slow the first time, cached after); -short skips
// these tests.

// Bounds for waiting on processes. They are ceilings against hangs, never waits for progress.
const (
	processTimeout = 3 * time.Minute
	lineTimeout    = 2 * time.Minute
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// toolgateBinary returns the toolgate binary ($TOOLGATE_BIN, or built once per process).
func toolgateBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: builds the binary and starts a Temporal server")
	}
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	return bin
}

// childEnv is this process's environment without TEMPORAL_* and TOOLGATE_* variables (the tests
// set the ones they mean), plus extra.
var childEnv = testbin.ChildEnv

// outcome is what a finished toolgate process left.
type outcome struct {
	stdout string
	stderr string
	code   int
}

// toolgate runs one command to completion with stdin and env.
func toolgate(t *testing.T, env []string, stdin string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolgateBinary(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		require.NoError(t, err, "toolgate %v: %s", args, stderr.String())
	}
	return outcome{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// process is a toolgate process the test talks to while it runs.
type process struct {
	cmd    *exec.Cmd
	stdout chan string // lines, in order
	stderr chan string
	logMu  sync.Mutex
	log    bytes.Buffer // everything on stderr, for failure messages
	exited chan struct{}
	code   int
}

func startProcess(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(toolgateBinary(t), args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	p := &process{cmd: cmd, stdout: make(chan string, 1024), stderr: make(chan string, 1024), exited: make(chan struct{})}
	require.NoError(t, cmd.Start())
	var pipes sync.WaitGroup
	pipes.Add(2)
	go p.pump(&pipes, stdout, p.stdout, false)
	go p.pump(&pipes, stderr, p.stderr, true)
	go func() {
		pipes.Wait()
		_ = cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// pump forwards lines of r to ch (dropping them when nobody reads and ch is full) and closes it.
func (p *process) pump(wg *sync.WaitGroup, r io.Reader, ch chan string, keep bool) {
	defer wg.Done()
	defer close(ch)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if keep {
			p.logMu.Lock()
			p.log.WriteString(line + "\n")
			p.logMu.Unlock()
		}
		select {
		case ch <- line:
		default:
		}
	}
}

func (p *process) stderrText() string {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	return p.log.String()
}

// waitLine returns the first line of ch that contains substr.
func (p *process) waitLine(t *testing.T, ch <-chan string, substr string) string {
	t.Helper()
	deadline := time.After(lineTimeout)
	for {
		select {
		case line, ok := <-ch:
			require.True(t, ok, "process ended before printing %q; stderr:\n%s", substr, p.stderrText())
			if strings.Contains(line, substr) {
				return line
			}
		case <-deadline:
			require.FailNow(t, "no line with "+substr, "stderr:\n%s", p.stderrText())
		}
	}
}

// interrupt sends SIGINT (Ctrl-C) and returns the exit code.
func (p *process) interrupt(t *testing.T) int {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	select {
	case <-p.exited:
		return p.code
	case <-time.After(processTimeout):
		require.FailNow(t, "process did not exit after SIGINT", "stderr:\n%s", p.stderrText())
		return -1
	}
}

// devServer is a running `toolgate dev` and what it printed.
type devServer struct {
	*process
	addr map[string]string // frontend, ui, namespace, task-queue, data
}

// startDev starts `toolgate dev` on free ports and waits until it has printed its addresses.
func startDev(t *testing.T, args ...string) *devServer {
	t.Helper()
	p := startProcess(t, childEnv(), append([]string{"dev", "--port", "0", "--ui-port", "0"}, args...)...)
	d := &devServer{process: p, addr: map[string]string{}}
	for {
		line := p.waitLine(t, p.stdout, " ")
		key, value, _ := strings.Cut(line, " ")
		d.addr[key] = value
		if key == "data" { // the last line
			return d
		}
	}
}

// env is the environment of commands that talk to this server: by TEMPORAL_ADDRESS, as a user
// would after `export TEMPORAL_ADDRESS=...`.
func (d *devServer) env() []string {
	return childEnv("TEMPORAL_ADDRESS=" + d.addr["frontend"])
}

// toolgate dev's --server-log-level quiets the server, not toolgate's notes about it: an open data
// directory is reported (contract 12 rule 2).
func TestDevReportsAnOpenDataDir(t *testing.T) {
	dataDir := t.TempDir()
	require.NoError(t, os.Chmod(dataDir, 0o755))
	dev := startDev(t, "--data-dir", dataDir, "--no-ui")
	line := dev.waitLine(t, dev.stderr, "open to other users")
	assert.Contains(t, line, "chmod 700 "+dataDir)
}

func TestEndToEnd(t *testing.T) {
	dataDir := t.TempDir()
	dev := startDev(t, "--data-dir", dataDir)
	require.Regexp(t, `^127\.0\.0\.1:\d+$`, dev.addr["frontend"])
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, dev.addr["ui"])
	require.Equal(t, "default", dev.addr["namespace"])
	require.Equal(t, "toolgate", dev.addr["task-queue"])
	require.Equal(t, dataDir, dev.addr["data"])
	env := dev.env()

	const addResult = `{"id":"tool-result-e2e-add","role":"toolResult","toolCallId":"e2e-add","toolName":"add","content":"{\"sum\":42}","isError":false}` + "\n"

	t.Run("call prints the result message", func(t *testing.T) {
		got := toolgate(t, env, "", "call", "add", `{"left":20,"right":22}`, "--id", "e2e-add")
		assert.Equal(t, ExitOK, got.code, got.stderr)
		assert.Equal(t, addResult, got.stdout)
		assert.Empty(t, got.stderr, "no info lines by default")
		got = toolgate(t, env, "", "call", "add", `{"left":20,"right":22}`, "--id", "e2e-add", "--log-level", "info")
		assert.Equal(t, addResult, got.stdout)
		assert.Contains(t, got.stderr, `"toolCallId": "e2e-add"`, "log lines name the call")
		assert.Contains(t, got.stderr, `"workflowId": "toolcall-e2e-add"`)
	})

	t.Run("calls with results and exit codes", func(t *testing.T) {
		tests := []struct {
			name       string
			stdin      string
			args       []string
			wantCode   int
			wantStdout string
		}{
			{
				name:       "same id and call attaches to the recorded result",
				args:       []string{"call", "--id", "e2e-add", "add", `{"right":22,"left":20}`},
				wantCode:   ExitOK,
				wantStdout: addResult,
			},
			{
				name:       "whole call on stdin",
				stdin:      `{"type":"toolCall","id":"e2e-stdin","name":"echo","arguments":{"text":"hi <there> & you"}}`,
				args:       []string{"call"},
				wantCode:   ExitOK,
				wantStdout: `{"id":"tool-result-e2e-stdin","role":"toolResult","toolCallId":"e2e-stdin","toolName":"echo","content":"{\"text\":\"hi <there> & you\"}","isError":false}` + "\n",
			},
			{
				name:       "unknown tool is an error result naming the queue and the worker's tools",
				args:       []string{"call", "--id", "e2e-nope", "nope"},
				wantCode:   ExitErrorResult,
				wantStdout: `{"id":"tool-result-e2e-nope","role":"toolResult","toolCallId":"e2e-nope","toolName":"nope","content":"{\"error\":{\"code\":\"TOOL_NOT_FOUND\",\"message\":\"Unknown Tool \\\"nope\\\" on task queue \\\"toolgate\\\"; this worker has: add, echo, http_get, sleep\"}}","isError":true}` + "\n",
			},
			{
				name:     "same id with other arguments is refused",
				args:     []string{"call", "--id", "e2e-add", "add", `{"left":1,"right":1}`},
				wantCode: ExitUsage,
			},
			{
				name:       "non-ASCII call ID runs under its escaped workflow ID",
				args:       []string{"call", "--id", "é1", "echo", `{"text":"hi"}`},
				wantCode:   ExitOK,
				wantStdout: `{"id":"tool-result-é1","role":"toolResult","toolCallId":"é1","toolName":"echo","content":"{\"text\":\"hi\"}","isError":false}` + "\n",
			},
			{
				name:     "blank-looking call ID is bad input",
				args:     []string{"call", "--id", "\u3164", "echo", `{"text":"hi"}`},
				wantCode: ExitUsage,
			},
			{
				name:     "malformed arguments start nothing",
				args:     []string{"call", "add", `[20,22]`},
				wantCode: ExitUsage,
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := toolgate(t, env, tt.stdin, tt.args...)
				assert.Equal(t, tt.wantCode, got.code, got.stderr)
				assert.Equal(t, tt.wantStdout, got.stdout)
			})
		}
	})

	t.Run("rejected arguments are an error result", func(t *testing.T) {
		got := toolgate(t, env, "", "call", "--id", "e2e-rejected", "add", `{"left":"twenty","right":22}`)
		assert.Equal(t, ExitErrorResult, got.code, got.stderr)
		var res struct {
			Content string `json:"content"`
			IsError bool   `json:"isError"`
		}
		require.NoError(t, json.Unmarshal([]byte(got.stdout), &res), got.stdout)
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, `"code":"TOOL_ARGUMENTS_INVALID"`)
	})

	t.Run("detach, status, cancel, result", func(t *testing.T) {
		got := toolgate(t, env, "", "call", "sleep", `{"seconds":600}`, "--id", "e2e-sleep", "--detach")
		require.Equal(t, ExitOK, got.code, got.stderr)
		require.Equal(t, "toolcall-e2e-sleep\n", got.stdout)

		// The tool runs and reports progress (sleep reports 0 of 600 at once).
		require.Eventually(t, func() bool {
			st := toolgate(t, env, "", "status", "toolcall-e2e-sleep", "--json")
			return st.code == ExitOK && strings.Contains(st.stdout, `"state":"running"`) &&
				strings.Contains(st.stdout, `"total":600`)
		}, lineTimeout, 200*time.Millisecond)
		st := toolgate(t, env, "", "status", "--call-id", "e2e-sleep")
		assert.Equal(t, ExitOK, st.code, st.stderr)
		assert.Contains(t, st.stdout, "state     running\n")
		assert.Contains(t, st.stdout, "attempt   1\n")
		assert.Contains(t, st.stdout, "/600 slept ")

		got = toolgate(t, env, "", "cancel", "toolcall-e2e-sleep")
		require.Equal(t, ExitOK, got.code, got.stderr)
		got = toolgate(t, env, "", "result", "toolcall-e2e-sleep")
		assert.Equal(t, ExitCanceled, got.code, got.stderr)
		assert.Empty(t, got.stdout)
		got = toolgate(t, env, "", "status", "toolcall-e2e-sleep", "--json")
		assert.Contains(t, got.stdout, `"state":"canceled"`)
	})

	t.Run("ctrl-c cancels a foreground call", func(t *testing.T) {
		call := startProcess(t, env, "call", "sleep", `{"seconds":600}`, "--id", "e2e-interrupt", "--progress", "plain")
		call.waitLine(t, call.stderr, "progress ") // the tool is running
		assert.Equal(t, ExitCanceled, call.interrupt(t), call.stderrText())
		got := toolgate(t, env, "", "status", "toolcall-e2e-interrupt", "--json")
		require.Equal(t, ExitOK, got.code, got.stderr)
		assert.Contains(t, got.stdout, `"state":"canceled"`)
	})

	t.Run("history shows model text escaped, the file keeps it exact", func(t *testing.T) {
		for i, tt := range attacks {
			id := fmt.Sprintf("e2e-attack-%d", i)
			args, err := json.Marshal(map[string]string{"text": tt.raw})
			require.NoError(t, err)
			got := toolgate(t, env, "", "call", "echo", string(args), "--id", id)
			require.Equal(t, ExitOK, got.code, got.stderr)
			assertNoRaw(t, got.stdout)

			got = toolgate(t, env, "", "history", "toolcall-"+id)
			require.Equal(t, ExitOK, got.code, got.stderr)
			assertNoRaw(t, got.stdout)
			assert.True(t, json.Valid([]byte(got.stdout)), "still JSON")

			file := filepath.Join(t.TempDir(), "h.json")
			got = toolgate(t, env, "", "history", "toolcall-"+id, "-o", file)
			require.Equal(t, ExitOK, got.code, got.stderr)
			got = toolgate(t, env, "", "replay", file)
			assert.Equal(t, ExitOK, got.code, "the exported history replays: %s", got.stdout)
		}
	})

	t.Run("history replays", func(t *testing.T) {
		dir := t.TempDir()
		addFile, sleepFile := filepath.Join(dir, "add.json"), filepath.Join(dir, "sleep.json")
		got := toolgate(t, env, "", "history", "toolcall-e2e-add", "-o", addFile)
		require.Equal(t, ExitOK, got.code, got.stderr)
		got = toolgate(t, env, "", "history", "toolcall-e2e-sleep")
		require.Equal(t, ExitOK, got.code, got.stderr)
		require.NoError(t, os.WriteFile(sleepFile, []byte(got.stdout), 0o644))

		got = toolgate(t, env, "", "replay", addFile, sleepFile)
		assert.Equal(t, ExitOK, got.code, got.stderr)
		assert.Equal(t, fmt.Sprintf("PASS %s\nPASS %s\n", addFile, sleepFile), got.stdout)

		// A history whose recorded activity differs from what this code schedules fails.
		data, err := os.ReadFile(addFile)
		require.NoError(t, err)
		changed := strings.ReplaceAll(string(data), `"ExecuteTool"`, `"SomeOtherActivity"`)
		require.NotEqual(t, string(data), changed, "the history names the ExecuteTool activity")
		badFile := filepath.Join(dir, "changed.json")
		require.NoError(t, os.WriteFile(badFile, []byte(changed), 0o644))
		got = toolgate(t, env, "", "replay", addFile, badFile)
		assert.Equal(t, ExitErrorResult, got.code, got.stderr)
		assert.Contains(t, got.stdout, "PASS "+addFile+"\n")
		assert.Contains(t, got.stdout, "FAIL "+badFile+": ")
	})

	t.Run("the web UI lists the calls", func(t *testing.T) {
		url := dev.addr["ui"] + "/api/v1/namespaces/default/workflows"
		require.Eventually(t, func() bool {
			resp, err := http.Get(url) //nolint:noctx // loopback test server
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			return err == nil && resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte("toolcall-e2e-add"))
		}, lineTimeout, 200*time.Millisecond)
	})

	t.Run("worker on another task queue", func(t *testing.T) {
		w := startProcess(t, childEnv(), "worker", "--address", dev.addr["frontend"], "--task-queue", "e2e-queue", "--setup")
		got := toolgate(t, env, "", "call", "--task-queue", "e2e-queue", "--id", "e2e-queue", "echo", `{"text":"elsewhere"}`)
		assert.Equal(t, ExitOK, got.code, got.stderr)
		assert.Contains(t, got.stdout, `"content":"{\"text\":\"elsewhere\"}"`)
		assert.Equal(t, ExitOK, w.interrupt(t), w.stderrText())
	})

	t.Run("restart on the same data directory keeps the calls", func(t *testing.T) {
		require.Equal(t, ExitOK, dev.interrupt(t), dev.stderrText())
		again := startDev(t, "--data-dir", dataDir, "--no-ui")
		env := again.env()
		got := toolgate(t, env, "", "result", "toolcall-e2e-add")
		assert.Equal(t, ExitOK, got.code, got.stderr)
		assert.Equal(t, addResult, got.stdout)
		got = toolgate(t, env, "", "result", "--call-id", "e2e-sleep")
		assert.Equal(t, ExitCanceled, got.code, got.stderr)
		assert.Equal(t, ExitOK, again.interrupt(t), again.stderrText())
	})
}

// TestEndToEndSchemas: the worker's tools listed remotely, and drift against the same build.
func TestEndToEndSchemas(t *testing.T) {
	dev := startDev(t, "--in-memory")
	env := dev.env()

	local := toolgate(t, env, "", "tools", "--format", "mcp")
	require.Equal(t, ExitOK, local.code, local.stderr)
	remote := toolgate(t, env, "", "tools", "--format", "mcp", "--remote")
	require.Equal(t, ExitOK, remote.code, remote.stderr)
	assert.JSONEq(t, local.stdout, remote.stdout, "the dev worker serves this build's toolbox")

	started := toolgate(t, env, "", "call", "sleep", `{"seconds":600}`, "--id", "e2e-drift", "--detach")
	require.Equal(t, ExitOK, started.code, started.stderr)
	t.Cleanup(func() { toolgate(t, env, "", "cancel", "toolcall-e2e-drift") })
	var report struct {
		Running   int               `json:"running"`
		Scheduled int               `json:"scheduled"`
		Drifted   []json.RawMessage `json:"drifted"`
	}
	require.Eventually(t, func() bool { // visibility is eventually consistent
		got := toolgate(t, env, "", "drift", "--json")
		if got.code != ExitOK || json.Unmarshal([]byte(got.stdout), &report) != nil {
			return false
		}
		return report.Scheduled == 1
	}, time.Minute, 100*time.Millisecond)
	assert.Equal(t, 1, report.Running)
	assert.Empty(t, report.Drifted, "same build, same definitions")
}
