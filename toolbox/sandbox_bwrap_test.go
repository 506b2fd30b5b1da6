package toolbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolcore"
)

var (
	bwrapOnce   sync.Once
	bwrapRunner *sandbox.Runner
	bwrapErr    error
)

// newBwrapHarness is a registry of the sandbox tools with the real bubblewrap runner, failing
// the test naming make setup when it cannot run here.
func newBwrapHarness(t *testing.T, cfg Sandbox) *sandboxHarness {
	t.Helper()
	bwrapOnce.Do(func() { bwrapRunner, bwrapErr = sandbox.NewRunner(sandbox.RunnerConfig{}) })
	if bwrapErr != nil {
		t.Fatalf("the sandbox tool tests need bubblewrap (run make setup): %v", bwrapErr)
	}
	// The local copies' parents must be reachable by the sandbox's user, as a worker's are.
	parent := t.TempDir()
	require.NoError(t, os.Chmod(parent, 0o711))
	require.NoError(t, os.Chmod(filepath.Dir(parent), 0o711))
	store := sandbox.FileStore(t.TempDir(), nil)
	owner := &sandbox.Owner{UID: bwrapRunner.UID(), GID: bwrapRunner.GID()}
	ws, err := sandbox.NewWorkspaces(sandbox.Config{Dir: filepath.Join(parent, "work"), Store: store, Runner: bwrapRunner, Owner: owner})
	require.NoError(t, err)
	cfg.Workspaces, cfg.Runner = ws, bwrapRunner
	return &sandboxHarness{reg: newTestRegistry(t, Config{Sandbox: &cfg, Logger: zaptest.NewLogger(t)}), ws: ws, store: store}
}

// The tool contract under the real sandbox: a file written with workspace_write_file runs in
// exec, the files a command leaves are read back, a non-zero exit is a result, the allowed
// environment reaches the command and nothing else of the host's does, a limit is an error
// result whose changes are gone, and a link a command points out of the workspace leads
// nowhere on the host side.
func TestExecUnderBubblewrap(t *testing.T) {
	h := newBwrapHarness(t, Sandbox{Env: []string{"GREETING"}})
	ctx := context.Background()
	call := func(key, name, args string) toolcore.Result {
		res, _ := h.callIn(t, ctx, "run-1", key, name, args)
		return res
	}

	res := call("k1", NameWorkspaceWriteFile, `{"path":"bin/hello.sh","content":"echo \"$GREETING from $(id -un)\"\necho built > out/result.txt\nexit 4\n","executable":true}`)
	require.False(t, res.IsError(), res.Content())
	res = call("k2", NameExec, `{"shell":"mkdir -p out && ./bin/hello.sh","env":{"GREETING":"hi"}}`)
	assert.Equal(t, execResult{ExitCode: 4, Stdout: "hi from sandbox\n", StdoutBytes: 16, Workspace: workspaceState{Version: 2, Changed: true}}, decodeExec(t, res))
	res = call("k3", NameWorkspaceReadFile, `{"path":"out/result.txt"}`)
	assert.Equal(t, `{"content":"built\n","offset":0,"path":"out/result.txt","size":6,"truncated":false}`, res.Content())

	t.Setenv("TOOLGATE_SANDBOX_TEST_SECRET", "s3cret")
	res = call("k4", NameExec, `{"argv":["sh","-c","env; cat"],"stdin":"fed","dir":"out"}`)
	r := decodeExec(t, res)
	assert.NotContains(t, r.Stdout, "s3cret")
	assert.Contains(t, r.Stdout, "PWD=/workspace/out")
	assert.True(t, strings.HasSuffix(r.Stdout, "fed"), r.Stdout)

	res = call("k5", NameExec, `{"shell":"echo partial > half.txt; sleep 30","timeout":1}`)
	assert.Contains(t, requireError(t, res, toolcore.CodeToolExecutionFailed), "exec: the command was stopped at its time limit (1s); its changes to the workspace were discarded")
	res = call("k6", NameWorkspaceReadFile, `{"path":"half.txt"}`)
	assert.Equal(t, `read "half.txt": no such file or directory`, requireError(t, res, toolcore.CodeToolExecutionFailed))

	res = call("k7", NameExec, `{"shell":"ln -s /etc/shadow shadow; ln -s ../../../../../../../etc etc; ln /etc/passwd hard 2>/dev/null; echo done"}`)
	require.False(t, res.IsError(), res.Content())
	for _, p := range []string{"shadow", "etc/passwd"} {
		res = call("k8", NameWorkspaceReadFile, `{"path":"`+p+`"}`)
		assert.Contains(t, requireError(t, res, toolcore.CodeToolExecutionFailed), "the path leads outside the workspace", p)
	}
	res = call("k9", NameWorkspaceReadFile, `{"path":"hard"}`)
	assert.Equal(t, `read "hard": no such file or directory`, requireError(t, res, toolcore.CodeToolExecutionFailed), "no hard link out of the sandbox")
}

// A canceled command leaves no process behind: exec returns only after the runner killed its
// process tree.
func TestExecCanceledUnderBubblewrap(t *testing.T) {
	h := newBwrapHarness(t, Sandbox{})
	ctx, cancel := context.WithCancel(context.Background())
	ctx = toolcore.WithExecution(ctx, toolcore.Execution{IdempotencyKey: "k1", Run: "run-1"})
	go func() {
		// Cancel once both sleeps run.
		assert.Eventually(t, func() bool { return len(processesWith("600.4711")) >= 3 }, time.Minute, 10*time.Millisecond)
		cancel()
	}()
	tool, _ := h.reg.Get(NameExec)
	begin := time.Now()
	_, err := tool.Invoke(ctx, []byte(`{"shell":"sleep 600.4711 & sleep 600.4711"}`))
	require.ErrorIs(t, err, context.Canceled)
	t.Logf("canceled after %s", time.Since(begin))
	assert.Empty(t, processesWith("600.4711"))
}

// processesWith returns the command lines of this machine's processes that hold arg.
func processesWith(arg string) []string {
	dirs, _ := os.ReadDir("/proc")
	var found []string
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), arg) {
			continue
		}
		found = append(found, strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return found
}
