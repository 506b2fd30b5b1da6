package faults_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
)

// proc is a child process: its stdout lines are kept in order, stderr in a buffer for failure
// messages (and parsing).
type proc struct {
	name string
	cmd  *exec.Cmd

	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced when a line arrives or the process exits
	stderr  bytes.Buffer
	done    bool

	exited chan struct{}
	state  *os.ProcessState
}

// startProc starts path with args; the caller stops it (kill, interrupt) or registers cleanup.
func startProc(name, path string, args ...string) (*proc, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = childEnv()
	dieWithParent(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, changed: make(chan struct{}), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	var pipes sync.WaitGroup
	pipes.Go(func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stdout)
	})
	pipes.Go(func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := stderr.Read(buf)
			p.mu.Lock()
			p.stderr.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	})
	go func() {
		pipes.Wait()
		_ = cmd.Wait()
		p.mu.Lock()
		p.state = cmd.ProcessState
		p.done = true
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		close(p.exited)
	}()
	return p, nil
}

// start starts a process that is killed when the test ends.
func start(t *testing.T, name, path string, args ...string) *proc {
	t.Helper()
	p, err := startProc(name, path, args...)
	require.NoError(t, err)
	t.Cleanup(p.stop)
	return p
}

// childEnv is this process's environment without TEMPORAL_* and TOOLGATE_* variables.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TEMPORAL_") || strings.HasPrefix(kv, "TOOLGATE_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// stop kills the process if it still runs and waits for it.
func (p *proc) stop() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL), "kill %s", p.name)
	<-p.exited
}

// interrupt sends SIGINT and waits for the exit (bounded).
func (p *proc) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	select {
	case <-p.exited:
	case <-time.After(readyTimeout):
		require.FailNow(t, p.name+" did not exit after SIGINT", p.stderrText())
	}
}

func (p *proc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stderr.String()
	if len(s) > 8<<10 {
		s = "..." + s[len(s)-8<<10:]
	}
	return s
}

func (p *proc) stderrAll() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *proc) stdoutLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// waitLines waits until cond holds for the stdout lines so far; it fails the test if the process
// exits first or the deadline passes.
func (p *proc) waitLines(t *testing.T, what string, timeout time.Duration, cond func([]string) bool) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		p.mu.Lock()
		lines := append([]string(nil), p.lines...)
		changed, done := p.changed, p.done
		p.mu.Unlock()
		if cond(lines) {
			return lines
		}
		if done {
			require.FailNow(t, p.name+" exited before "+what, "exit %v; stderr:\n%s", p.state, p.stderrText())
		}
		select {
		case <-changed:
		case <-deadline:
			require.FailNow(t, p.name+": timed out waiting for "+what, "stderr:\n%s", p.stderrText())
		}
	}
}

// waitExit waits for the process to end and returns its exit code.
func (p *proc) waitExit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.state.ExitCode()
	case <-time.After(timeout):
		require.FailNow(t, p.name+" did not exit", p.stderrText())
		return -1
	}
}

// devServer is a running `toolgate dev --no-ui`.
type devServer struct {
	*proc
	frontend string
	port     string
	dataDir  string
}

// startDev starts `toolgate dev` on dataDir and port ("0": any free port) and waits until ready.
func startDev(toolgate, dataDir, port string) (*devServer, error) {
	p, err := startProc("toolgate dev", toolgate, "dev", "--no-ui", "--data-dir", dataDir, "--port", port,
		"--log-level", "warn", "--server-log-level", "error", "--task-queue", "toolgate-dev-unused")
	if err != nil {
		return nil, err
	}
	d := &devServer{proc: p, dataDir: dataDir}
	deadline := time.After(readyTimeout)
	for {
		p.mu.Lock()
		lines, changed, done := append([]string(nil), p.lines...), p.changed, p.done
		p.mu.Unlock()
		for _, line := range lines {
			if addr, ok := strings.CutPrefix(line, "frontend "); ok {
				d.frontend = addr
				_, d.port, _ = strings.Cut(addr, ":")
			}
			if strings.HasPrefix(line, "data ") && d.frontend != "" {
				return d, nil
			}
		}
		if done {
			return nil, fmt.Errorf("toolgate dev exited before ready: %v\n%s", p.state, p.stderrText())
		}
		select {
		case <-changed:
		case <-deadline:
			p.stop()
			return nil, fmt.Errorf("toolgate dev not ready in %v\n%s", readyTimeout, p.stderrText())
		}
	}
}

// newDev starts a dev server of its own for t, killed when the test ends.
func newDev(t *testing.T, dataDir, port string) *devServer {
	t.Helper()
	toolgate, _ := built(t)
	d, err := startDev(toolgate, dataDir, port)
	require.NoError(t, err)
	t.Cleanup(d.stop)
	return d
}

// shared is the dev server the scenarios share when the server itself is not the fault.
var shared struct {
	once sync.Once
	dev  *devServer
	dir  string
	err  error
}

func sharedDev(t *testing.T) *devServer {
	t.Helper()
	toolgate, _ := built(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "toolgate-faults-dev-")
		if shared.err != nil {
			return
		}
		shared.dev, shared.err = startDev(toolgate, shared.dir, "0")
	})
	require.NoError(t, shared.err)
	return shared.dev
}

func stopSharedDev() {
	if shared.dev != nil {
		shared.dev.stop()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
}

// queues numbers task queues so scenarios never share one.
var queues atomic.Int64

func taskQueue(t *testing.T) string {
	return fmt.Sprintf("faults-%s-%d", strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()), queues.Add(1))
}

// fixture is one scenario's task queue, ledger and gate directory.
type fixture struct {
	dev    *devServer
	queue  string
	dir    string
	ledger string
	watch  *ledgerWatch
}

func newFixture(t *testing.T, dev *devServer) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dev: dev, queue: taskQueue(t), dir: dir, ledger: filepath.Join(dir, "ledger.jsonl")}
	f.watch = watchLedger(t, f.ledger)
	return f
}

// unknownToolMessage is the TOOL_NOT_FOUND message a faultworker on the fixture's queue records
// for a call to name: it names the queue and the worker's tools (faults.Registry's).
func (f *fixture) unknownToolMessage(t *testing.T, name string) string {
	t.Helper()
	reg, err := faults.Registry(faults.Config{Ledger: filepath.Join(t.TempDir(), "names.jsonl")})
	require.NoError(t, err)
	return toolcore.UnknownToolOnQueueMessage(name, f.queue, reg.Names())
}

// startWorker starts a faultworker on the fixture's queue and waits until it polls.
func (f *fixture) startWorker(t *testing.T, hold bool) *proc {
	t.Helper()
	_, fw := built(t)
	args := []string{"worker", "-address", f.dev.frontend, "-task-queue", f.queue, "-ledger", f.ledger}
	if hold {
		args = append(args, "-hold")
	}
	p := start(t, "faultworker", fw, args...)
	p.waitLines(t, "ready", readyTimeout, func(lines []string) bool { return len(lines) > 0 && strings.HasPrefix(lines[0], "ready ") })
	return p
}

// open creates the gate file name: attempts waiting on it go on.
func (f *fixture) open(t *testing.T, gate string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, gate), nil, 0o600))
}

// sdkClient dials the server; SDK warnings go to stderr.
func sdkClient(t *testing.T, dev *devServer) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort: dev.frontend,
		Logger:   sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))),
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func (f *fixture) client(t *testing.T) (*tgclient.Client, client.Client) {
	t.Helper()
	sdk := sdkClient(t, f.dev)
	return tgclient.New(sdk, tgclient.Options{TaskQueue: f.queue}), sdk
}

// call builds a tool call of id and tool with arguments a (faults.Args for the fault tools).
func call(t testing.TB, id, tool string, a any) toolcore.ToolCall {
	t.Helper()
	args, err := json.Marshal(a)
	require.NoError(t, err)
	c, err := toolcore.NewToolCall(id, tool, args)
	require.NoError(t, err)
	return c
}

// ledgerWatch tails a ledger file and lets tests wait for records.
type ledgerWatch struct {
	path string

	mu      sync.Mutex
	records []faults.Record
	tally   faults.Tally
	changed chan struct{}
	err     error
}

// ledgerPoll is how often the watcher looks for new lines (a poll of a real file, not a wait).
const ledgerPoll = 5 * time.Millisecond

func watchLedger(t *testing.T, path string) *ledgerWatch {
	w := &ledgerWatch{path: path, tally: faults.Tally{}, changed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		w.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return w
}

func (w *ledgerWatch) run(ctx context.Context) {
	var offset int64
	var partial []byte
	tick := time.NewTicker(ledgerPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		f, err := os.Open(w.path)
		if os.IsNotExist(err) {
			continue
		}
		if err == nil {
			var data []byte
			if _, err = f.Seek(offset, io.SeekStart); err == nil {
				data, err = io.ReadAll(f)
			}
			_ = f.Close()
			offset += int64(len(data))
			partial = append(partial, data...)
		}
		var fresh []faults.Record
		for err == nil {
			i := bytes.IndexByte(partial, '\n')
			if i < 0 {
				break
			}
			var r faults.Record
			err = json.Unmarshal(partial[:i], &r)
			partial = partial[i+1:]
			fresh = append(fresh, r)
		}
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		for _, r := range fresh {
			w.records = append(w.records, r)
			if w.tally[r.Call] == nil {
				w.tally[r.Call] = map[faults.Kind]int{}
			}
			w.tally[r.Call][r.Kind]++
		}
		if len(fresh) > 0 || err != nil {
			close(w.changed)
			w.changed = make(chan struct{})
		}
		w.mu.Unlock()
	}
}

// wait waits until cond holds for the tally (bounded by outcomeTimeout).
func (w *ledgerWatch) wait(t *testing.T, what string, cond func(faults.Tally) bool) {
	t.Helper()
	require.NoError(t, w.waitErr(outcomeTimeout, cond), what)
}

// waitErr is wait for goroutines: it returns an error instead of failing the test.
func (w *ledgerWatch) waitErr(timeout time.Duration, cond func(faults.Tally) bool) error {
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		ok, changed, err := cond(w.tally), w.changed, w.err
		w.mu.Unlock()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-deadline:
			return fmt.Errorf("ledger %s: condition not met in %v", w.path, timeout)
		}
	}
}

// snapshot returns the records so far, reading the file once more so nothing written before the
// call is missed.
func (w *ledgerWatch) snapshot(t *testing.T) []faults.Record {
	t.Helper()
	records, err := faults.ReadLedger(w.path)
	require.NoError(t, err)
	return records
}

// figures are a scenario's published numbers: calls, faults injected, and what must be 0.
type figures struct {
	Scenario   string         `json:"scenario"`
	Soak       bool           `json:"soak"`
	Calls      int            `json:"calls"`
	Faults     int            `json:"faults"`
	Lost       int            `json:"lost"`
	Duplicated int            `json:"duplicated"`
	Hung       int            `json:"hung"`
	Seconds    float64        `json:"seconds"`
	Detail     map[string]int `json:"detail,omitempty"`
}

// report logs the figures, appends them to -faults.report, and asserts lost, duplicated and hung
// are 0.
func report(t *testing.T, f figures, started time.Time) {
	t.Helper()
	f.Soak = *soak
	f.Seconds = time.Since(started).Round(100 * time.Millisecond).Seconds()
	line, err := json.Marshal(f)
	require.NoError(t, err)
	t.Logf("FIGURES %s", line)
	if *reportPath != "" {
		out, err := os.OpenFile(*reportPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		require.NoError(t, err)
		_, err = out.Write(append(line, '\n'))
		require.NoError(t, errors.Join(err, out.Close()))
	}
	assert.Zero(t, f.Lost, "lost calls")
	assert.Zero(t, f.Duplicated, "duplicated executions")
	assert.Zero(t, f.Hung, "hung calls")
}
