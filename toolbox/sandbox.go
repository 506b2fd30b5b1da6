package toolbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolcore"
)

// Names of the sandbox tools.
const (
	// NameExec runs a command in the call's workspace under the sandbox.
	NameExec = "exec"
	// NameWorkspaceWriteFile, NameWorkspaceReadFile and NameWorkspaceListDir are the file tools
	// rooted at the call's workspace.
	NameWorkspaceWriteFile = "workspace_write_file"
	NameWorkspaceReadFile  = "workspace_read_file"
	NameWorkspaceListDir   = "workspace_list_dir"
)

// Fixed bounds of the sandbox tools' arguments. Validators read only these constants and the
// tool's definition (its environment allow-list is part of its input schema), never a worker's
// Config.
const (
	// MaxExecArgs bounds the elements of exec's argv.
	MaxExecArgs = 1024
	// MaxExecArgvBytes bounds the bytes of exec's argv together, and MaxExecShellBytes its shell
	// line.
	MaxExecArgvBytes  = 64 << 10
	MaxExecShellBytes = 64 << 10
	// MaxExecStdinBytes bounds exec's stdin.
	MaxExecStdinBytes = 128 << 10
	// MaxExecEnv bounds the variables of exec's env, and MaxExecEnvValueBytes each value.
	MaxExecEnv           = 64
	MaxExecEnvValueBytes = 4096
	// MaxExecTimeoutSeconds bounds exec's timeout argument (the configured wall limit bounds it
	// too).
	MaxExecTimeoutSeconds = 3600
	// MaxWorkspaceWriteBytes bounds the content workspace_write_file writes (a call is at most
	// toolcore.MaxCallBytes).
	MaxWorkspaceWriteBytes = 192 << 10
)

// Output kept of each stream by default: with a part store the whole stream (up to this) is
// attached as a part; without one only what fits the result is shown, so little more is kept.
const (
	defaultSandboxPartOutput = 1 << 20
	defaultSandboxTailOutput = 16 << 10
	// sandboxCommitTime is what a call's Timeout allows beyond the command's wall limit for
	// restoring and committing the workspace.
	sandboxCommitTime = 2 * time.Minute
)

// envName is the form of a variable name exec's env may set.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// reservedEnv are the variables the sandbox sets itself.
var reservedEnv = []string{"HOME", "PATH", "TMPDIR"}

// Sandbox configures the sandbox tools: exec, the workspace file tools and named commands, each
// working in the workspace of the call's agent run (toolcore.CallRun; the call's idempotency key
// when it has none), restored from the shared store before the call and committed after it
// changed something (docs/sandbox.md).
type Sandbox struct {
	// Workspaces keeps the workspaces: their local copies on this worker and the shared store.
	// Required.
	Workspaces *sandbox.Workspaces
	// Runner runs the commands under bubblewrap. Required for exec and Commands.
	Runner *sandbox.Runner
	// Env names the variables exec's "env" argument may set (e.g. GOFLAGS, CGO_ENABLED), each
	// ^[A-Za-z_][A-Za-z0-9_]{0,127}$ and none of HOME, PATH, TMPDIR (the sandbox sets those). The
	// list is part of exec's input schema, so of its definition. Optional: default none.
	Env []string
	// AllowHosts are the host names exec's commands may reach over HTTP(S) through the sandbox's
	// proxy. With none a command has no network at all, so a lost attempt that committed nothing
	// left no trace anywhere and exec runs it once more (Options.RerunWhenNotReconciled); with
	// some its outcome stays unknown. Optional: default none.
	AllowHosts []string
	// Limits bound every command (zero fields: the runner's defaults). Limits.Wall also sets the
	// tools' Timeout (the wall limit plus two minutes for the workspace's restore and commit).
	// Optional.
	Limits sandbox.Limits
	// Parts says the worker keeps the parts of rich results (worker.Options.Parts): a command's
	// stdout or stderr longer than what the result shows is attached whole (up to Limits.Output,
	// default 1 MiB) as a part. Optional: default false, the result shows the streams' tails
	// with "truncated".
	Parts bool
	// Commands are tools that each run one fixed command (a "run_tests" that runs `go test
	// ./...`). Optional.
	Commands []SandboxCommand
	// DisableExec leaves exec out: the model runs only the Commands. Optional: default false.
	DisableExec bool
	// Keys seal what a call records with its commit (its result, kept in the workspace's head
	// beside its name: the heads are plain files or a table) with the codec keyring, as the
	// store's objects are; a record that is not sealed is then refused. Optional: default none,
	// records are kept in plaintext.
	Keys codec.KeySource
	// Owner owns the files and directories workspace_write_file creates, so that commands may
	// change them: the sandbox's user (sandbox.Config.Owner). Optional: default the Runner's user
	// (Runner.UID, Runner.GID) when there is a Runner, else the worker's.
	Owner *sandbox.Owner

	// run replaces Runner.Run in tests.
	run func(ctx context.Context, dir string, cmd sandbox.Command) (sandbox.Output, error)
}

// SandboxCommand is a tool that runs one fixed command in the call's workspace; it takes no
// arguments.
type SandboxCommand struct {
	// Name is the tool's name. Required.
	Name string
	// Description tells the model what the command does. Optional: default names the command.
	Description string
	// Argv is the program and its arguments; Shell, when set instead, is run as /bin/sh -c.
	// Exactly one.
	Argv  []string
	Shell string
	// Env is the command's environment (besides HOME, PATH and TMPDIR). Optional.
	Env map[string]string
	// Dir is the working directory inside the workspace. Optional: default its root.
	Dir string
	// Idempotent declares that running the command again gives the same effect (a test run, a
	// build): the tool is Idempotent and retried after a lost worker. Optional: default false,
	// the tool is Unsafe like exec, with exec's Reconcile.
	Idempotent bool
}

// PublicDialer returns http_get's guarded dial for others that connect on a model's behalf (the
// sandbox's proxy: sandbox.RunnerConfig.Dial): it resolves the host with cfg.Resolver, refuses
// loopback, private, link-local and metadata addresses unless cfg.AllowHosts lists them, and
// connects to exactly the addresses it checked, within cfg.HTTPTimeout.
func PublicDialer(cfg Config) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, fmt.Errorf("configure toolbox: %w", err)
	}
	g := &guard{allow: s.allow, resolver: s.Resolver, timeout: s.HTTPTimeout}
	return g.DialContext, nil
}

// sandboxTools holds what the sandbox tools share.
type sandboxTools struct {
	cfg    Sandbox
	files  files
	logger *zap.Logger
	run    func(ctx context.Context, dir string, cmd sandbox.Command) (sandbox.Output, error)
	// timeout is each tool's Options.Timeout.
	timeout time.Duration
}

// sandboxToolMakers returns the makers of the tools c selects, for Tools.
func sandboxToolMakers(s settings) ([]func() (toolcore.Tool, error), error) {
	t, err := newSandboxTools(s)
	if err != nil {
		return nil, err
	}
	makers := []func() (toolcore.Tool, error){t.listDirTool, t.readFileTool, t.writeFileTool}
	if !t.cfg.DisableExec {
		makers = append(makers, t.execTool)
	}
	for _, c := range t.cfg.Commands {
		makers = append(makers, func() (toolcore.Tool, error) { return t.commandTool(c) })
	}
	return makers, nil
}

func newSandboxTools(s settings) (*sandboxTools, error) {
	c := *s.Sandbox
	if c.Workspaces == nil {
		return nil, errors.New("sandbox: Workspaces is required")
	}
	run := c.run
	if run == nil && c.Runner != nil {
		run = c.Runner.Run
	}
	if run == nil && (!c.DisableExec || len(c.Commands) > 0) {
		return nil, errors.New("sandbox: Runner is required for exec and commands")
	}
	for _, name := range c.Env {
		switch {
		case !envName.MatchString(name):
			return nil, fmt.Errorf("sandbox: environment name %q: want ^[A-Za-z_][A-Za-z0-9_]{0,127}$", name)
		case slices.Contains(reservedEnv, name):
			return nil, fmt.Errorf("sandbox: environment name %q: the sandbox sets it", name)
		}
	}
	if c.Owner == nil && c.Runner != nil {
		c.Owner = &sandbox.Owner{UID: c.Runner.UID(), GID: c.Runner.GID()}
	}
	c.Env = slices.Compact(slices.Sorted(slices.Values(c.Env)))
	if c.Limits.Output <= 0 {
		c.Limits.Output = defaultSandboxTailOutput
		if c.Parts {
			c.Limits.Output = defaultSandboxPartOutput
		}
	}
	seen := map[string]bool{}
	for _, cmd := range c.Commands {
		if err := checkCommand(cmd); err != nil {
			return nil, err
		}
		if seen[cmd.Name] {
			return nil, fmt.Errorf("sandbox: command %q: declared twice", cmd.Name)
		}
		seen[cmd.Name] = true
	}
	return &sandboxTools{
		cfg:     c,
		files:   files{s: s, readTool: NameWorkspaceReadFile, listTool: NameWorkspaceListDir, place: "the workspace"},
		logger:  s.Logger,
		run:     run,
		timeout: c.Limits.WithDefaults().Wall + sandboxCommitTime,
	}, nil
}

// checkCommand checks a named command as exec's validator checks a call.
func checkCommand(c SandboxCommand) error {
	args := map[string]any{}
	if c.Shell != "" {
		args["shell"] = c.Shell
	}
	if c.Argv != nil {
		args["argv"] = c.Argv
	}
	if c.Dir != "" {
		args["dir"] = c.Dir
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("sandbox: command %q: %w", c.Name, err)
	}
	f, reason := readFieldsJSON(raw, "argv", "shell", "dir")
	if reason == "" {
		_, reason = parseExec(f, nil)
	}
	if reason != "" {
		return fmt.Errorf("sandbox: command %q: %s", c.Name, reason)
	}
	for name, v := range c.Env {
		if !envName.MatchString(name) || slices.Contains(reservedEnv, name) {
			return fmt.Errorf("sandbox: command %q: environment name %q is not allowed", c.Name, name)
		}
		if len(v) > MaxExecEnvValueBytes || containsNUL(v) {
			return fmt.Errorf("sandbox: command %q: the value of %q must be at most %d bytes without NUL", c.Name, name, MaxExecEnvValueBytes)
		}
	}
	return nil
}

// workspaceName is the workspace of the running call: its agent run, else (an executor that
// names none, such as the in-process one) its idempotency key.
func workspaceName(ctx context.Context) (string, error) {
	if run := toolcore.CallRun(ctx); run != "" {
		return run, nil
	}
	if key := toolcore.IdempotencyKey(ctx); key != "" {
		return key, nil
	}
	return "", errors.New("no workspace: the call names no agent run")
}

// workspaceState is what a result says of the workspace after the call.
type workspaceState struct {
	// Version is the workspace's snapshot the files are at (0: never committed).
	Version int64 `json:"version"`
	// Changed says the call changed the workspace and committed it as Version.
	Changed bool `json:"changed"`
}

// open opens the call's workspace for the tool named tool. Its errors are the model's: the
// store's own error (which may name paths or a database) goes to the operator's log.
func (t *sandboxTools) open(ctx context.Context, tool string) (*sandbox.Workspace, error) {
	name, err := workspaceName(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	ws, err := t.cfg.Workspaces.Open(ctx, name)
	if err != nil {
		if cerr := context.Cause(ctx); cerr != nil {
			return nil, fmt.Errorf("%s: %w", tool, cerr)
		}
		t.logger.Error("sandbox workspace unavailable", zap.String("tool", tool), zap.String("workspace", name), zap.Error(err))
		return nil, toolcore.Transient(fmt.Errorf("%s: the workspace is unavailable on this worker (the operator's log says why)", tool))
	}
	return ws, nil
}

// recorded returns what the call with the running call's idempotency key recorded when it
// committed ws's head, if it did: an attempt that runs again after its call committed (an
// idempotent tool retried, a result that was lost) returns the first one's result.
func recorded[R any](ctx context.Context, t *sandboxTools, head sandbox.Head) (R, bool) {
	var r R
	key := toolcore.IdempotencyKey(ctx)
	if key == "" || head.Call != key || len(head.Record) == 0 {
		return r, false
	}
	raw, err := t.openRecord(head)
	if err != nil {
		t.logger.Warn("sandbox record unreadable", zap.String("workspace", head.Workspace), zap.Error(err))
		return r, false
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, false
	}
	return r, true
}

// sealedRecord is a record sealed with the codec keyring; no tool's result has these members
// alone.
type sealedRecord struct {
	KeyID  string `json:"keyId"`
	Sealed []byte `json:"sealed"`
}

// recordAAD binds a sealed record to its workspace and call: one copied to another head does
// not open.
func recordAAD(workspace, call string) []byte {
	return []byte("toolgate-sandbox-record\x00" + workspace + "\x00" + call)
}

// sealRecord is raw as the head keeps it: sealed when there are Keys.
func (t *sandboxTools) sealRecord(workspace, call string, raw []byte) (json.RawMessage, error) {
	if t.cfg.Keys == nil {
		return raw, nil
	}
	id, sealed, err := codec.Seal(t.cfg.Keys, raw, recordAAD(workspace, call))
	if err != nil {
		return nil, err
	}
	return json.Marshal(sealedRecord{KeyID: id, Sealed: sealed})
}

// openRecord returns the head's record in plaintext: opened when sealed (which needs the Keys);
// with Keys, a record that is not sealed is refused.
func (t *sandboxTools) openRecord(head sandbox.Head) ([]byte, error) {
	var s sealedRecord
	dec := json.NewDecoder(bytes.NewReader(head.Record))
	dec.DisallowUnknownFields()
	isSealed := dec.Decode(&s) == nil && s.KeyID != "" && len(s.Sealed) > 0
	switch {
	case isSealed && t.cfg.Keys == nil:
		return nil, errors.New("the record is sealed and this worker has no codec key")
	case isSealed:
		return codec.Open(t.cfg.Keys, s.KeyID, s.Sealed, recordAAD(head.Workspace, head.Call))
	case t.cfg.Keys != nil:
		return nil, errors.New("the record is not sealed, and this worker seals records")
	}
	return head.Record, nil
}

// commit commits ws after a call that may have changed it, recording record; on any failure the
// changes are discarded and the error says why in words for the model.
func (t *sandboxTools) commit(ctx context.Context, tool string, ws *sandbox.Workspace, record any) (workspaceState, error) {
	key := toolcore.IdempotencyKey(ctx)
	raw, err := json.Marshal(record)
	if err == nil {
		raw, err = t.sealRecord(ws.Name, key, raw)
	}
	if err != nil {
		t.discard(ctx, tool, ws)
		return workspaceState{}, fmt.Errorf("%s: record the result: %w", tool, err)
	}
	head, changed, err := ws.Commit(ctx, key, raw)
	if err == nil {
		if !changed {
			return workspaceState{Version: ws.Head.Version}, nil
		}
		return workspaceState{Version: head.Version, Changed: true}, nil
	}
	t.discard(ctx, tool, ws)
	switch {
	case context.Cause(ctx) != nil:
		return workspaceState{}, fmt.Errorf("%s: %w", tool, context.Cause(ctx))
	case errors.Is(err, sandbox.ErrConflict):
		other := "another call"
		if h, herr := t.cfg.Workspaces.Head(ctx, ws.Name); herr == nil && h.Call != "" {
			other = fmt.Sprintf("the call %q", shorten(h.Call, maxShownChars))
		}
		return workspaceState{}, fmt.Errorf("%s: the workspace was changed by %s while this call ran; this call's changes to the workspace were discarded (run it again to apply them to the new state)", tool, other)
	case errors.Is(err, sandbox.ErrWorkspaceTooLarge):
		return workspaceState{}, fmt.Errorf("%s: the workspace would hold more than its limit of %d bytes; this call's changes were discarded", tool, t.workspaceLimit())
	default:
		t.logger.Error("sandbox commit failed", zap.String("tool", tool), zap.String("workspace", ws.Name), zap.Error(err))
		return workspaceState{}, fmt.Errorf("%s: the workspace could not be saved; this call's changes were discarded", tool)
	}
}

// discard returns ws to its head after a call whose changes are not kept.
func (t *sandboxTools) discard(ctx context.Context, tool string, ws *sandbox.Workspace) {
	// The call's ctx may be ending: the local copy is put back all the same.
	if err := ws.Discard(context.WithoutCancel(ctx)); err != nil {
		t.logger.Error("sandbox discard failed", zap.String("tool", tool), zap.String("workspace", ws.Name), zap.Error(err))
	}
}

// workspaceLimit is the bound of a workspace's bytes.
func (t *sandboxTools) workspaceLimit() int64 {
	return t.cfg.Limits.WithDefaults().Workspace
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
