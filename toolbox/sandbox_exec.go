package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolcore"
)

// execArgs are exec's validated arguments (and a named command's fixed ones).
type execArgs struct {
	Argv  []string          `json:"argv,omitempty"`
	Shell string            `json:"shell,omitempty"`
	Stdin string            `json:"stdin,omitempty"`
	Env   map[string]string `json:"env,omitempty"`
	Dir   string            `json:"dir,omitempty"`
	// Timeout is in seconds; 0 is the configured wall limit.
	Timeout int64 `json:"timeout,omitempty"`
}

// execResult is exec's output, and what a commit records for Reconcile.
type execResult struct {
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	// Stdout and Stderr are the streams' tails, as much as fits the result.
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	StdoutBytes int64  `json:"stdoutBytes"`
	StderrBytes int64  `json:"stderrBytes"`
	// Truncated says a stream was longer than its tail here.
	Truncated bool `json:"truncated"`
	// Attached names the streams attached whole as parts of the result, in order.
	Attached  []string       `json:"attached,omitempty"`
	Workspace workspaceState `json:"workspace"`
}

// execCheckpoint is what an attempt records before it runs: the head it started from, so that
// Reconcile can tell whether anything was committed since.
type execCheckpoint struct {
	Base int64 `json:"base"`
}

// progressEvery is how often a running command reports progress: each report is a heartbeat (a
// billable action), and neither cancellation (pushed to the worker, or heard in the worker's own
// beats at most 5 s apart) nor liveness (IdleHeartbeat) needs them, so only observers do.
const progressEvery = 10 * time.Second

func (t *sandboxTools) execTool() (toolcore.Tool, error) {
	net := "no network"
	if len(t.cfg.AllowHosts) > 0 {
		net = "HTTP(S) through a proxy to " + strings.Join(t.cfg.AllowHosts, ", ") + " only"
	}
	return toolcore.Define(toolcore.Definition[execArgs]{
		Name: NameExec,
		Description: `Run a command in this agent run's workspace (a sandbox: /workspace, ` + net + `, a read-only ` +
			`system, limits on time, memory and output): {"argv":["go","test","./..."]} or {"shell":"ls -l | wc -l"}, ` +
			`optionally "stdin", "env", "dir" (inside the workspace) and "timeout" (seconds). Gives {"exitCode",` +
			`"signal","stdout","stderr","stdoutBytes","stderrBytes","truncated","workspace":{"version","changed"}}: ` +
			`the streams' tails; a non-zero exit code is a result. Files the command leaves in the workspace are kept ` +
			`for the run's later calls.`,
		Validate:     t.validateExec,
		InputSchema:  t.execInputSchema(),
		OutputSchema: execOutputSchema,
		Execute: func(ctx context.Context, a execArgs) (any, error) {
			return t.execute(ctx, NameExec, a)
		},
		Reconcile: t.reconcile(NameExec),
		Options: toolcore.Options{
			SideEffect:             toolcore.Unsafe,
			Timeout:                t.timeout,
			RerunWhenNotReconciled: len(t.cfg.AllowHosts) == 0,
		},
	})
}

// noArgs are a named command's arguments: none.
type noArgs struct{}

func (t *sandboxTools) commandTool(c SandboxCommand) (toolcore.Tool, error) {
	a := execArgs{Argv: c.Argv, Shell: c.Shell, Env: c.Env, Dir: c.Dir}
	desc := c.Description
	if desc == "" {
		shown := c.Shell
		if shown == "" {
			shown = strings.Join(c.Argv, " ")
		}
		desc = fmt.Sprintf("Run `%s` in this agent run's workspace (a sandbox); takes no arguments.", shorten(shown, 200))
	}
	desc += ` Gives {"exitCode","signal","stdout","stderr","stdoutBytes","stderrBytes","truncated","workspace"}.`
	opts := toolcore.Options{SideEffect: toolcore.Unsafe, Timeout: t.timeout, RerunWhenNotReconciled: len(t.cfg.AllowHosts) == 0}
	reconcile := t.reconcile(c.Name)
	if c.Idempotent {
		opts = toolcore.Options{SideEffect: toolcore.Idempotent, Timeout: t.timeout}
		reconcile = nil
	}
	return toolcore.Define(toolcore.Definition[noArgs]{
		Name:        c.Name,
		Description: desc,
		Validate: func(args toolcore.Arguments) toolcore.Decision[noArgs] {
			if _, reason := readFields(args); reason != "" {
				return toolcore.Reject[noArgs](reason)
			}
			return toolcore.Accept(noArgs{})
		},
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: execOutputSchema,
		Execute: func(ctx context.Context, _ noArgs) (any, error) {
			return t.execute(ctx, c.Name, a)
		},
		Reconcile: reconcile,
		Options:   opts,
	})
}

var execOutputSchema = json.RawMessage(`{"type":"object","required":["exitCode","stdout","stderr","stdoutBytes","stderrBytes","truncated","workspace"],"properties":{` +
	`"exitCode":{"type":"integer","description":"The exit status; -1 when a signal ended the command."},` +
	`"signal":{"type":"string","description":"The signal that ended the command, if one did."},` +
	`"stdout":{"type":"string","description":"The end of standard output."},` +
	`"stderr":{"type":"string","description":"The end of standard error."},` +
	`"stdoutBytes":{"type":"integer"},"stderrBytes":{"type":"integer"},` +
	`"truncated":{"type":"boolean","description":"True when a stream is longer than what is shown."},` +
	`"attached":{"type":"array","items":{"enum":["stdout","stderr"]},"description":"Streams attached whole as parts of the result."},` +
	`"workspace":{"type":"object","properties":{"version":{"type":"integer"},"changed":{"type":"boolean"}}}}}`)

// execInputSchema is exec's input schema; its env member lists the variables the worker's
// configuration allows.
func (t *sandboxTools) execInputSchema() json.RawMessage {
	env := ""
	if len(t.cfg.Env) > 0 {
		props := make([]string, len(t.cfg.Env))
		for i, name := range t.cfg.Env {
			props[i] = fmt.Sprintf(`%q:{"type":"string","maxLength":%d}`, name, MaxExecEnvValueBytes)
		}
		env = fmt.Sprintf(`,"env":{"type":"object","additionalProperties":false,"maxProperties":%d,"properties":{%s},"description":"Environment variables to set (only these names)."}`,
			MaxExecEnv, strings.Join(props, ","))
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"properties":{`+
		`"argv":{"type":"array","minItems":1,"maxItems":%d,"items":{"type":"string"},"description":"The program and its arguments (give argv or shell)."},`+
		`"shell":{"type":"string","minLength":1,"maxLength":%d,"description":"A line for /bin/sh -c (give argv or shell)."},`+
		`"stdin":{"type":"string","maxLength":%d,"description":"Standard input."},`+
		`"dir":{"type":"string","minLength":1,"description":"Working directory relative to the workspace (default its root)."},`+
		`"timeout":{"type":"integer","minimum":1,"maximum":%d,"description":"Seconds the command may run (the worker's limit bounds it too)."}%s}}`,
		MaxExecArgs, MaxExecShellBytes, MaxExecStdinBytes, MaxExecTimeoutSeconds, env))
}

func (t *sandboxTools) validateExec(args toolcore.Arguments) toolcore.Decision[execArgs] {
	f, reason := readFields(args, "argv", "shell", "stdin", "env", "dir", "timeout")
	if reason != "" {
		return toolcore.Reject[execArgs](reason)
	}
	a, reason := parseExec(f, t.cfg.Env)
	if reason != "" {
		return toolcore.Reject[execArgs](reason)
	}
	return toolcore.Accept(a)
}

// parseExec reads exec's arguments; allowEnv (sorted) are the names env may set. The reason is
// "" when they are valid.
func parseExec(f fields, allowEnv []string) (execArgs, string) {
	var a execArgs
	if raw, ok := f["argv"]; ok {
		if kind(raw) != "an array" {
			return a, fmt.Sprintf("%q must be an array of strings, not %s", "argv", kind(raw))
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return a, fmt.Sprintf("%q must be an array of strings", "argv")
		}
		if len(elems) == 0 || len(elems) > MaxExecArgs {
			return a, fmt.Sprintf("%q must hold 1 to %d strings", "argv", MaxExecArgs)
		}
		total := 0
		a.Argv = make([]string, len(elems))
		for i, e := range elems {
			if kind(e) != "a string" || json.Unmarshal(e, &a.Argv[i]) != nil {
				return a, fmt.Sprintf("%q[%d] must be a string, not %s", "argv", i, kind(e))
			}
			if containsNUL(a.Argv[i]) {
				return a, fmt.Sprintf("%q[%d] must not contain NUL bytes", "argv", i)
			}
			total += len(a.Argv[i])
		}
		if a.Argv[0] == "" {
			return a, fmt.Sprintf("%q[0], the program, must not be empty", "argv")
		}
		if total > MaxExecArgvBytes {
			return a, fmt.Sprintf("%q must hold at most %d bytes in all", "argv", MaxExecArgvBytes)
		}
	}
	shell, present, reason := f.str("shell")
	switch {
	case reason != "":
		return a, reason
	case present && a.Argv != nil:
		return a, fmt.Sprintf("give %q or %q, not both", "argv", "shell")
	case !present && a.Argv == nil:
		return a, fmt.Sprintf("%q (the program and its arguments) or %q (a line for /bin/sh -c) is required", "argv", "shell")
	case present && strings.TrimSpace(shell) == "":
		return a, fmt.Sprintf("%q must not be blank", "shell")
	case len(shell) > MaxExecShellBytes:
		return a, fmt.Sprintf("%q must be at most %d bytes", "shell", MaxExecShellBytes)
	case containsNUL(shell):
		return a, fmt.Sprintf("%q must not contain NUL bytes", "shell")
	}
	a.Shell = shell
	stdin, _, reason := f.str("stdin")
	switch {
	case reason != "":
		return a, reason
	case len(stdin) > MaxExecStdinBytes:
		return a, fmt.Sprintf("%q must be at most %d bytes", "stdin", MaxExecStdinBytes)
	}
	a.Stdin = stdin
	if raw, ok := f["env"]; ok {
		env, reason := parseEnv(raw, allowEnv)
		if reason != "" {
			return a, reason
		}
		a.Env = env
	}
	if dir, present, reason := f.str("dir"); reason != "" {
		return a, reason
	} else if present {
		if reason := checkPathIn(dir, "dir", "the workspace"); reason != "" {
			return a, reason
		}
		a.Dir = dir
	}
	n, present, reason := f.number("timeout")
	if reason != "" {
		return a, reason
	}
	if present {
		secs, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || secs < 1 || secs > MaxExecTimeoutSeconds {
			return a, fmt.Sprintf("%q must be a whole number of seconds between 1 and %d", "timeout", MaxExecTimeoutSeconds)
		}
		a.Timeout = secs
	}
	return a, ""
}

// parseEnv reads exec's env: an object of strings whose names allowEnv (sorted) lists.
func parseEnv(raw json.RawMessage, allowEnv []string) (map[string]string, string) {
	if kind(raw) != "an object" {
		return nil, fmt.Sprintf("%q must be an object of strings, not %s", "env", kind(raw))
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, fmt.Sprintf("%q must be an object of strings", "env")
	}
	if len(members) == 0 {
		return nil, ""
	}
	if len(allowEnv) == 0 {
		return nil, fmt.Sprintf("%q: this tool sets no environment variables", "env")
	}
	if len(members) > MaxExecEnv {
		return nil, fmt.Sprintf("%q must hold at most %d variables", "env", MaxExecEnv)
	}
	env := make(map[string]string, len(members))
	for _, name := range sortedKeys(members) {
		if !contains(allowEnv, name) {
			return nil, fmt.Sprintf("%q: %q is not a variable this tool sets; allowed: %s", "env", shorten(name, 128), quoteList(allowEnv))
		}
		var v string
		if kind(members[name]) != "a string" || json.Unmarshal(members[name], &v) != nil {
			return nil, fmt.Sprintf("%q: %q must be a string, not %s", "env", name, kind(members[name]))
		}
		if len(v) > MaxExecEnvValueBytes || containsNUL(v) {
			return nil, fmt.Sprintf("%q: %q must be at most %d bytes, without NUL bytes", "env", name, MaxExecEnvValueBytes)
		}
		env[name] = v
	}
	return env, ""
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// execute runs a in the call's workspace for the tool named tool and commits what it changed.
func (t *sandboxTools) execute(ctx context.Context, tool string, a execArgs) (any, error) {
	ws, err := t.open(ctx, tool)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	if r, ok := recorded[execResult](ctx, t, ws.Head); ok {
		return r, nil
	}
	// Before anything runs: Reconcile tells a lost attempt's commit from another call's by it.
	_ = toolcore.Checkpoint(ctx, execCheckpoint{Base: ws.Head.Version})
	cmd := sandbox.Command{Argv: a.Argv, Shell: a.Shell, Env: a.Env, Dir: a.Dir, AllowHosts: t.cfg.AllowHosts, Limits: t.cfg.Limits}
	if a.Stdin != "" {
		cmd.Stdin = []byte(a.Stdin)
	}
	if wall := time.Duration(a.Timeout) * time.Second; wall > 0 && wall < cmd.Limits.WithDefaults().Wall {
		cmd.Limits.Wall = wall
	}
	out, err := t.runReporting(ctx, ws.Dir, cmd)
	if err != nil {
		t.discard(ctx, tool, ws)
		if cause := context.Cause(ctx); cause != nil {
			return nil, fmt.Errorf("%s: %w", tool, cause)
		}
		if errors.Is(err, sandbox.ErrInvalidCommand) { // its words name no host path
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		t.logger.Error("sandbox command did not start", zap.String("tool", tool), zap.String("workspace", ws.Name), zap.Error(err))
		if errors.Is(err, sandbox.ErrUnavailable) {
			return nil, fmt.Errorf("%s: the sandbox is unavailable on this worker (the operator's log says why)", tool)
		}
		return nil, fmt.Errorf("%s: the command could not start (the operator's log says why)", tool)
	}
	if out.Limit != "" {
		t.discard(ctx, tool, ws)
		return nil, limitError(tool, out, cmd.Limits.WithDefaults())
	}
	// The result is fitted with the longest workspace state it can end with (the next version,
	// "changed":false), so the real one fits too.
	res, parts := t.shape(out, workspaceState{Version: ws.Head.Version + 1})
	record := res
	record.Attached = nil // Reconcile cannot attach the parts again
	record.Workspace = workspaceState{Version: ws.Head.Version + 1, Changed: true}
	state, err := t.commit(ctx, tool, ws, record)
	if err != nil {
		return nil, err
	}
	res.Workspace = state
	if len(parts) > 0 {
		return toolcore.Rich{Output: res, Parts: parts}, nil
	}
	return res, nil
}

// runReporting runs cmd and reports progress every progressEvery until it ends; it returns only
// once the runner has (so a cancellation has stopped the command's processes).
func (t *sandboxTools) runReporting(ctx context.Context, dir string, cmd sandbox.Command) (sandbox.Output, error) {
	type ran struct {
		out sandbox.Output
		err error
	}
	done := make(chan ran, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- ran{err: fmt.Errorf("sandbox runner panicked: %v", v)}
			}
		}()
		out, err := t.run(ctx, dir, cmd)
		done <- ran{out, err}
	}()
	label := cmd.Shell
	if cmd.Argv != nil {
		label = strings.Join(cmd.Argv, " ")
	}
	label = "running " + shorten(label, 80)
	total := int64(cmd.Limits.WithDefaults().Wall / time.Second)
	toolcore.ReportProgress(ctx, toolcore.Progress{Total: total, Message: label})
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case r := <-done:
			return r.out, r.err
		case <-tick.C:
			toolcore.ReportProgress(ctx, toolcore.Progress{Completed: int64(time.Since(start) / time.Second), Total: total, Message: label})
		}
	}
}

// shape makes the result of out: the streams' tails, as much of each as fits the result's
// content beside every other field (state included), and the parts of the streams shown in part
// when the worker keeps parts.
func (t *sandboxTools) shape(out sandbox.Output, state workspaceState) (execResult, []toolcore.Part) {
	base := execResult{ExitCode: out.ExitCode, Signal: out.Signal, StdoutBytes: out.StdoutBytes, StderrBytes: out.StderrBytes, Workspace: state}
	if t.cfg.Parts {
		base.Attached = []string{"stdout", "stderr"} // the longest it can be
	}
	// No more than a result's content of either can show.
	stdout := tailRunes(out.Stdout, toolcore.MaxContentCodePoints)
	stderr := tailRunes(out.Stderr, toolcore.MaxContentCodePoints)
	n := len(stdout) + len(stderr)
	// build(b) shows b runes in all: each stream its tail, a short one whole and the other the rest.
	split := func(b int) (int, int) {
		o, e := len(stdout), len(stderr)
		switch {
		case o+e <= b:
		case e <= b/2:
			o = b - e
		case o <= b/2:
			e = b - o
		default:
			o, e = b/2, b-b/2
		}
		return o, e
	}
	fitted := fitPrefix(n, func(b int) any {
		o, e := split(b)
		r := base
		r.Stdout, r.Stderr = string(stdout[len(stdout)-o:]), string(stderr[len(stderr)-e:])
		r.Truncated = true
		return r
	}).(execResult)
	// A tail cut inside a line starts at the next line, when one starts soon.
	fitted.Stdout, fitted.Stderr = fromLine(fitted.Stdout, out.Stdout), fromLine(fitted.Stderr, out.Stderr)
	fitted.Truncated = out.Truncated || fitted.Stdout != out.Stdout || fitted.Stderr != out.Stderr
	fitted.Attached = nil
	var parts []toolcore.Part
	if t.cfg.Parts {
		for _, s := range []struct{ name, shown, kept string }{{"stdout", fitted.Stdout, out.Stdout}, {"stderr", fitted.Stderr, out.Stderr}} {
			if s.shown != s.kept {
				fitted.Attached = append(fitted.Attached, s.name)
				parts = append(parts, toolcore.Resource("sandbox:"+s.name, "text/plain; charset=utf-8", []byte(s.kept)))
			}
		}
	}
	return fitted, parts
}

// limitError is the error result of a command a limit ended.
func limitError(tool string, out sandbox.Output, l sandbox.Limits) error {
	var what string
	switch out.Limit {
	case "wall":
		what = fmt.Sprintf("its time limit (%s)", l.Wall)
	case "cpu":
		what = fmt.Sprintf("its CPU-time limit (%s)", l.CPU)
	case "memory":
		what = fmt.Sprintf("its memory limit (%s)", byteSize(l.Memory))
	case "processes":
		what = fmt.Sprintf("its process limit (%d)", l.Processes)
	case "openFiles":
		what = fmt.Sprintf("its open-file limit (%d)", l.OpenFiles)
	case "fileSize":
		what = fmt.Sprintf("its file-size limit (%s)", byteSize(l.FileSize))
	case "output":
		what = fmt.Sprintf("its output limit (%s)", byteSize(int64(l.Output)))
	case "workspace":
		what = fmt.Sprintf("the workspace's size limit (%s)", byteSize(l.Workspace))
	case "tmp":
		what = fmt.Sprintf("the size limit of its /tmp (%s)", byteSize(l.Tmp))
	default:
		what = fmt.Sprintf("its %q limit", shorten(out.Limit, 64))
	}
	msg := fmt.Sprintf("%s: the command was stopped at %s; its changes to the workspace were discarded. It wrote %d bytes to stdout and %d to stderr",
		tool, what, out.StdoutBytes, out.StderrBytes)
	if tail := lastBytes(out.Stderr, 512); tail != "" {
		msg += fmt.Sprintf("; stderr ends %q", tail)
	} else if tail := lastBytes(out.Stdout, 512); tail != "" {
		msg += fmt.Sprintf("; stdout ends %q", tail)
	}
	return errors.New(msg)
}

// fromLine is the tail shown of the stream kept, starting after its first newline when the tail
// was cut inside a line and a newline comes within 200 bytes.
func fromLine(shown, kept string) string {
	if shown == kept || strings.HasSuffix(kept[:len(kept)-len(shown)], "\n") {
		return shown
	}
	if i := strings.IndexByte(shown, '\n'); i >= 0 && i < 200 && i+1 < len(shown) {
		return shown[i+1:]
	}
	return shown
}

// tailRunes is the last n runes of s at most.
func tailRunes(s string, n int) []rune {
	r := []rune(lastBytes(s, n*utf8.UTFMax))
	return r[max(0, len(r)-n):]
}

// lastBytes is the end of s, at most n bytes, starting at a rune.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// byteSize writes n bytes as people read them.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// reconcile is the Reconcile of exec and of the unsafe named commands: a lost attempt that
// committed the workspace (its head names the call) is found with the result it recorded; one
// whose workspace nobody committed since it started left nothing (the workspace is restored from
// the head before every call) and is not found; when others committed since, whether the lost
// attempt's commit is among theirs cannot be told, and the call ends outcome unknown.
func (t *sandboxTools) reconcile(tool string) func(ctx context.Context, key string) (any, bool, error) {
	return func(ctx context.Context, key string) (any, bool, error) {
		name, err := workspaceName(ctx)
		if err != nil {
			return nil, false, nil
		}
		head, err := t.cfg.Workspaces.Head(ctx, name)
		switch {
		case errors.Is(err, sandbox.ErrNoWorkspace):
			head = sandbox.Head{}
		case err != nil:
			t.logger.Error("sandbox head unavailable", zap.String("tool", tool), zap.String("workspace", name), zap.Error(err))
			return nil, false, fmt.Errorf("%s: the workspace's store is unavailable", tool)
		}
		if key != "" && head.Call == key {
			raw, err := t.openRecord(head)
			var r execResult
			if err == nil {
				err = json.Unmarshal(raw, &r)
			}
			if err != nil {
				t.logger.Error("sandbox record unreadable", zap.String("tool", tool), zap.String("workspace", name), zap.Error(err))
				return nil, false, fmt.Errorf("%s: the workspace's record of the call cannot be read (the operator's log says why)", tool)
			}
			return r, true, nil
		}
		var cp execCheckpoint
		if ok, _ := toolcore.LastCheckpoint(ctx, &cp); ok && head.Version > cp.Base {
			return nil, true, toolcore.EffectFailed(fmt.Errorf("%s: outcome unknown: the attempt was lost, and other calls committed the workspace since it started "+
				"(version %d, then %d): whether its changes are among theirs cannot be told, so it is not run again", tool, cp.Base, head.Version))
		}
		return nil, false, nil
	}
}
