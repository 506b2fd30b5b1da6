package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	testRunnerOnce sync.Once
	testRunner     *Runner
	testRunnerErr  error
)

// newTestRunner returns a Runner of the real bubblewrap (one per test binary), failing the test
// naming make setup when it cannot run here.
func newTestRunner(t testing.TB) *Runner {
	t.Helper()
	testRunnerOnce.Do(func() { testRunner, testRunnerErr = NewRunner(RunnerConfig{}) })
	if testRunnerErr != nil {
		t.Fatalf("the sandbox tests need bubblewrap (run make setup): %v", testRunnerErr)
	}
	return testRunner
}

// newWorkspace returns an empty workspace directory the sandbox's user owns, its parents
// traversable (0711) as the workspaces' are.
// newProcessLimitRunner is a runner whose sandboxes run as their own host user (uid/gid 65533
// when the tests run as root): RLIMIT_NPROC counts every process of the user, so a test that
// forks to the limit must not share it with the other packages' sandboxes (uid 65534) that
// make test runs at the same time.
func newProcessLimitRunner(t testing.TB) *Runner {
	t.Helper()
	processLimitRunnerOnce.Do(func() {
		processLimitRunner, processLimitRunnerErr = NewRunner(RunnerConfig{UID: 65533, GID: 65533})
	})
	if processLimitRunnerErr != nil {
		t.Fatalf("the sandbox tests need bubblewrap (run make setup): %v", processLimitRunnerErr)
	}
	return processLimitRunner
}

var (
	processLimitRunnerOnce sync.Once
	processLimitRunner     *Runner
	processLimitRunnerErr  error
)

func newWorkspace(t testing.TB, r *Runner) string {
	t.Helper()
	parent := t.TempDir()
	require.NoError(t, os.Chmod(parent, 0o711))
	require.NoError(t, os.Chmod(filepath.Dir(parent), 0o711))
	dir := filepath.Join(parent, "ws")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Chown(dir, r.UID(), r.GID()))
	return dir
}

// run runs cmd in dir under a generous test deadline.
func run(t testing.TB, r *Runner, dir string, cmd Command) Output {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := r.Run(ctx, dir, cmd)
	require.NoError(t, err)
	return out
}

func TestRunExitCodesAndOutput(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	tests := []struct {
		name string
		give Command
		want Output
	}{
		{"true", Command{Argv: []string{"true"}}, Output{}},
		{"exit code", Command{Shell: "echo out; echo err >&2; exit 3"}, Output{ExitCode: 3, Stdout: "out\n", Stderr: "err\n", StdoutBytes: 4, StderrBytes: 4}},
		{"argv is not a shell line", Command{Argv: []string{"echo", "$HOME; x"}}, Output{Stdout: "$HOME; x\n", StdoutBytes: 9}},
		{"stdin", Command{Argv: []string{"cat"}, Stdin: []byte("fed")}, Output{Stdout: "fed", StdoutBytes: 3}},
		{"no stdin", Command{Argv: []string{"cat"}}, Output{}},
		{"signal", Command{Shell: "kill -TERM $$"}, Output{ExitCode: -1, Signal: "terminated"}},
		{"missing program", Command{Argv: []string{"no-such-program"}}, Output{ExitCode: 1, Stderr: "bwrap: execvp no-such-program: No such file or directory\n", StderrBytes: 57}},
		{"an option-like program is a program", Command{Argv: []string{"--help"}}, Output{ExitCode: 1, Stderr: "bwrap: execvp --help: No such file or directory\n", StderrBytes: 48}},
		{"environment and home", Command{Shell: `echo "$GREETING|$HOME|$TMPDIR|$(pwd)"; env | sort | cut -d= -f1 | tr '\n' ' '`, Env: map[string]string{"GREETING": "hi"}},
			Output{Stdout: "hi|/workspace|/tmp|/workspace\nGREETING HOME PATH PWD TMPDIR ", StdoutBytes: 60}},
		{"user", Command{Shell: "id -un; touch owned; stat -c %U owned"}, Output{Stdout: "sandbox\nsandbox\n", StdoutBytes: 16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(t, r, dir, tt.give)
			out.Duration = 0
			assert.Equal(t, tt.want, out)
		})
	}
}

func TestRunWorkingDirectory(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	require.NoError(t, os.Symlink("/etc", filepath.Join(dir, "link")))
	out := run(t, r, dir, Command{Argv: []string{"pwd"}, Dir: "a/b"})
	assert.Equal(t, "/workspace/a/b\n", out.Stdout)

	for _, bad := range []string{"../", "/etc", "a/../../x", "missing", "link"} {
		_, err := r.Run(context.Background(), dir, Command{Argv: []string{"pwd"}, Dir: bad})
		assert.ErrorIs(t, err, ErrInvalidCommand, bad)
	}
}

func TestRunRejectsInvalidCommands(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	tests := []struct {
		name string
		give Command
	}{
		{"nothing", Command{}},
		{"empty program", Command{Argv: []string{""}}},
		{"both", Command{Argv: []string{"true"}, Shell: "true"}},
		{"bad env name", Command{Argv: []string{"true"}, Env: map[string]string{"A=B": "x"}}},
		{"empty env name", Command{Argv: []string{"true"}, Env: map[string]string{"": "x"}}},
		{"sandbox's PATH", Command{Argv: []string{"true"}, Env: map[string]string{"PATH": "/x"}}},
		{"NUL in env", Command{Argv: []string{"true"}, Env: map[string]string{"A": "x\x00y"}}},
		{"NUL in argv", Command{Argv: []string{"echo", "x\x00y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Run(context.Background(), dir, tt.give)
			assert.ErrorIs(t, err, ErrInvalidCommand)
		})
	}
}

func TestRunOutputTail(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	// 3000 lines of "NNNN\n" on stdout; "é" (2 bytes) written so the kept tail starts mid-rune.
	out := run(t, r, dir, Command{
		Shell:  `seq 1001 4000; printf 'xé%.0s' $(seq 100) >&2`,
		Limits: Limits{Output: 100},
	})
	assert.True(t, out.Truncated)
	assert.Equal(t, int64(3000*5), out.StdoutBytes)
	assert.Equal(t, int64(300), out.StderrBytes)
	assert.Equal(t, strings.Join(strSeq(3981, 4000), "\n")+"\n", out.Stdout)
	assert.Equal(t, strings.Repeat("xé", 33), out.Stderr, "the cut character is dropped")
}

// strSeq returns the decimal numbers from..to.
func strSeq(from, to int) []string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, strconv.Itoa(i))
	}
	return s
}

func TestRunCancelKillsEverything(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		out Output
		err error
	}
	done := make(chan result, 1)
	mark := marker(t)
	go func() {
		out, err := r.Run(ctx, dir, Command{Shell: "sleep 600 & sleep 600", Env: mark})
		done <- result{out, err}
	}()
	// Wait until the command runs: both sleeps started.
	waitFor(t, func() bool { return len(markedProcesses(t, mark, "sleep")) == 2 })
	cancel()
	res := <-done
	assert.ErrorIs(t, res.err, context.Canceled)
	assert.Equal(t, "killed", res.out.Signal)
	assert.Empty(t, markedProcesses(t, mark, ""), "no process of the sandbox is left")
}

func TestRunWallClock(t *testing.T) {
	r := newTestRunner(t)
	mark := marker(t)
	out := run(t, r, newWorkspace(t, r), Command{Shell: "sleep 600 & sleep 600", Env: mark, Limits: Limits{Wall: 200 * time.Millisecond}})
	assert.Equal(t, "wall", out.Limit)
	assert.Equal(t, -1, out.ExitCode)
	assert.Empty(t, markedProcesses(t, mark, ""))
}

func TestRunBackgroundChildEndsWithTheCommand(t *testing.T) {
	r := newTestRunner(t)
	mark := marker(t)
	out := run(t, r, newWorkspace(t, r), Command{Shell: "sleep 600 & echo started", Env: mark})
	assert.Equal(t, "started\n", out.Stdout)
	assert.Empty(t, markedProcesses(t, mark, ""))
}

// waitFor waits until cond holds, checking it every few milliseconds, for at most a minute.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, time.Minute, 5*time.Millisecond)
}

// marker returns an environment that marks a test's sandbox processes (bwrap's included:
// bwrap passes its environment on) with a value of its own.
func marker(t testing.TB) map[string]string {
	var b [8]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return map[string]string{"TOOLGATE_TEST_MARK": hex.EncodeToString(b[:])}
}

// markedProcesses returns the host processes (PID:name) whose environment holds mark and whose
// command name contains comm (all of them for "").
func markedProcesses(t testing.TB, mark map[string]string, comm string) []string {
	t.Helper()
	want := []byte("TOOLGATE_TEST_MARK=" + mark["TOOLGATE_TEST_MARK"] + "\x00")
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		name, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		if strings.Contains(string(name), comm) {
			pids = append(pids, e.Name()+":"+strings.TrimSpace(string(name)))
		}
	}
	return pids
}

func TestNewRunnerChecks(t *testing.T) {
	_, err := NewRunner(RunnerConfig{Bwrap: "/nonexistent/bwrap"})
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "make setup")
	for _, bad := range []string{"usr/local", "/", "/usr/../etc", "/proc", "/dev/shm", "/workspace", "/nonexistent"} {
		_, err := NewRunner(RunnerConfig{ReadOnly: []string{bad}})
		assert.Error(t, err, bad)
	}
}
