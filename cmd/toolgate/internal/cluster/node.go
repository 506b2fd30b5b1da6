package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/testbin"
)

// nodeStopTimeout bounds a node's graceful stop before it is killed.
const nodeStopTimeout = 20 * time.Second

// Node is one server process of a [Cluster]. It can be killed and started again on the same
// ports.
type Node struct {
	binary string
	spec   NodeSpec

	mu   sync.Mutex
	cmd  *exec.Cmd           // nil when not running
	done chan struct{}       // closed when cmd has exited
	log  *testbin.SyncBuffer // the current process's stderr
}

// Spec is the node's configuration input.
func (n *Node) Spec() NodeSpec { return n.spec }

// Frontend is the node's frontend "127.0.0.1:port".
func (n *Node) Frontend() string { return n.spec.Frontend() }

// start starts the node's process and returns once it printed "ready" (its services started).
func (n *Node) start(ctx context.Context) error {
	specJSON, err := json.Marshal(n.spec)
	if err != nil {
		return err
	}
	n.mu.Lock()
	if n.cmd != nil {
		n.mu.Unlock()
		return fmt.Errorf("node %s is running", n.Frontend())
	}
	cmd := exec.Command(n.binary)
	cmd.Env = append(os.Environ(), EnvNodeSpec+"="+string(specJSON))
	cmd.SysProcAttr = childAttr(nil)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		n.mu.Unlock()
		return err
	}
	n.log = &testbin.SyncBuffer{}
	cmd.Stderr = n.log
	if err := cmd.Start(); err != nil {
		n.mu.Unlock()
		return fmt.Errorf("start node %s: %w", n.Frontend(), err)
	}
	done := make(chan struct{})
	n.cmd, n.done = cmd, done
	n.mu.Unlock()

	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				close(ready)
				break
			}
		}
		for sc.Scan() { // keep draining: the node must never block on stdout
		}
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-ready:
		return nil
	case <-done:
		return fmt.Errorf("node %s exited while starting:\n%s", n.Frontend(), testbin.Tail(n.log.String(), logTail))
	case <-ctx.Done():
		return fmt.Errorf("node %s not ready: %w\n%s", n.Frontend(), context.Cause(ctx), testbin.Tail(n.log.String(), logTail))
	}
}

// Kill sends SIGKILL to the node's process and waits until it has exited. Killing a stopped node
// does nothing.
func (n *Node) Kill() {
	n.signalAndWait(syscall.SIGKILL, 0)
}

// Stop stops the node gracefully (SIGTERM), killing it after a timeout.
func (n *Node) Stop() {
	n.signalAndWait(syscall.SIGTERM, nodeStopTimeout)
}

func (n *Node) signalAndWait(sig syscall.Signal, timeout time.Duration) {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
			_ = cmd.Process.Kill()
		}
	}
	<-done
}

// Log is what the node's current (or last) process wrote to stderr.
func (n *Node) Log() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.log == nil {
		return ""
	}
	return n.log.String()
}

// logTail bounds the log an error quotes.
const logTail = 4096
