package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// platformSupported: bubblewrap runs here.
func platformSupported() error { return nil }

// execute runs argv in the sandbox of workspace dir (cmd is checked, lim complete).
// allow, when set, are the "host:port" its proxy lets it reach.
func (r *Runner) execute(ctx context.Context, dir string, argv []string, workdir string, cmd Command, lim Limits, allow map[string]bool) (Output, error) {
	l, err := r.prepare(dir, argv, workdir, cmd.Env, lim, allow != nil)
	if err != nil {
		return Output{}, err
	}
	// supervise runs on a thread of its own, locked to it: the parent-death signal follows the
	// thread that forked bwrap, and that thread enters the sandbox's control groups to fork it.
	// A thread that could not leave them ends with the goroutine (never reused by the worker).
	type result struct {
		out Output
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer func() {
			// A panic is the caller's error, as it was on the caller's goroutine; the thread,
			// in whatever state, ends with this goroutine.
			if v := recover(); v != nil {
				done <- result{err: fmt.Errorf("sandbox: supervising the command panicked: %v", v)}
			}
		}()
		out, err, left := r.supervise(ctx, l, lim, dir, cmd.Stdin, allow)
		if left {
			runtime.UnlockOSThread()
		}
		done <- result{out, err}
	}()
	res := <-done
	return res.out, res.err
}

// prepare builds the launch of argv in workspace dir.
func (r *Runner) prepare(dir string, argv []string, workdir string, env map[string]string, lim Limits, proxied bool) (l *launch, err error) {
	if err := closeOnExec(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	l = &launch{env: r.sandboxEnv(env, proxied)}
	defer func() {
		if err != nil {
			l.closeFiles()
		}
	}()
	// fdStatus is filled by supervise; a placeholder keeps the numbering.
	l.files = append(l.files, nil)
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return l, fmt.Errorf("sandbox workspace %s: %w", dir, err)
	}
	l.files = append(l.files, os.NewFile(uintptr(fd), dir))
	passwd, group, hosts := etcFiles(r.uid, r.gid)
	for _, data := range []string{passwd, group, hosts} {
		f, err := dataPipe(data)
		if err != nil {
			return l, fmt.Errorf("sandbox: %w", err)
		}
		l.files = append(l.files, f)
	}
	if !r.switchUser {
		// RLIMIT_NPROC counts every process of the host user, and a worker that is not root
		// runs the sandbox as itself: the limit is on top of what the user runs already.
		lim.Processes += userTasks(r.uid)
	}
	if r.cgroups != nil {
		lim.Processes = 0 // counted per sandbox by its pids group, not per host user
	}
	l.args = append([]string{"prlimit"}, prlimitArgs(lim)...)
	l.args = append(l.args, "--", r.bwrap)
	l.args = append(l.args, r.bwrapArgs(lim, workdir)...)
	if filter := seccompFilter(); filter != nil {
		f, err := dataPipe(string(filter))
		if err != nil {
			return l, fmt.Errorf("sandbox: %w", err)
		}
		l.args = append(l.args, "--seccomp", strconv.Itoa(3+len(l.files)))
		l.files = append(l.files, f)
	}
	if proxied {
		rd, wr, err := os.Pipe()
		if err != nil {
			return l, fmt.Errorf("sandbox: %w", err)
		}
		l.args = append(l.args, "--block-fd", strconv.Itoa(3+len(l.files)))
		l.files, l.release = append(l.files, rd), wr
	}
	l.args = append(l.args, "--")
	l.args = append(l.args, argv...)
	return l, nil
}

// supervise starts l and waits for it, killing the sandbox's process tree when ctx ends, the
// wall clock runs out or the workspace grows beyond lim.Workspace. It runs on a locked thread;
// left is false when that thread could not leave the sandbox's control groups.
// With allow, the command waits (bwrap's --block-fd) until its proxy listens in its network
// namespace.
func (r *Runner) supervise(ctx context.Context, l *launch, lim Limits, dir string, stdin []byte, allow map[string]bool) (_ Output, _ error, left bool) {
	left = true
	defer func() {
		if l.release != nil {
			l.release.Close()
		}
	}()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		l.closeFiles()
		return Output{}, fmt.Errorf("sandbox: %w", err), left
	}
	l.files[0] = statusW
	stdout, stderr := &tail{max: lim.Output}, &tail{max: lim.Output}
	c := &exec.Cmd{
		Path: r.prlimit, Args: l.args, Env: l.env, Dir: "/",
		Stdout: stdout, Stderr: stderr, ExtraFiles: l.files,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
			Credential: r.credential(),
		},
		// Every holder of the output pipes is in the sandbox and dies with it; this only bounds
		// the wait should the kernel be slow.
		WaitDelay: 10 * time.Second,
	}
	if len(stdin) > 0 {
		c.Stdin = bytes.NewReader(stdin)
	}
	var cg *sandboxCgroup
	if r.cgroups != nil {
		if cg, err = r.cgroups.create(lim); err == nil {
			defer cg.remove() // after the sandbox is gone (awaitGone)
			err = cg.enter()
		}
		if err != nil {
			l.closeFiles()
			statusR.Close()
			return Output{}, fmt.Errorf("sandbox control groups: %w", err), left
		}
	}
	started := time.Now()
	err = c.Start()
	if cg != nil {
		if lerr := cg.leave(); lerr != nil {
			left = false
			err = errors.Join(err, fmt.Errorf("leave the sandbox's control groups: %w", lerr))
			if c.Process != nil {
				syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
				c.Wait()
			}
		}
	}
	l.closeFiles()
	if err != nil {
		statusR.Close()
		return Output{}, fmt.Errorf("sandbox start: %w", err), left
	}
	st := readStatus(statusR)
	waited := make(chan error, 1)
	go func() { waited <- c.Wait() }()

	pgid := c.Process.Pid
	kill := func() {
		if pid := st.child.Load(); pid > 0 && parentOf(int(pid)) == pgid {
			// The sandbox's init: the kernel kills the rest of its PID namespace, and bwrap
			// (waiting for it) reports the kill.
			syscall.Kill(int(pid), syscall.SIGKILL)
			return
		}
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	wall := time.NewTimer(lim.Wall)
	defer wall.Stop()
	every := watchEvery
	watch := time.NewTimer(every)
	defer watch.Stop()
	var limit string
	var ctxErr, waitErr, proxyErr error
	ctxDone := ctx.Done()
	var known <-chan struct{} // the sandbox's init is known: start the proxy
	if allow != nil {
		known = st.known
	}
wait:
	for {
		select {
		case waitErr = <-waited:
			break wait
		case <-known:
			known = nil
			p, err := r.startProxy(int(st.child.Load()), pgid, allow)
			if err != nil {
				proxyErr = err
				kill()
				break
			}
			defer p.close()
			l.release.Write([]byte{1})
			l.release.Close()
			l.release = nil
		case <-ctxDone:
			ctxDone = nil // closed for good: select it once
			ctxErr = ctx.Err()
			kill()
		case <-wall.C:
			if limit == "" {
				limit = "wall"
			}
			kill()
		case <-watch.C:
			t := time.Now()
			if workspaceBytes(dir, lim.Workspace) > lim.Workspace {
				if limit == "" {
					limit = "workspace"
				}
				kill()
			}
			every = max(watchEvery, 4*time.Since(t))
			watch.Reset(every)
		}
	}
	<-st.done
	if err := st.awaitGone(); err != nil {
		return Output{}, err, left
	}
	if proxyErr != nil {
		return Output{}, fmt.Errorf("sandbox proxy: %w", proxyErr), left
	}
	if limit == "" && cg != nil && cg.oomKilled() {
		limit = "memory"
	}
	out := Output{
		Stdout: stdout.String(), Stderr: stderr.String(),
		StdoutBytes: stdout.total, StderrBytes: stderr.total,
		Truncated: stdout.truncated() || stderr.truncated(),
		Limit:     limit,
		Duration:  time.Since(started),
	}
	if cg != nil {
		out.Throttled = cg.throttled()
	}
	code, ok := st.exitCode()
	switch {
	case ok:
		out.ExitCode = code
	case c.ProcessState != nil && c.ProcessState.Exited() && st.child.Load() == 0 && ctxErr == nil && limit == "":
		// bwrap itself failed before the command started; its message is on stderr.
		return Output{}, fmt.Errorf("sandbox start: bubblewrap exit %d: %s", c.ProcessState.ExitCode(), truncate(strings.TrimSpace(out.Stderr), 1024)), left
	case c.ProcessState != nil && c.ProcessState.Exited():
		out.ExitCode = c.ProcessState.ExitCode()
	case c.ProcessState != nil:
		if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		out.ExitCode = code
	default:
		return Output{}, fmt.Errorf("sandbox wait: %w", waitErr), left
	}
	if n := out.ExitCode - 128; n > 0 && n <= 64 {
		sig := syscall.Signal(n)
		out.ExitCode, out.Signal = -1, sig.String()
		if out.Limit == "" && sig == syscall.SIGXCPU {
			out.Limit = "cpu"
		}
		if out.Limit == "" && sig == syscall.SIGXFSZ {
			out.Limit = "fileSize"
		}
	}
	if ctxErr != nil {
		return out, ctxErr, left
	}
	return out, nil, left
}

// status is what bwrap reports on its --json-status-fd: the sandbox's init (its host PID and
// PID namespace) and, at the end, the command's exit code.
type status struct {
	child atomic.Int64 // the host PID of the sandbox's init (PID 1 inside), once reported
	pidNS atomic.Uint64
	code  atomic.Int64 // exit code + 1; 0: not reported
	done  chan struct{}
	known chan struct{} // closed once child is set
}

// readStatus reads bwrap's status documents from rd until it ends.
func readStatus(rd io.ReadCloser) *status {
	st := &status{done: make(chan struct{}), known: make(chan struct{})}
	go func() {
		defer close(st.done)
		defer rd.Close()
		// Only bwrap writes here (the sandbox's processes do not hold the descriptor); the
		// documents are a few hundred bytes.
		dec := json.NewDecoder(io.LimitReader(rd, 64<<10))
		for {
			var doc struct {
				ChildPID *int64  `json:"child-pid"`
				PIDNS    *uint64 `json:"pid-namespace"`
				ExitCode *int64  `json:"exit-code"`
			}
			if err := dec.Decode(&doc); err != nil {
				io.Copy(io.Discard, rd)
				return
			}
			if doc.ChildPID != nil && *doc.ChildPID > 0 && st.child.Load() == 0 {
				if doc.PIDNS != nil {
					st.pidNS.Store(*doc.PIDNS)
				}
				st.child.Store(*doc.ChildPID)
				close(st.known)
			}
			if doc.ExitCode != nil {
				st.code.Store(*doc.ExitCode + 1)
			}
		}
	}()
	return st
}

// exitCode returns the command's exit code, if bwrap reported it.
func (st *status) exitCode() (int, bool) {
	c := st.code.Load()
	return int(c - 1), c > 0
}

// awaitGone returns once the sandbox's PID namespace is empty: its init is gone or a zombie
// (the kernel lets a namespace's init finish exiting only after every other process in it).
// bwrap waits for its init, so this returns at once unless bwrap itself was killed.
func (st *status) awaitGone() error {
	pid := st.child.Load()
	if pid <= 0 {
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		if !alive(int(pid), st.pidNS.Load()) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox: the processes of sandbox init %d did not end within a minute of being killed", pid)
		}
		time.Sleep(pause)
	}
}

// alive reports whether pid is still the (not yet exited) init of the PID namespace ns.
func alive(pid int, ns uint64) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	if state, _ := procStat(pid); state == 0 || state == 'Z' || state == 'X' {
		return false
	}
	link, err := os.Readlink(proc + "/ns/pid")
	if err != nil {
		return false
	}
	return ns == 0 || link == "pid:["+strconv.FormatUint(ns, 10)+"]"
}

// userTasks returns how many tasks (threads included, as RLIMIT_NPROC counts them) the host user
// uid runs.
func userTasks(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+e.Name(), &st) != nil || int(st.Uid) != uid {
			continue
		}
		// A task directory links its subdirectories (one per thread), "." and "..".
		if syscall.Stat("/proc/"+e.Name()+"/task", &st) == nil && st.Nlink > 2 {
			n += int(st.Nlink) - 2
		} else {
			n++
		}
	}
	return n
}

// parentOf returns the parent PID of pid, or 0.
func parentOf(pid int) int {
	_, ppid := procStat(pid)
	return ppid
}

// procStat returns the state letter and parent PID of pid from /proc/PID/stat (0, 0 when it is
// gone).
func procStat(pid int) (state byte, ppid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	// pid (comm) state ppid ...: comm may hold anything, so parse after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(fields[1])
	return fields[0][0], ppid
}

// credential is the host user the sandbox runs as: the configured one when the worker is root,
// else nil (the worker's own).
func (r *Runner) credential() *syscall.Credential {
	if !r.switchUser {
		return nil
	}
	return &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.gid), Groups: []uint32{}}
}

// closeFiles closes the launch's descriptors (after Start, or when it cannot start).
func (l *launch) closeFiles() {
	for _, f := range l.files {
		if f != nil {
			f.Close()
		}
	}
}

// closeOnExec marks every descriptor of this process above stderr close-on-exec. Go opens its own
// that way, but a descriptor the worker inherited without it (from a shell, a supervisor) would
// otherwise pass through prlimit and bwrap, which close nothing, into the sandbox.
func closeOnExec() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed since the listing (ReadDir's own), or marked already
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
			return fmt.Errorf("mark descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}
