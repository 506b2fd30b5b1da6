package sandbox

import (
	"context"
	"errors"
	"time"
)

// RunnerConfig is how a worker runs sandboxed commands.
type RunnerConfig struct {
	// Bwrap is the bubblewrap executable. Optional: default "bwrap" found in PATH.
	Bwrap string
	// UID and GID are the host user the sandbox runs as when the worker runs as root (a worker
	// that is not root runs it as itself). Optional: default 65534 (nobody).
	UID, GID int
	// ReadOnly are extra host paths bound read-only at the same path inside (e.g. /usr/local/go
	// for a Go toolchain). Optional.
	ReadOnly []string
	// Limits are the default limits of every command. Optional: default DefaultLimits.
	Limits Limits
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
	// sets. The host's environment never reaches the command. Optional.
	Env map[string]string
	// Dir is the working directory, relative to the workspace root; it must stay inside.
	// Optional: default the root.
	Dir string
	// AllowHosts are the host names the command may reach over HTTP(S) through the sandbox's
	// proxy (HTTP_PROXY/HTTPS_PROXY set inside). Optional: default none (no network at all).
	AllowHosts []string
	// Limits override the runner's for this command (zero fields keep the runner's).
	Limits Limits
}

// Output is what a command left.
type Output struct {
	// ExitCode is the command's exit status; -1 when a signal ended it.
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
	// Limit names the limit that ended the command ("wall", "workspace", ...), if one did.
	Limit string `json:"limit,omitempty"`
	// Duration is how long the command ran.
	Duration time.Duration `json:"-"`
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

// Runner runs commands under bubblewrap. It is safe for concurrent use.
type Runner struct {
	cfg RunnerConfig
}

// NewRunner checks that bubblewrap can run here and returns a Runner; an error wrapping
// ErrUnavailable says why it cannot.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	return nil, errors.New("sandbox: not implemented yet")
}

// Run runs cmd with the workspace directory dir (a host path) as /workspace, its only writable
// host directory, and returns when the command and every process it started have ended. A
// command that fails (non-zero exit, a limit, a signal) is an Output, not an error; the error is
// for a command that could not start, and ctx's error when ctx ended first (the whole process
// tree is killed before Run returns).
func (r *Runner) Run(ctx context.Context, dir string, cmd Command) (Output, error) {
	return Output{}, errors.New("sandbox: not implemented yet")
}
