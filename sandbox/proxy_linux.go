package sandbox

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// startProxy starts the proxy of allow listening on proxyAddr in the network namespace of the
// sandbox whose init is pid (a child of bwrap, bwrapPID).
func (r *Runner) startProxy(pid, bwrapPID int, allow map[string]bool) (*proxy, error) {
	if pid <= 0 || parentOf(pid) != bwrapPID {
		return nil, fmt.Errorf("the sandbox's init %d is not bwrap's child", pid)
	}
	ln, err := listenInNetNS(pid, proxyAddr)
	if err != nil {
		return nil, err
	}
	p := newProxy(allow, r.cfg.Dial)
	p.serve(ln)
	return p, nil
}

// listenInNetNS listens on the TCP address addr in the network namespace of process pid: a
// thread of its own enters the namespace, makes the socket (which stays in it) and returns to
// this process's namespace. Entering needs CAP_SYS_ADMIN (a worker running as root).
func listenInNetNS(pid int, addr string) (net.Listener, error) {
	target, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, fmt.Errorf("sandbox network namespace: %w", err)
	}
	defer target.Close()
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// Unlocked only once back in this process's namespace: a thread left in the
		// sandbox's ends with this goroutine.
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("own network namespace: %w", err)}
			return
		}
		defer self.Close()
		if err := setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("enter the sandbox's network namespace: %w", err)}
			return
		}
		ln, err := net.Listen("tcp4", addr)
		if setns(self, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{ln, err}
	}()
	res := <-done
	return res.ln, res.err
}

// setns moves the calling thread into the namespace f names.
func setns(f *os.File, nstype int) error {
	return unix.Setns(int(f.Fd()), nstype)
}
