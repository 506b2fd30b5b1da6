package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// sandboxPath is the PATH inside the sandbox (before the bin directories of
// RunnerConfig.ReadOnly).
const sandboxPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// systemDirs are the host's system directories: each is bound read-only, or recreated as the
// same symlink when it is one (merged /usr), when the host has it.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// systemEtc is the part of /etc a shell and common tools need, bound read-only when the host has
// it. None of it is a secret: never /etc/shadow, /etc/ssl/private, credentials or the host's
// resolver (there is no network).
var systemEtc = []string{
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/nsswitch.conf", "/etc/localtime", "/etc/timezone", "/etc/protocols", "/etc/services",
	"/etc/ssl/certs", "/etc/os-release", "/etc/debian_version",
}

// The descriptors bwrap is given (exec.Cmd.ExtraFiles start at 3).
const (
	fdStatus    = 3 // --json-status-fd: bwrap writes the child's PID, then its exit code
	fdWorkspace = 4 // --bind-fd: the workspace directory, opened without following symlinks
	fdPasswd    = 5 // --ro-bind-data: /etc/passwd
	fdGroup     = 6 // --ro-bind-data: /etc/group
	fdHosts     = 7 // --ro-bind-data: /etc/hosts
	// Then, each at the next descriptor: the seccomp program (--seccomp) when there is one for
	// this architecture, and for a command with AllowHosts the --block-fd it waits on for its
	// proxy.
)

// launch is one prepared sandbox start: the prlimit and bwrap command line, the environment and
// the descriptors it inherits.
type launch struct {
	args  []string   // prlimit's argv (prlimit ... -- bwrap ... -- command)
	env   []string   // the sandbox's whole environment (bwrap passes its own on)
	files []*os.File // ExtraFiles: fd 3, 4, ...; closed in this process after Start
	// release, for a command with AllowHosts, is the write end of its --block-fd: writing to it
	// (once the proxy listens) lets the command start.
	release *os.File
}

// prlimitArgs returns the options of prlimit that set lim's rlimits. RLIMIT_CPU's soft limit
// sends SIGXCPU, the hard one a second later SIGKILL. Processes 0 sets no RLIMIT_NPROC (the
// sandbox's pids group counts its processes).
func prlimitArgs(lim Limits) []string {
	cpu := max(int64(lim.CPU.Seconds()), 1)
	args := []string{
		fmt.Sprintf("--cpu=%d:%d", cpu, cpu+1),
		"--as=" + strconv.FormatInt(lim.Memory, 10),
		"--nofile=" + strconv.Itoa(lim.OpenFiles),
		"--fsize=" + strconv.FormatInt(lim.FileSize, 10),
		"--core=0",
	}
	if lim.Processes > 0 {
		args = append(args, "--nproc="+strconv.Itoa(lim.Processes))
	}
	return args
}

// bwrapArgs returns bwrap's options for a command in the sandbox working directory workdir
// (absolute, under /workspace). The descriptors are the fd* constants.
func (r *Runner) bwrapArgs(lim Limits, workdir string) []string {
	args := []string{
		// Every namespace (network included: no --share-net ever), no nested user namespaces.
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--json-status-fd", strconv.Itoa(fdStatus),
	}
	for _, dir := range systemDirs {
		fi, err := os.Lstat(dir)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(dir); err == nil {
				args = append(args, "--symlink", target, dir)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", dir, dir)
		}
	}
	for _, p := range systemEtc {
		if _, err := os.Stat(p); err == nil {
			args = append(args, "--ro-bind", p, p)
		}
	}
	args = append(args,
		"--ro-bind-data", strconv.Itoa(fdPasswd), "/etc/passwd",
		"--ro-bind-data", strconv.Itoa(fdGroup), "/etc/group",
		"--ro-bind-data", strconv.Itoa(fdHosts), "/etc/hosts",
	)
	tmp := strconv.FormatInt(lim.Tmp, 10)
	args = append(args,
		"--proc", "/proc", "--dev", "/dev",
		"--size", tmp, "--tmpfs", "/dev/shm",
		"--size", tmp, "--tmpfs", "/tmp",
	)
	// After /tmp: a read-only path may lie under it.
	for _, p := range r.cfg.ReadOnly {
		args = append(args, "--ro-bind", p, p)
	}
	return append(args,
		"--bind-fd", strconv.Itoa(fdWorkspace), "/workspace",
		// The root and /dev are bwrap's own tmpfs mounts, without a size: read-only, so the
		// only writable places are the workspace and the sized /tmp and /dev/shm.
		"--remount-ro", "/dev", "--remount-ro", "/",
		"--chdir", workdir,
	)
}

// etcFiles returns the contents of the sandbox's /etc/passwd, /etc/group and /etc/hosts: the
// sandbox user (named "sandbox", home /workspace) and root, nothing of the host's.
func etcFiles(uid, gid int) (passwd, group, hosts string) {
	passwd = "root:x:0:0:root:/root:/bin/sh\n"
	group = "root:x:0:\n"
	if uid != 0 {
		passwd += fmt.Sprintf("sandbox:x:%d:%d:sandbox:/workspace:/bin/sh\n", uid, gid)
	}
	if gid != 0 {
		group += fmt.Sprintf("sandbox:x:%d:\n", gid)
	}
	hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost\n"
	return passwd, group, hosts
}

// dataPipe returns the read end of a pipe that holds data (small: it fits the pipe's buffer) and
// then ends.
func dataPipe(data string) (*os.File, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer wr.Close()
	if _, err := wr.WriteString(data); err != nil {
		rd.Close()
		return nil, err
	}
	return rd, nil
}

// sandboxEnv returns the command's whole environment: env (validated) with PATH, HOME and TMPDIR
// (and the proxy's variables when proxied) set by the sandbox, sorted.
func (r *Runner) sandboxEnv(env map[string]string, proxied bool) []string {
	path := sandboxPath
	for _, p := range slices.Backward(r.cfg.ReadOnly) {
		if fi, err := os.Stat(filepath.Join(p, "bin")); err == nil && fi.IsDir() {
			path = filepath.Join(p, "bin") + ":" + path
		}
	}
	out := []string{"PATH=" + path, "HOME=/workspace", "TMPDIR=/tmp"}
	for name, value := range env {
		out = append(out, name+"="+value)
	}
	if proxied {
		for _, name := range proxyEnv {
			out = append(out, name+"="+proxyURL)
		}
	}
	slices.Sort(out)
	return out
}
