package testbin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Dev is a running `toolgate dev` process.
type Dev struct {
	// Ready holds the lines toolgate dev printed when it was ready, by their first word:
	// "frontend", "ui", "codec-server", "metrics", "namespace", "task-queue", "data".
	Ready map[string]string

	cmd    *exec.Cmd
	exited chan struct{}
	stderr *SyncBuffer
}

// StartDev runs `toolgate dev args...` (the binary of Toolgate) with env (nil: this process's
// environment without TEMPORAL_* and TOOLGATE_* variables) and returns once it printed its ready
// lines ("data" is the last), or an error with the tail of its stderr. The caller stops it.
func StartDev(ctx context.Context, env []string, args ...string) (*Dev, error) {
	bin, err := Toolgate()
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = ChildEnv()
	}
	cmd := exec.Command(bin, append([]string{"dev"}, args...)...)
	cmd.Env = env
	d := &Dev{Ready: map[string]string{}, cmd: cmd, exited: make(chan struct{}), stderr: &SyncBuffer{}}
	cmd.Stderr = d.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start toolgate dev: %w", err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody reads after ready: drop, never block the process
			}
		}
	}()
	go func() {
		_ = cmd.Wait() // after stdout reaches EOF: Wait closes the pipe
		close(d.exited)
	}()
	for d.Ready["data"] == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				<-d.exited
				return nil, fmt.Errorf("toolgate dev exited before it was ready: %v\n%s", cmd.ProcessState, d.StderrTail(4000))
			}
			key, value, _ := strings.Cut(line, " ")
			d.Ready[key] = value
		case <-ctx.Done():
			_ = d.Stop(0)
			return nil, fmt.Errorf("toolgate dev was not ready: %w\n%s", ctx.Err(), d.StderrTail(4000))
		}
	}
	if d.Ready["frontend"] == "" || d.Ready["namespace"] == "" {
		_ = d.Stop(0)
		return nil, fmt.Errorf("toolgate dev printed no frontend or namespace line: %v", d.Ready)
	}
	return d, nil
}

// Frontend is the frontend's host:port.
func (d *Dev) Frontend() string { return d.Ready["frontend"] }

// Namespace is the namespace toolgate dev serves.
func (d *Dev) Namespace() string { return d.Ready["namespace"] }

// StderrTail is the last n bytes toolgate dev wrote to stderr.
func (d *Dev) StderrTail(n int) string { return Tail(d.stderr.String(), n) }

// Stop interrupts toolgate dev (Ctrl-C) and waits up to timeout for it to exit, then kills it.
// It returns an error if the process had to be killed.
func (d *Dev) Stop(timeout time.Duration) error {
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case <-d.exited:
		return nil
	case <-time.After(timeout):
	}
	_ = d.cmd.Process.Kill()
	<-d.exited
	if timeout == 0 {
		return nil
	}
	return errors.New("toolgate dev did not stop within " + timeout.String() + " of Ctrl-C")
}

// ChildEnv is this process's environment without TEMPORAL_* and TOOLGATE_* variables, plus extra:
// a child toolgate reads only what the test gives it.
func ChildEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TEMPORAL_") || strings.HasPrefix(kv, "TOOLGATE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// SyncBuffer is a bytes.Buffer that processes and goroutines may write to at once.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail is the last n bytes of s, marked with "..." when cut.
func Tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
