package toolbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolcore"
)

// newTestWorkspaces returns workspaces with local copies and a file store in temporary
// directories; a second call with the same store stands for another worker.
func newTestWorkspaces(t *testing.T, store sandbox.Store) *sandbox.Workspaces {
	t.Helper()
	ws, err := sandbox.NewWorkspaces(sandbox.Config{Dir: filepath.Join(t.TempDir(), "work"), Store: store})
	require.NoError(t, err)
	return ws
}

// fakeRunner stands for bubblewrap: it runs do in the workspace directory (a host path) and
// counts its runs.
type fakeRunner struct {
	runs atomic.Int64
	do   func(ctx context.Context, dir string, cmd sandbox.Command) (sandbox.Output, error)
}

func (f *fakeRunner) run(ctx context.Context, dir string, cmd sandbox.Command) (sandbox.Output, error) {
	f.runs.Add(1)
	return f.do(ctx, dir, cmd)
}

// sandboxHarness is a registry of the sandbox tools on workspaces of a file store, with a fake
// runner.
type sandboxHarness struct {
	reg    *toolcore.Registry
	ws     *sandbox.Workspaces
	store  sandbox.Store
	runner *fakeRunner
}

func newSandboxHarness(t *testing.T, cfg Sandbox, store sandbox.Store, do func(ctx context.Context, dir string, cmd sandbox.Command) (sandbox.Output, error)) *sandboxHarness {
	t.Helper()
	if store.Heads == nil {
		store = sandbox.FileStore(t.TempDir(), nil)
	}
	h := &sandboxHarness{ws: newTestWorkspaces(t, store), store: store, runner: &fakeRunner{do: do}}
	cfg.Workspaces, cfg.run = h.ws, h.runner.run
	h.reg = newTestRegistry(t, Config{Sandbox: &cfg, Logger: zaptest.NewLogger(t)})
	return h
}

// callIn runs one call of the agent run run with the idempotency key key, as the durable path
// does (validate, invoke with the execution values, complete), and returns its result and the
// raw output.
func (h *sandboxHarness) callIn(t *testing.T, ctx context.Context, run, key, name, args string) (toolcore.Result, any) {
	t.Helper()
	call, err := toolcore.NewToolCall("call-1", name, []byte(args))
	require.NoError(t, err)
	tool, ok := h.reg.Get(name)
	require.True(t, ok, name)
	accepted, rejected, ok := tool.Validate(call)
	if !ok {
		return rejected, nil
	}
	out, err := tool.Invoke(toolcore.WithExecution(ctx, toolcore.Execution{ToolCallID: "call-1", ToolName: name, IdempotencyKey: key, Run: run}), accepted)
	res, cerr := toolcore.Complete(call, out, err)
	require.NoError(t, cerr)
	return res, out
}

// writeOut is a fake command that writes name=content into the workspace and prints stdout.
func writeOut(name, content, stdout string) func(context.Context, string, sandbox.Command) (sandbox.Output, error) {
	return func(_ context.Context, dir string, _ sandbox.Command) (sandbox.Output, error) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return sandbox.Output{}, err
		}
		return sandbox.Output{Stdout: stdout, StdoutBytes: int64(len(stdout))}, nil
	}
}

func decodeExec(t *testing.T, res toolcore.Result) execResult {
	t.Helper()
	var r execResult
	requireOK(t, res, &r)
	return r
}

// exec's result: exit code, signal, the streams and their sizes, and the workspace's version and
// whether the call changed it; a non-zero exit is a result, not an error. The command gets the
// validated arguments, the configured limits and the timeout as its wall limit.
func TestExecResults(t *testing.T) {
	var got sandbox.Command
	step := 0
	h := newSandboxHarness(t, Sandbox{Env: []string{"GOFLAGS"}, Limits: sandbox.Limits{Memory: 256 << 20}}, sandbox.Store{},
		func(_ context.Context, dir string, cmd sandbox.Command) (sandbox.Output, error) {
			got = cmd
			step++
			if step == 1 {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "made"), []byte("x"), 0o644))
				return sandbox.Output{ExitCode: 3, Stdout: "out\n", Stderr: "err\n", StdoutBytes: 4, StderrBytes: 4}, nil
			}
			return sandbox.Output{ExitCode: -1, Signal: "killed"}, nil
		})
	ctx := context.Background()
	res, _ := h.callIn(t, ctx, "run-1", "k1", NameExec, `{"argv":["go","test"],"stdin":"in","env":{"GOFLAGS":"-v"},"dir":"src","timeout":5}`)
	assert.Equal(t, execResult{ExitCode: 3, Stdout: "out\n", Stderr: "err\n", StdoutBytes: 4, StderrBytes: 4, Workspace: workspaceState{Version: 1, Changed: true}}, decodeExec(t, res))
	assert.Equal(t, []string{"go", "test"}, got.Argv)
	assert.Equal(t, []byte("in"), got.Stdin)
	assert.Equal(t, map[string]string{"GOFLAGS": "-v"}, got.Env)
	assert.Equal(t, "src", got.Dir)
	assert.Equal(t, 5*time.Second, got.Limits.Wall)
	assert.Equal(t, int64(256<<20), got.Limits.Memory)
	assert.Empty(t, got.AllowHosts)

	res, _ = h.callIn(t, ctx, "run-1", "k2", NameExec, `{"shell":"kill -9 $$","timeout":3600}`)
	assert.Equal(t, execResult{ExitCode: -1, Signal: "killed", Workspace: workspaceState{Version: 1}}, decodeExec(t, res), "nothing changed: nothing committed")
	assert.Equal(t, "kill -9 $$", got.Shell)
	assert.Zero(t, got.Limits.Wall, "a timeout above the configured wall limit leaves the runner's")

	head, err := h.ws.Head(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, "k1", head.Call)
	assert.Equal(t, int64(1), head.Version)
}

// A limit that ended the command, a conflict with another worker's commit, a runner that could
// not start the command, and a cancellation are error results (or the cancellation), and leave
// the workspace as it was: the command's changes are discarded.
func TestExecFailuresDiscardChanges(t *testing.T) {
	ctx := context.Background()
	t.Run("limit", func(t *testing.T) {
		h := newSandboxHarness(t, Sandbox{Limits: sandbox.Limits{Wall: 90 * time.Second}}, sandbox.Store{},
			func(_ context.Context, dir string, _ sandbox.Command) (sandbox.Output, error) {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "half"), []byte("x"), 0o644))
				return sandbox.Output{ExitCode: -1, Signal: "killed", Limit: "wall", Stderr: "compiling\x1b[2J", StderrBytes: 12}, nil
			})
		res, _ := h.callIn(t, ctx, "run-1", "k1", NameExec, `{"argv":["make"]}`)
		assert.Equal(t, `exec: the command was stopped at its time limit (1m30s); its changes to the workspace were discarded. `+
			`It wrote 0 bytes to stdout and 12 to stderr; stderr ends "compiling\x1b[2J"`, requireError(t, res, toolcore.CodeToolExecutionFailed))
		assertNoHead(t, h.ws, "run-1")
		res, _ = h.callIn(t, ctx, "run-1", "k2", NameWorkspaceListDir, `{}`)
		assert.Equal(t, `{"entries":[],"path":".","truncated":false}`, res.Content(), "the half-made file is gone")
	})
	t.Run("conflict", func(t *testing.T) {
		store := sandbox.FileStore(t.TempDir(), nil)
		var other *sandboxHarness
		h := newSandboxHarness(t, Sandbox{}, store, func(ctx context.Context, dir string, _ sandbox.Command) (sandbox.Output, error) {
			// Another worker commits the same workspace while this command runs.
			res, _ := other.callIn(t, ctx, "run-1", "toolcall-other", NameWorkspaceWriteFile, `{"path":"b","content":"theirs"}`)
			require.False(t, res.IsError(), res.Content())
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("mine"), 0o644))
			return sandbox.Output{}, nil
		})
		other = newSandboxHarness(t, Sandbox{}, store, nil)
		res, _ := h.callIn(t, ctx, "run-1", "k1", NameExec, `{"argv":["touch","a"]}`)
		assert.Equal(t, `exec: the workspace was changed by the call "toolcall-other" while this call ran; this call's changes to the workspace `+
			`were discarded (run it again to apply them to the new state)`, requireError(t, res, toolcore.CodeToolExecutionFailed))
		res, _ = h.callIn(t, ctx, "run-1", "k2", NameWorkspaceListDir, `{}`)
		assert.Equal(t, `{"entries":["b"],"path":".","truncated":false}`, res.Content())
	})
	t.Run("cannot start", func(t *testing.T) {
		h := newSandboxHarness(t, Sandbox{}, sandbox.Store{}, func(context.Context, string, sandbox.Command) (sandbox.Output, error) {
			return sandbox.Output{}, errors.New("fork/exec /usr/bin/bwrap: no such file or directory")
		})
		res, _ := h.callIn(t, ctx, "run-1", "k1", NameExec, `{"argv":["true"]}`)
		assert.Equal(t, "exec: the command could not start (the operator's log says why)", requireError(t, res, toolcore.CodeToolExecutionFailed),
			"the runner's error may name host paths: the model reads fixed words")
	})
	t.Run("invalid command", func(t *testing.T) {
		h := newSandboxHarness(t, Sandbox{}, sandbox.Store{}, func(context.Context, string, sandbox.Command) (sandbox.Output, error) {
			return sandbox.Output{}, errors.Join(sandbox.ErrInvalidCommand, errors.New(`working directory "src" is not a directory in the workspace`))
		})
		res, _ := h.callIn(t, ctx, "run-1", "k1", NameExec, `{"argv":["ls"],"dir":"src"}`)
		assert.Contains(t, requireError(t, res, toolcore.CodeToolExecutionFailed), `working directory "src" is not a directory in the workspace`)
	})
	t.Run("canceled", func(t *testing.T) {
		cctx, cancel := context.WithCancelCause(ctx)
		stopped := make(chan struct{})
		h := newSandboxHarness(t, Sandbox{}, sandbox.Store{}, func(ctx context.Context, dir string, _ sandbox.Command) (sandbox.Output, error) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "half"), []byte("x"), 0o644))
			cancel(errors.New("call canceled"))
			<-ctx.Done()
			close(stopped)
			return sandbox.Output{}, ctx.Err()
		})
		_, out := h.callIn(t, cctx, "run-1", "k1", NameExec, `{"argv":["sleep","600"]}`)
		assert.Nil(t, out)
		select {
		case <-stopped:
		default:
			t.Fatal("exec returned before its runner")
		}
		assertNoHead(t, h.ws, "run-1")
	})
}

func assertNoHead(t *testing.T, ws *sandbox.Workspaces, name string) {
	t.Helper()
	_, err := ws.Head(context.Background(), name)
	assert.ErrorIs(t, err, sandbox.ErrNoWorkspace)
}

// Long output: the result shows each stream's tail, as much as fits the content cap beside every
// other field, with truncated; with a part store the whole streams are attached as parts.
func TestExecOutputBounds(t *testing.T) {
	big := strings.Repeat("0123456789\n", 100_000) + "last line\n"
	do := func(context.Context, string, sandbox.Command) (sandbox.Output, error) {
		return sandbox.Output{Stdout: big, Stderr: "warning\n", StdoutBytes: int64(len(big)) + 5000, StderrBytes: 8, Truncated: true}, nil
	}
	for _, parts := range []bool{false, true} {
		h := newSandboxHarness(t, Sandbox{Parts: parts}, sandbox.Store{}, do)
		res, out := h.callIn(t, context.Background(), "run-1", "k1", NameExec, `{"argv":["yes"]}`)
		assert.LessOrEqual(t, len([]rune(res.Content())), toolcore.MaxContentCodePoints)
		r := decodeExec(t, res)
		assert.True(t, r.Truncated)
		assert.True(t, strings.HasSuffix(big, r.Stdout), "a tail")
		assert.True(t, strings.HasPrefix(r.Stdout, "0123456789\n"), "from the start of a line")
		assert.Contains(t, r.Stdout, "last line\n")
		assert.Greater(t, len(r.Stdout), 3000, "most of the cap")
		assert.Equal(t, "warning\n", r.Stderr, "the short stream whole")
		assert.Equal(t, int64(len(big))+5000, r.StdoutBytes)
		if !parts {
			assert.Empty(t, r.Attached)
			assert.Empty(t, res.Parts())
			continue
		}
		assert.Equal(t, []string{"stdout"}, r.Attached)
		rich, ok := out.(toolcore.Rich)
		require.True(t, ok)
		require.Len(t, rich.Parts, 1)
		assert.Equal(t, toolcore.PartResource, rich.Parts[0].Type)
		assert.Equal(t, "sandbox:stdout", rich.Parts[0].URI)
		assert.Equal(t, big, string(rich.Parts[0].Data))
	}
}

// A call whose commit is the workspace's head returns what it recorded when it runs again (an
// idempotent command retried after a lost worker, a result lost after the commit), running
// nothing; a progress report names the command while it runs.
func TestExecRunAgainAfterCommitReturnsTheRecord(t *testing.T) {
	h := newSandboxHarness(t, Sandbox{Commands: []SandboxCommand{{Name: "run_tests", Argv: []string{"go", "test", "./..."}, Idempotent: true}}}, sandbox.Store{},
		writeOut("report.txt", "ok", "PASS\n"))
	first, _ := h.callIn(t, context.Background(), "run-1", "toolcall-t1", "run_tests", `{}`)
	again, _ := h.callIn(t, context.Background(), "run-1", "toolcall-t1", "run_tests", `{}`)
	assert.Equal(t, first.Content(), again.Content())
	assert.Equal(t, int64(1), h.runner.runs.Load())
	assert.Equal(t, execResult{Stdout: "PASS\n", StdoutBytes: 5, Workspace: workspaceState{Version: 1, Changed: true}}, decodeExec(t, again))

	var reports []toolcore.Progress
	ctx := toolcore.WithExecution(context.Background(), toolcore.Execution{IdempotencyKey: "toolcall-t2", Run: "run-1",
		OnProgress: func(p toolcore.Progress) { reports = append(reports, p) }})
	tool, _ := h.reg.Get("run_tests")
	_, err := tool.Invoke(ctx, json.RawMessage(`{}`))
	require.NoError(t, err)
	require.NotEmpty(t, reports)
	assert.Equal(t, toolcore.Progress{Total: int64(sandbox.DefaultLimits.Wall / time.Second), Message: "running go test ./..."}, reports[0])
}

// exec's Reconcile reads the workspace's head: the lost attempt committed (the head names its
// call): found, its recorded result; nothing committed since the attempt started (its
// checkpoint's version is the head's) or no workspace at all: not found, so it runs again when
// it has no network; another call committed since: the outcome is unknown.
func TestExecReconcile(t *testing.T) {
	h := newSandboxHarness(t, Sandbox{}, sandbox.Store{}, writeOut("f", "1", "done\n"))
	ctx := context.Background()
	tool, _ := h.reg.Get(NameExec)
	reconcile := func(run, key string, checkpoint string) (any, bool, error) {
		return tool.Reconcile(toolcore.WithExecution(ctx, toolcore.Execution{IdempotencyKey: key, Run: run, LastCheckpoint: json.RawMessage(checkpoint)}), key)
	}

	_, found, err := reconcile("run-1", "toolcall-lost", `{"base":0}`)
	require.NoError(t, err)
	assert.False(t, found, "no workspace yet")

	committed, _ := h.callIn(t, ctx, "run-1", "toolcall-lost", NameExec, `{"argv":["make"]}`)
	out, found, err := reconcile("run-1", "toolcall-lost", `{"base":0}`)
	require.NoError(t, err)
	require.True(t, found)
	res, err := toolcore.Complete(mustCall(t), out, nil)
	require.NoError(t, err)
	assert.Equal(t, committed.Content(), res.Content(), "the recorded result")

	_, found, err = reconcile("run-1", "toolcall-other", `{"base":1}`)
	require.NoError(t, err)
	assert.False(t, found, "nothing committed since the attempt started")

	_, found, err = reconcile("run-1", "toolcall-other", `{"base":0}`)
	assert.True(t, found)
	effect, failed := toolcore.EffectFailure(err)
	require.True(t, failed, "%v", err)
	assert.Equal(t, "exec: outcome unknown: the attempt was lost, and other calls committed the workspace since it started (version 0, then 1): "+
		"whether its changes are among theirs cannot be told, so it is not run again", effect.Error())
}

func mustCall(t *testing.T) toolcore.ToolCall {
	call, err := toolcore.NewToolCall("call-1", NameExec, []byte(`{}`))
	require.NoError(t, err)
	return call
}

// The workspace file tools: a write creates the directories it needs and commits; reads see
// the workspace on any worker sharing the store; every path stays inside the workspace, through
// symbolic links the sandbox left too.
func TestWorkspaceFileTools(t *testing.T) {
	store := sandbox.FileStore(t.TempDir(), nil)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("host secret"), 0o644))
	h := newSandboxHarness(t, Sandbox{}, store, func(_ context.Context, dir string, _ sandbox.Command) (sandbox.Output, error) {
		// What a command may leave: links out of the workspace, absolute and relative.
		require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "abs")))
		require.NoError(t, os.Symlink("../../../../../../../../"+outside, filepath.Join(dir, "up")))
		require.NoError(t, os.Symlink("src", filepath.Join(dir, "inside")))
		return sandbox.Output{}, nil
	})
	ctx := context.Background()
	res, _ := h.callIn(t, ctx, "run-1", "k1", NameWorkspaceWriteFile, `{"path":"src/pkg/main.go","content":"package main\n","executable":true}`)
	assert.Equal(t, `{"bytes":13,"path":"src/pkg/main.go","workspace":{"changed":true,"version":1}}`, res.Content())
	res, _ = h.callIn(t, ctx, "run-1", "k2", NameExec, `{"argv":["ln"]}`)
	require.False(t, res.IsError(), res.Content())

	other := newSandboxHarness(t, Sandbox{}, store, nil) // another worker
	res, _ = other.callIn(t, ctx, "run-1", "k3", NameWorkspaceReadFile, `{"path":"src/pkg/main.go"}`)
	assert.Equal(t, `{"content":"package main\n","offset":0,"path":"src/pkg/main.go","size":13,"truncated":false}`, res.Content())
	res, _ = other.callIn(t, ctx, "run-1", "k4", NameWorkspaceListDir, `{"path":"inside/pkg"}`)
	assert.Equal(t, `{"entries":["main.go"],"path":"inside/pkg","truncated":false}`, res.Content(), "a link inside is followed")
	res, _ = other.callIn(t, ctx, "run-1", "k5", NameWorkspaceListDir, `{}`)
	assert.Equal(t, `{"entries":["abs","inside","src/","up"],"path":".","truncated":false}`, res.Content())

	for _, tt := range []struct{ tool, args, want string }{
		{NameWorkspaceReadFile, `{"path":"abs"}`, `read "abs": the path leads outside the workspace (symbolic links must stay inside it and be relative)`},
		{NameWorkspaceReadFile, `{"path":"up/secret"}`, `read "up/secret": the path leads outside the workspace (symbolic links must stay inside it and be relative)`},
		{NameWorkspaceListDir, `{"path":"up"}`, `list "up": the path leads outside the workspace (symbolic links must stay inside it and be relative)`},
		{NameWorkspaceReadFile, `{"path":"src"}`, `read "src": is a directory; use workspace_list_dir`},
		{NameWorkspaceListDir, `{"path":"src/pkg/main.go"}`, `list "src/pkg/main.go": not a directory; use workspace_read_file`},
		{NameWorkspaceWriteFile, `{"path":"abs","content":"x"}`, `write "abs": not a regular file`},
		{NameWorkspaceWriteFile, `{"path":"up/secret","content":"x"}`, `write "up/secret": "up" is not a directory`},
		{NameWorkspaceWriteFile, `{"path":"up/new/x","content":"x"}`, `write "up/new/x": "up" is not a directory`},
	} {
		res, _ := other.callIn(t, ctx, "run-1", "k6", tt.tool, tt.args)
		assert.Equal(t, tt.want, requireError(t, res, toolcore.CodeToolExecutionFailed), tt.args)
	}
	data, err := os.ReadFile(filepath.Join(outside, "secret"))
	require.NoError(t, err)
	assert.Equal(t, "host secret", string(data))
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing made outside")

	res, _ = other.callIn(t, ctx, "run-1", "k7", NameWorkspaceWriteFile, `{"path":"inside/pkg/b.txt","content":"via link"}`)
	require.False(t, res.IsError(), res.Content())
	res, _ = h.callIn(t, ctx, "run-1", "k8", NameWorkspaceReadFile, `{"path":"src/pkg/b.txt"}`)
	assert.Contains(t, res.Content(), `"content":"via link"`, "the first worker restores the other's commit")
}

// A call outside any agent run and without a key has no workspace.
func TestSandboxToolsNeedAWorkspaceName(t *testing.T) {
	h := newSandboxHarness(t, Sandbox{}, sandbox.Store{}, writeOut("f", "", ""))
	res, _ := h.callIn(t, context.Background(), "", "", NameExec, `{"argv":["true"]}`)
	assert.Equal(t, "exec: no workspace: the call names no agent run", requireError(t, res, toolcore.CodeToolExecutionFailed))
	assert.Zero(t, h.runner.runs.Load())
	res, _ = h.callIn(t, context.Background(), "", "toolcall-solo", NameExec, `{"argv":["true"]}`)
	assert.False(t, res.IsError(), "the key names the workspace of a call of no run (in process)")
	_, err := h.ws.Head(context.Background(), "toolcall-solo")
	require.NoError(t, err)
}

// With the codec keyring a call's record is sealed in the workspace's head (the heads are plain
// files or a table): the command's output is not there in plaintext, and Reconcile and a retry
// still read it; a worker without the key, or a plaintext record where records are sealed, finds
// none.
func TestSandboxRecordsSealed(t *testing.T) {
	keys, err := codec.NewKeyring(codec.Key{ID: "k1", Secret: bytes.Repeat([]byte{7}, 32)})
	require.NoError(t, err)
	store := sandbox.FileStore(t.TempDir(), nil)
	h := newSandboxHarness(t, Sandbox{Keys: keys}, store, writeOut("f", "1", "the secret output\n"))
	ctx := context.Background()
	first, _ := h.callIn(t, ctx, "run-1", "toolcall-a", NameExec, `{"argv":["make"]}`)
	require.False(t, first.IsError(), first.Content())
	head, err := h.ws.Head(ctx, "run-1")
	require.NoError(t, err)
	assert.NotContains(t, string(head.Record), "secret output")
	assert.Contains(t, string(head.Record), `"keyId":"k1"`)

	again, _ := h.callIn(t, ctx, "run-1", "toolcall-a", NameExec, `{"argv":["make"]}`)
	assert.Equal(t, first.Content(), again.Content())
	assert.Equal(t, int64(1), h.runner.runs.Load(), "the retry read the sealed record")
	tool, _ := h.reg.Get(NameExec)
	out, found, err := tool.Reconcile(toolcore.WithExecution(ctx, toolcore.Execution{IdempotencyKey: "toolcall-a", Run: "run-1"}), "toolcall-a")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "the secret output\n", out.(execResult).Stdout)

	keyless := newSandboxHarness(t, Sandbox{}, store, writeOut("f", "1", "x"))
	keylessTool, _ := keyless.reg.Get(NameExec)
	_, _, err = keylessTool.Reconcile(toolcore.WithExecution(ctx, toolcore.Execution{IdempotencyKey: "toolcall-a", Run: "run-1"}), "toolcall-a")
	assert.EqualError(t, err, "exec: the workspace's record of the call cannot be read (the operator's log says why)")

	plain := newSandboxHarness(t, Sandbox{}, store, writeOut("g", "2", "plain"))
	res, _ := plain.callIn(t, ctx, "run-1", "toolcall-b", NameExec, `{"argv":["make"]}`)
	require.False(t, res.IsError(), res.Content())
	_, _, err = tool.Reconcile(toolcore.WithExecution(ctx, toolcore.Execution{IdempotencyKey: "toolcall-b", Run: "run-1"}), "toolcall-b")
	assert.Error(t, err, "a plaintext record where records are sealed")
}
