package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// RunnerConfig is how a worker runs sandboxed commands.
type RunnerConfig struct {
	// Bwrap is the bubblewrap executable. Optional: default "bwrap" found in PATH.
	Bwrap string
	// UID and GID are the host user the sandbox runs as when the worker runs as root (a worker
	// that is not root runs it as itself). Optional: default 65534 (nobody); 0 takes the default.
	UID, GID int
	// ReadOnly are extra host paths bound read-only at the same path inside (e.g. /usr/local/go
	// for a Go toolchain, though /usr is bound already); the bin directory of each is put in
	// front of PATH. Each must be absolute and exist. Optional.
	ReadOnly []string
	// Limits are the default limits of every command. Optional: default DefaultLimits.
	Limits Limits
	// Dial connects the proxy of a command with AllowHosts to an allowed "host:port"; it must
	// refuse private, loopback and metadata addresses (the worker passes the guarded dialer of
	// toolbox's http_get). Optional: without it a command with AllowHosts fails with
	// ErrUnavailable.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Command is one command to run in a workspace.
type Command struct {
	// Argv is the program and its arguments; Shell, when set instead, is run as /bin/sh -c Shell.
	// Exactly one of them.
	Argv  []string
	Shell string
	// Stdin is the command's standard input. Optional: default empty.
	Stdin []byte
	// Env is the command's whole environment besides PATH, HOME and TMPDIR, which the sandbox
	// sets (HOME=/workspace, TMPDIR=/tmp) and Env may not. Names are [A-Za-z_][A-Za-z0-9_]*.
	// The host's environment never reaches the command. Optional.
	Env map[string]string
	// Dir is the working directory, relative to the workspace root; it must stay inside and be
	// a directory there (no symlink on the way). Optional: default the root.
	Dir string
	// AllowHosts are the host names the command may reach over HTTP(S) through the sandbox's
	// proxy (HTTP_PROXY/HTTPS_PROXY set inside, so Env may not set them): "name" allows ports 80
	// and 443, "name:port" that port; at most 64. The sandbox still has no network of its own:
	// only the proxy, on 127.0.0.1 inside, reaches out. It needs a worker running as root (the
	// proxy listens in the sandbox's network namespace) and RunnerConfig.Dial, else Run fails
	// with ErrUnavailable. Optional: default none (no network at all).
	AllowHosts []string
	// Limits override the runner's for this command (zero fields keep the runner's).
	Limits Limits
}

// Output is what a command left.
type Output struct {
	// ExitCode is the command's exit status; -1 when a signal ended it. bubblewrap reports a
	// command killed by signal n as status 128+n, as a shell does, so a command that exits
	// with 129..192 itself is reported as ended by that signal.
	ExitCode int `json:"exitCode"`
	// Signal names the signal that ended it (e.g. "killed"), if one did.
	Signal string `json:"signal,omitempty"`
	// Stdout and Stderr are the last Limits.Output bytes of each stream (valid UTF-8).
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// StdoutBytes and StderrBytes count every byte the command wrote to each stream.
	StdoutBytes int64 `json:"stdoutBytes"`
	StderrBytes int64 `json:"stderrBytes"`
	// Truncated is set when either stream was longer than what is kept.
	Truncated bool `json:"truncated,omitempty"`
	// Limit names the limit that ended the command, if one did: "wall", "workspace", "cpu"
	// (SIGXCPU), "fileSize" (SIGXFSZ) or "memory" (with per-sandbox limits: the kernel killed a
	// process for the sandbox's memory). An address space, process or open file limit is not
	// "ending": the allocation, fork or open fails and the command decides what to do.
	Limit string `json:"limit,omitempty"`
	// Duration is how long the command ran.
	Duration time.Duration `json:"-"`
	// Throttled is how long its processes waited for the sandbox's CPU quota (Limits.CPUs), when
	// it has one.
	Throttled time.Duration `json:"-"`
}

// Errors of the runner.
var (
	// ErrUnavailable: bubblewrap (or what it needs) is missing or cannot create its namespaces
	// on this machine; the message says what to install (make setup: Debian's bubblewrap).
	ErrUnavailable = errors.New("sandbox unavailable")
	// ErrInvalidCommand: a Command that cannot run (no program, both Argv and Shell, a Dir
	// outside the workspace, a bad environment name).
	ErrInvalidCommand = errors.New("invalid sandbox command")
)

// Bounds of a Command.
const (
	maxOutput      = 16 << 20 // Limits.Output: the tail kept of each stream is at most this
	maxEnvVars     = 256
	maxEnvNameLen  = 256
	maxEnvValueLen = 64 << 10
)

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Runner runs commands under bubblewrap. It is safe for concurrent use.
type Runner struct {
	cfg     RunnerConfig
	bwrap   string // bubblewrap's absolute path
	prlimit string // util-linux prlimit's absolute path: it sets the rlimits and execs bwrap
	limits  Limits // cfg.Limits with defaults
	// switchUser is set when the worker is root: the sandbox then runs as uid/gid, else as
	// the worker's own user.
	switchUser bool
	uid        int // the sandbox's uid (inside and out)
	gid        int
	// cgroups, when set, gives each sandbox control groups of its own (a root worker on a
	// cgroup v1 host); noCgroups says why there are none.
	cgroups   *cgroupV1
	noCgroups string
}

// NewRunner checks that bubblewrap can run here and returns a Runner; an error wrapping
// ErrUnavailable says why it cannot.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	if err := platformSupported(); err != nil {
		return nil, err
	}
	name := cfg.Bwrap
	if name == "" {
		name = "bwrap"
	}
	bwrap, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: bubblewrap (%s) is not installed: run make setup (it installs Debian's bubblewrap)", ErrUnavailable, name)
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("%w: prlimit (util-linux) is not installed: run make setup", ErrUnavailable)
	}
	for _, p := range cfg.ReadOnly {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			return nil, fmt.Errorf("sandbox: read-only path %q must be absolute, clean and not /", p)
		}
		for _, own := range []string{"/proc", "/dev", "/workspace"} {
			if p == own || strings.HasPrefix(p, own+"/") {
				return nil, fmt.Errorf("sandbox: read-only path %q would hide the sandbox's own %s", p, own)
			}
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("sandbox: read-only path: %w", err)
		}
	}
	r := &Runner{cfg: cfg, bwrap: bwrap, prlimit: prlimit, limits: cfg.Limits.WithDefaults()}
	if os.Geteuid() == 0 {
		r.uid, r.gid = cfg.UID, cfg.GID
		if r.uid <= 0 {
			r.uid = 65534
		}
		if r.gid <= 0 {
			r.gid = 65534
		}
		r.switchUser = true
		r.cgroups, r.noCgroups = findCgroupV1()
	} else {
		r.uid, r.gid = os.Getuid(), os.Getgid()
	}
	err = r.probe()
	if err != nil && r.cgroups != nil {
		// Control groups that take no sandbox (a delegation or controller problem) leave the
		// rlimits alone, said by PerSandboxLimits.
		r.cgroups, r.noCgroups = nil, "a sandbox did not start in control groups of its own: "+err.Error()
		err = r.probe()
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// UID and GID return the host user and group the sandbox runs as: the workspace directories
// must belong to them.
func (r *Runner) UID() int { return r.uid }

// GID: see UID.
func (r *Runner) GID() int { return r.gid }

// PerSandboxLimits reports whether each sandbox's processes and memory are counted per sandbox
// (control groups of its own: a root worker on a cgroup v1 host), else why they are counted per
// host user and per process (rlimits; see Limits).
func (r *Runner) PerSandboxLimits() (bool, string) {
	if r.cgroups != nil {
		return true, ""
	}
	if !r.switchUser {
		return false, "the worker is not root"
	}
	return false, r.noCgroups
}

// probe runs true in a sandbox of an empty workspace.
func (r *Runner) probe() error {
	dir, err := os.MkdirTemp("", "toolgate-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("sandbox probe: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chown(dir, r.uid, r.gid); err != nil {
		return fmt.Errorf("sandbox probe: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := r.Run(ctx, dir, Command{Argv: []string{"true"}, Limits: Limits{Wall: 20 * time.Second}})
	if err == nil && out.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", out.ExitCode, strings.TrimSpace(out.Stderr))
	}
	if err != nil {
		return fmt.Errorf("%w: bubblewrap cannot start a sandbox here (it needs unprivileged user namespaces; make setup installs Debian's bubblewrap): %v", ErrUnavailable, err)
	}
	return nil
}

// Run runs cmd with the workspace directory dir (a host path) as /workspace, its only writable
// host directory, and returns when the command and every process it started have ended. A
// command that fails (non-zero exit, a limit, a signal) is an Output, not an error; the error is
// for a command that could not start, and ctx's error when ctx ended first (the whole process
// tree is killed before Run returns).
func (r *Runner) Run(ctx context.Context, dir string, cmd Command) (Output, error) {
	argv, workdir, err := checkCommand(cmd)
	if err != nil {
		return Output{}, err
	}
	var allow map[string]bool
	if len(cmd.AllowHosts) > 0 {
		if allow, err = allowHosts(cmd.AllowHosts); err != nil {
			return Output{}, err
		}
		switch {
		case !r.switchUser:
			return Output{}, fmt.Errorf("%w: AllowHosts needs a worker running as root (its proxy listens in the sandbox's network namespace)", ErrUnavailable)
		case r.cfg.Dial == nil:
			return Output{}, fmt.Errorf("%w: AllowHosts needs the runner's Dial (RunnerConfig.Dial)", ErrUnavailable)
		}
	}
	if err := checkWorkdir(dir, cmd.Dir); err != nil {
		return Output{}, err
	}
	if err := ctx.Err(); err != nil {
		return Output{}, err
	}
	lim := cmd.Limits.Over(r.limits)
	lim.Output = min(lim.Output, maxOutput)
	return r.execute(ctx, dir, argv, workdir, cmd, lim, allow)
}

// checkCommand validates cmd and returns the argv to run inside and the working directory
// inside.
func checkCommand(cmd Command) (argv []string, workdir string, err error) {
	switch {
	case len(cmd.Argv) > 0 && cmd.Shell != "":
		return nil, "", fmt.Errorf("%w: both argv and a shell line", ErrInvalidCommand)
	case cmd.Shell != "":
		argv = []string{"/bin/sh", "-c", cmd.Shell}
	case len(cmd.Argv) > 0 && cmd.Argv[0] != "":
		argv = cmd.Argv
	default:
		return nil, "", fmt.Errorf("%w: no program", ErrInvalidCommand)
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, "", fmt.Errorf("%w: an argument holds a NUL byte", ErrInvalidCommand)
		}
	}
	if len(cmd.Env) > maxEnvVars {
		return nil, "", fmt.Errorf("%w: %d environment variables (at most %d)", ErrInvalidCommand, len(cmd.Env), maxEnvVars)
	}
	for name, value := range cmd.Env {
		switch {
		case len(name) > maxEnvNameLen || !envName.MatchString(name):
			return nil, "", fmt.Errorf("%w: environment name %q is not [A-Za-z_][A-Za-z0-9_]* (at most %d bytes)", ErrInvalidCommand, truncate(name, 64), maxEnvNameLen)
		case name == "PATH" || name == "HOME" || name == "TMPDIR" || len(cmd.AllowHosts) > 0 && slices.Contains(proxyEnv, name):
			return nil, "", fmt.Errorf("%w: the sandbox sets %s", ErrInvalidCommand, name)
		case len(value) > maxEnvValueLen || strings.IndexByte(value, 0) >= 0:
			return nil, "", fmt.Errorf("%w: environment value of %s is longer than %d bytes or holds a NUL byte", ErrInvalidCommand, name, maxEnvValueLen)
		}
	}
	rel := filepath.ToSlash(cmd.Dir)
	if rel == "" {
		rel = "."
	}
	if path.IsAbs(rel) || !filepath.IsLocal(rel) || strings.IndexByte(rel, 0) >= 0 {
		return nil, "", fmt.Errorf("%w: working directory %q is not inside the workspace", ErrInvalidCommand, truncate(cmd.Dir, 256))
	}
	return argv, path.Join("/workspace", rel), nil
}

// checkWorkdir checks that rel names a directory under the workspace dir, following no symlink
// (Lstat of each component).
func checkWorkdir(dir, rel string) error {
	p := dir
	for _, part := range strings.Split(path.Clean(filepath.ToSlash("./"+rel)), "/") {
		if part == "." || part == "" {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: working directory %q is not a directory in the workspace", ErrInvalidCommand, truncate(rel, 256))
		}
	}
	return nil
}

// truncate returns s cut to at most n bytes, for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

// watchEvery is how often the workspace's size is measured while a command runs, at most: a
// command can exceed Limits.Workspace by what it writes between two walks (each file bounded by
// Limits.FileSize), so they come often; a workspace that takes long to walk is walked less often
// (walking at most a fifth of the time).
const watchEvery = 25 * time.Millisecond

// workspaceBytes returns the bytes of the regular files and symlinks under dir, walked without
// following symlinks; it stops counting once beyond limit.
func workspaceBytes(dir string, limit int64) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed while walking
		}
		if d.Type()&(fs.ModeDir|fs.ModeType) == 0 || d.Type()&fs.ModeSymlink != 0 {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		if n > limit {
			return filepath.SkipAll
		}
		return nil
	})
	return n
}

// tail keeps the last max bytes written to it and counts them all.
type tail struct {
	max   int
	buf   []byte // at most 2*max: compacted to the last max when full
	total int64
}

// Write keeps the tail of p.
func (t *tail) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	q := p
	if len(q) > t.max {
		q = q[len(q)-t.max:]
	}
	if len(t.buf)+len(q) > 2*t.max {
		keep := max(0, t.max-len(q))
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-min(keep, len(t.buf)):]...)
	}
	t.buf = append(t.buf, q...)
	return len(p), nil
}

// truncated reports whether more was written than is kept.
func (t *tail) truncated() bool { return t.total > int64(t.max) }

// String returns the kept tail as valid UTF-8: a character cut at its start is dropped, invalid
// bytes become U+FFFD.
func (t *tail) String() string {
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	if t.truncated() {
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
