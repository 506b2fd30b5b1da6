package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolcore"
)

// The sandbox tools of `toolgate worker --sandbox-dir` (docs/sandbox.md).
const (
	sandboxWriteTool = "workspace_write_file"
	sandboxExecTool  = "exec"
	sandboxReadTool  = "workspace_read_file"
)

// goRoot is the Go toolchain the scenario's script runs (`go version`), bound read-only into the
// sandbox with --sandbox-ro.
const goRoot = "/usr/local/go"

// needSandbox fails the test, saying what to install, when bubblewrap or the Go toolchain the
// script runs is missing.
func needSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatal("bubblewrap (bwrap) is not installed: run make setup")
	}
	if _, err := os.Stat(filepath.Join(goRoot, "bin", "go")); err != nil {
		t.Fatalf("the scenario runs %s/bin/go in the sandbox: %v", goRoot, err)
	}
}

// sandboxRoot is a temporary directory for a scenario's sandbox directories and store. A root
// worker's sandbox runs as nobody, who must reach the workspaces' directory: the test's temporary
// directories are 0700.
func sandboxRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		require.NoError(t, os.Chmod(d, 0o711))
	}
	return root
}

// sandboxWorker starts `toolgate worker` on queue with its sandbox's local copies in dir and the
// shared store in store, and waits until it polls.
func sandboxWorker(t *testing.T, dev *devServer, queue, dir, store string) *proc {
	t.Helper()
	toolgate, _ := built(t)
	p := start(t, "toolgate worker "+filepath.Base(dir), toolgate, "worker", "--address", dev.frontend, "--task-queue", queue,
		"--sandbox-dir", dir, "--sandbox-store", store, "--sandbox-ro", goRoot)
	waitStderr(t, p, "worker running")
	return p
}

// gatedScript is what the agent writes: `go version` into version.txt, then a wait for the file
// gate in the workspace (the test creates it), so the test can stop the agent while the second
// call still runs.
const gatedScript = "#!/bin/sh\n" +
	goRoot + "/bin/go version > version.txt\n" +
	"while [ ! -e gate ]; do sleep 0.05; done\n" +
	"echo ran\n"

// TestSandboxWorkspaceSurvivesWorkerKill (issue 36's "done when"): an agent run (examples/agent,
// a real process) writes script.sh with the workspace write tool, runs it with exec (`go
// version` into version.txt, from the Go toolchain bound read-only) and reads version.txt. While
// the second call runs, the agent process is killed; once that call has completed, its worker is
// SIGKILLed too. A new worker with another --sandbox-dir (the same store) and a second agent
// process with the same workflow ID finish the run: the third call, on the new worker, reads the
// file the second call left, restored from the store. -soak repeats the run.
func TestSandboxWorkspaceSurvivesWorkerKill(t *testing.T) {
	needSandbox(t)
	agent := builtAgent(t)
	dev := sharedDev(t)
	runs := 1
	if *soak {
		runs = 5
	}
	for i := range runs {
		sandboxKillRun(t, dev, agent, i)
	}
}

func sandboxKillRun(t *testing.T, dev *devServer, agent string, run int) {
	t.Helper()
	began := time.Now()
	fig := figures{Scenario: "sandbox-worker-killed", Detail: map[string]int{}}
	queue := taskQueue(t)
	root := sandboxRoot(t)
	store, dirA, dirB := filepath.Join(root, "store"), filepath.Join(root, "a"), filepath.Join(root, "b")
	doomed := sandboxWorker(t, dev, queue, dirA, store)

	calls := []toolcore.ToolCall{
		call(t, "write", sandboxWriteTool, map[string]any{"path": "script.sh", "content": gatedScript}),
		call(t, "exec", sandboxExecTool, map[string]any{"argv": []string{"sh", "script.sh"}}),
		call(t, "read", sandboxReadTool, map[string]any{"path": "version.txt"}),
	}
	script := agentScript{Turns: []agentTurn{
		{Text: "write", ToolCalls: calls[:1]},
		{Text: "run", ToolCalls: calls[1:2]},
		{Text: "read", ToolCalls: calls[2:]},
		{Text: "the toolchain says {{read}}"},
	}}
	data, err := json.Marshal(script)
	require.NoError(t, err)
	scriptPath := filepath.Join(root, "script.json")
	require.NoError(t, os.WriteFile(scriptPath, data, 0o600))
	agentID := fmt.Sprintf("agent-%s-%d", queue, run)
	args := []string{"-address", dev.frontend, "-task-queue", queue + "-agent", "-tool-task-queue", queue,
		"-id", agentID, "-script", scriptPath, "-json", "-timeout", outcomeTimeout.String()}

	first := start(t, "first agent", agent, args...)
	// The second call runs once version.txt is in the doomed worker's copy of the workspace; it
	// waits for the gate, so the agent cannot have asked for the third call yet.
	ws := waitForFile(t, dirA, "version.txt")
	first.kill(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "gate"), nil, 0o644))
	sdk := sdkClient(t, dev)
	execID := agentID + "/toolcall-exec"
	ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
	defer cancel()
	for {
		d, err := sdk.DescribeWorkflowExecution(ctx, execID, "")
		require.NoError(t, err, execID)
		if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, st, "the exec call completed on the doomed worker")
			break
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, "the exec call never completed", doomed.stderrText())
		case <-time.After(50 * time.Millisecond):
		}
	}
	doomed.kill(t)
	fig.Faults += 2
	replacement := sandboxWorker(t, dev, queue, dirB, store)
	res := agentResultOf(t, start(t, "second agent", agent, args...))
	assert.Equal(t, 4, res.Turns)
	fig.Calls = len(calls)

	outcomes := map[string]string{}
	for _, m := range res.Conversation {
		if m.Role == "tool" {
			if _, dup := outcomes[m.ToolCallID]; dup {
				fig.Duplicated++
			}
			outcomes[m.ToolCallID] = m.Content
			assert.False(t, m.IsError, "%s: %s", m.ToolCallID, m.Content)
		}
	}
	for _, c := range calls {
		if _, ok := outcomes[c.ID()]; !ok {
			fig.Lost++
			t.Errorf("%s: no outcome in the conversation", c.ID())
		}
	}
	assert.Contains(t, outcomes["exec"], `ran\n`, "the script ran to its end")
	assert.Regexp(t, `go version go1\.\d+`, outcomes["read"], "the third call read what the second wrote")
	assert.Contains(t, res.Answer, "go version go1.")
	// The third call ran on the replacement, which restored the workspace from the store.
	restored := findFile(dirB, "version.txt")
	require.NotEmpty(t, restored, "no version.txt in the replacement's copy of the workspace")
	got, err := os.ReadFile(filepath.Join(restored, "version.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(got), "go version go1.")
	// The go command also leaves its telemetry counters under $HOME, which is the workspace.
	assert.Subset(t, listFiles(t, restored), []string{"gate", "script.sh", "version.txt"}, "the files of the second call")
	replacement.interrupt(t)
	report(t, fig, began)
}

// waitForFile waits until a directory under dir holds a regular file named name and returns that
// directory (the workspace's local copy, wherever the worker keeps it).
func waitForFile(t *testing.T, dir, name string) string {
	t.Helper()
	deadline := time.After(outcomeTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if found := findFile(dir, name); found != "" {
			return found
		}
		select {
		case <-tick.C:
		case <-deadline:
			require.FailNow(t, "no "+name+" under "+dir)
		}
	}
}

// findFile returns the directory under dir that holds a regular file named name, or "".
func findFile(dir, name string) string {
	var found string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && d.Name() == name {
			found = filepath.Dir(path)
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// listFiles returns the paths of the regular files under dir, relative to it, sorted.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, path)
			paths = append(paths, rel)
		}
		return err
	}))
	return paths
}

// TestSandboxCancelLeavesNoProcess: `toolgate cancel` of a call running `sleep 600` in the
// sandbox ends the call canceled, and once it has ended none of the sandbox's processes (bwrap,
// its init, the sleep) is left on the host. -soak cancels five calls one after another.
func TestSandboxCancelLeavesNoProcess(t *testing.T) {
	needSandbox(t)
	dev := sharedDev(t)
	began := time.Now()
	fig := figures{Scenario: "sandbox-cancel", Detail: map[string]int{}}
	queue := taskQueue(t)
	root := sandboxRoot(t)
	w := sandboxWorker(t, dev, queue, filepath.Join(root, "a"), filepath.Join(root, "store"))
	// The worker says at start whether its sandboxes get control groups of their own, as a
	// runner of this process finds them.
	r, err := sandbox.NewRunner(sandbox.RunnerConfig{})
	require.NoError(t, err)
	if ok, why := r.PerSandboxLimits(); ok {
		assert.Contains(t, w.stderrText(), "limited per sandbox (control groups)")
	} else {
		assert.Contains(t, w.stderrText(), "not per sandbox", why)
	}
	calls := 1
	if *soak {
		calls = 5
	}
	for i := range calls {
		cancelSleep(t, dev, w, queue, i, &fig)
	}
	report(t, fig, began)
}

// cancelSleep runs `exec sleep 600` on the sandbox worker w, cancels it once the sleep runs, and
// checks that none of the sandbox's processes outlived the call.
func cancelSleep(t *testing.T, dev *devServer, w *proc, queue string, i int, fig *figures) {
	t.Helper()
	toolgate, _ := built(t)
	id := fmt.Sprintf("sleep-%d-%s", i, strconv.FormatInt(time.Now().UnixNano(), 36))
	caller := start(t, "toolgate call", toolgate, "call", "--address", dev.frontend, "--task-queue", queue,
		"--id", id, "--progress", "off", sandboxExecTool, `{"argv":["sleep","600"]}`)
	fig.Calls++
	// The sandbox's processes are the worker's descendants (bwrap and what it started).
	var running []hostProc
	deadline := time.After(outcomeTimeout)
	for {
		running = descendants(t, w.cmd.Process.Pid)
		if hasSleep(running) {
			break
		}
		select {
		case <-caller.exited:
			require.FailNow(t, "the call ended before its command ran", caller.stderrText())
		case <-deadline:
			require.FailNow(t, "no sleep 600 in the sandbox", w.stderrText())
		case <-time.After(20 * time.Millisecond):
		}
	}
	fig.Detail["sandboxProcesses"] = len(running)

	canceled := time.Now()
	cancelCmd := start(t, "toolgate cancel", toolgate, "cancel", "--address", dev.frontend, "toolcall-"+id)
	require.Equal(t, 0, cancelCmd.waitExit(t, outcomeTimeout), cancelCmd.stderrText())
	fig.Faults++
	assert.Equal(t, 4, caller.waitExit(t, outcomeTimeout), "toolgate call exits 4: canceled\n%s", caller.stderrText())
	// From the cancel command's start to the call's end: a figure, never asserted.
	fig.Detail["cancelToEndMs"] = max(fig.Detail["cancelToEndMs"], int(time.Since(canceled).Milliseconds()))

	for _, p := range running {
		if p.alive() {
			fig.Hung++
			t.Errorf("process %d (%s) outlived the canceled call", p.pid, p.cmdline)
		}
	}
	assert.Empty(t, descendants(t, w.cmd.Process.Pid), "no process of the sandbox is left under the worker")
}

// hostProc is a process seen in /proc: its PID, start time (against PID reuse) and command line.
type hostProc struct {
	pid     int
	start   string
	cmdline string
}

// alive reports whether the same process (PID and start time) still exists.
func (p hostProc) alive() bool {
	start, _, ok := procStat(p.pid)
	return ok && start == p.start
}

// hasSleep reports whether one of ps is `sleep 600`.
func hasSleep(ps []hostProc) bool {
	for _, p := range ps {
		if p.cmdline == "sleep 600" {
			return true
		}
	}
	return false
}

// descendants returns the processes below root (not root itself).
func descendants(t *testing.T, root int) []hostProc {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	parent := map[int]int{}
	all := map[int]hostProc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		start, ppid, ok := procStat(pid)
		if !ok {
			continue
		}
		raw, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		parent[pid] = ppid
		all[pid] = hostProc{pid: pid, start: start, cmdline: strings.TrimSpace(string(bytes.ReplaceAll(raw, []byte{0}, []byte{' '})))}
	}
	var out []hostProc
	for pid, p := range all {
		for q := parent[pid]; q > 1; q = parent[q] {
			if q == root {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// procStat reads a process's start time and parent PID from /proc/PID/stat.
func procStat(pid int) (start string, ppid int, ok bool) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields follow the last ')'.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return "", 0, false
	}
	fields := strings.Fields(string(raw[i+1:]))
	if len(fields) < 20 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, false
	}
	return fields[19], ppid, true
}
