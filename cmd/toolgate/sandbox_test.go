package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/sandbox"
)

// commitWorkspace commits files (path: content; "link:" prefixes a symlink's target) as a new
// snapshot of the workspace name in store, by the call key.
func commitWorkspace(t *testing.T, store sandbox.Store, name, key string, files map[string]string) {
	t.Helper()
	ctx := context.Background()
	ws, err := sandbox.NewWorkspaces(sandbox.Config{Dir: filepath.Join(t.TempDir(), "work"), Store: store})
	require.NoError(t, err)
	w, err := ws.Open(ctx, name)
	require.NoError(t, err)
	defer w.Close()
	for p, content := range files {
		full := filepath.Join(w.Dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		if target, ok := cutPrefix(content, "link:"); ok {
			require.NoError(t, os.Symlink(target, full))
			continue
		}
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	_, changed, err := w.Commit(ctx, key, json.RawMessage(`{"exitCode":0}`))
	require.NoError(t, err)
	require.True(t, changed)
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

// TestSandboxListShowRemove: toolgate sandbox list shows every workspace of a real store
// (sealed with a codec key; the listing needs none), show one's head and files (with the key),
// names, paths and link targets escaped for the terminal and exact in JSON; rm removes one, and
// the next list lacks it; a workspace the store lacks is exit 2.
func TestSandboxListShowRemove(t *testing.T) {
	keys := codecKeyFile(t)
	keyring, err := codec.LoadKeyring(keys, nil)
	require.NoError(t, err)
	storeDir := filepath.Join(t.TempDir(), "store")
	store := sandbox.FileStore(storeDir, keyring)
	evil := "agent-\u202eevil\x1b[2J"
	commitWorkspace(t, store, evil, "toolcall-w2", map[string]string{"x": "x"})
	before := storeFiles(t, storeDir)
	commitWorkspace(t, store, "agent-1", "toolcall-w1", map[string]string{"main.go": "package main\n", "src/a\x1b.txt": "a", "up": "link:../../etc"})

	code, out, stderr := runIn([]string{"sandbox", "list", "--sandbox-store", storeDir}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	assert.Regexp(t, `^agent-1\t1\t2\t14\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\ttoolcall-w1$`, lines[0])
	assert.Regexp(t, `^agent-\\u202eevil\\u001b\[2J\t1\t1\t1\t\S+\ttoolcall-w2$`, lines[1])
	assert.Equal(t, "note\t(escaped 2 control characters)", lines[2])

	code, out, stderr = runIn([]string{"sandbox", "list", "--json"}, []string{"TOOLGATE_SANDBOX_STORE=" + storeDir}, "")
	require.Equal(t, ExitOK, code, stderr)
	var listed []sandboxHeadJSON
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed, 2)
	assert.Equal(t, evil, listed[1].Workspace, "JSON keeps the exact name")
	assert.Equal(t, int64(2), listed[0].Files, "regular files")

	code, out, stderr = runIn([]string{"sandbox", "show", "agent-1", "--sandbox-store", storeDir, "--codec-key", keys}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, out, "workspace agent-1\nversion   1\nfiles     2\nbytes     14\n")
	assert.Contains(t, out, "call      toolcall-w1\n")
	assert.Contains(t, out, "-rw-r--r--\t13\tmain.go\n")
	assert.Contains(t, out, "-rw-r--r--\t1\tsrc/a\\u001b.txt\n")
	assert.Contains(t, out, "Lrwxrwxrwx\t0\tup -> ../../etc\n")
	assert.Contains(t, out, "note\t(escaped 1 control character)\n")

	code, out, stderr = runIn([]string{"sandbox", "show", "agent-1", "--sandbox-store", storeDir, "--codec-key", keys, "--json"}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	var shown sandboxShowJSON
	require.NoError(t, json.Unmarshal([]byte(out), &shown))
	assert.Equal(t, "agent-1", shown.Workspace)
	paths := []string{}
	for _, e := range shown.Entries {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"main.go", "src", "src/a\x1b.txt", "up"}, paths)

	code, _, stderr = runIn([]string{"sandbox", "show", "agent-1", "--sandbox-store", storeDir}, nil, "")
	assert.Equal(t, ExitFailure, code, "sealed snapshots need the key: %s", stderr)

	code, _, stderr = runIn([]string{"sandbox", "show", "agent-9", "--sandbox-store", storeDir, "--codec-key", keys}, nil, "")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "no workspace agent-9 in the store")

	code, out, stderr = runIn([]string{"sandbox", "rm", "agent-1", "--sandbox-store", storeDir, "--codec-key", keys}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	assert.Equal(t, "removed agent-1\n", out)
	code, out, stderr = runIn([]string{"sandbox", "list", "--sandbox-store", storeDir, "--json"}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed, 1)
	assert.Equal(t, evil, listed[0].Workspace)
	assert.Equal(t, before, storeFiles(t, storeDir), "nothing of the removed workspace is left")

	code, _, stderr = runIn([]string{"sandbox", "list"}, []string{"TOOLGATE_DATA_DIR=" + t.TempDir()}, "")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "no sandbox store")
}

// storeFiles lists the regular files under dir (lock files aside), relative to it.
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, ".lock") {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, rel)
		return err
	}))
	return files
}

// Sandbox flags that cannot make a sandbox are refused (exit 2) before the worker dials anything.
func TestSandboxFlagsRejected(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no store", []string{"--sandbox-dir", dir}, "--sandbox-dir needs a store the workers share"},
		{"bad command", []string{"--sandbox-dir", dir, "--sandbox-store", dir, "--sandbox-command", "run_tests"}, `--sandbox-command "run_tests": want NAME=LINE`},
		{"blank command", []string{"--sandbox-dir", dir, "--sandbox-store", dir, "--sandbox-idempotent-command", "t= "}, `--sandbox-idempotent-command "t= ": want NAME=LINE`},
		{"wall", []string{"--sandbox-dir", dir, "--sandbox-store", dir, "--sandbox-wall", "0s"}, "--sandbox-wall 0s: want a positive duration"},
		{"memory", []string{"--sandbox-dir", dir, "--sandbox-store", dir, "--sandbox-memory-mib", "0"}, "--sandbox-memory-mib 0: want 1 to 1048576"},
		{"retention", []string{"--sandbox-dir", dir, "--sandbox-store", dir, "--sandbox-retention", "-1h"}, "--sandbox-retention -1h0m0s: want a positive duration"},
		{"cpus", []string{"--sandbox-dir", dir, "--sandbox-store", dir, "--sandbox-cpus", "0"}, "--sandbox-cpus 0: want 0.01 to 1024"},
		{"cpus NaN", []string{"--sandbox-dir", dir, "--sandbox-store", dir, "--sandbox-cpus", "NaN"}, "--sandbox-cpus NaN: want 0.01 to 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runIn(append([]string{"worker", "--address", "127.0.0.1:1"}, tt.args...), nil, "")
			assert.Equal(t, ExitUsage, code, stderr)
			assert.Contains(t, stderr, tt.want)
		})
	}
}

// A worker's sweeper removes, at start and then every interval until it stops, the workspaces no
// call committed for the retention, and keeps the others.
func TestSandboxSweeperRemovesOldWorkspaces(t *testing.T) {
	storeDir := filepath.Join(t.TempDir(), "store")
	store := sandbox.FileStore(storeDir, nil)
	old := time.Now().Add(-30 * 24 * time.Hour)
	stale, err := sandbox.NewWorkspaces(sandbox.Config{Dir: filepath.Join(t.TempDir(), "work"), Store: store, Now: func() time.Time { return old }})
	require.NoError(t, err)
	commitWith(t, stale, "agent-old")
	commitWorkspace(t, store, "agent-new", "toolcall-n", map[string]string{"x": "x"})

	ws, err := sandbox.NewWorkspaces(sandbox.Config{Dir: filepath.Join(t.TempDir(), "work"), Store: store})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		runSandboxSweeper(ctx, ws, zaptest.NewLogger(t), time.Hour)
	}()
	require.Eventually(t, func() bool {
		_, err := ws.Head(context.Background(), "agent-old")
		return errors.Is(err, sandbox.ErrNoWorkspace)
	}, time.Minute, 10*time.Millisecond, "the sweep at start removes the old workspace")
	cancel()
	<-done
	_, err = ws.Head(context.Background(), "agent-new")
	assert.NoError(t, err, "a recent workspace stays")
}

// commitWith commits one file to the workspace name through ws.
func commitWith(t *testing.T, ws *sandbox.Workspaces, name string) {
	t.Helper()
	w, err := ws.Open(context.Background(), name)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "f"), []byte("f"), 0o644))
	_, _, err = w.Commit(context.Background(), "toolcall-"+name, nil)
	require.NoError(t, err)
}

// The sandbox store's PostgreSQL DSN comes from a file or the environment, never argv, and a bad
// one is refused without echoing it (it may hold a password).
func TestSandboxStorePostgresDSN(t *testing.T) {
	dsnFile := filepath.Join(t.TempDir(), "dsn")
	require.NoError(t, os.WriteFile(dsnFile, []byte("postgres://u:hunter2@[::1/db\n"), 0o600))
	tests := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"bad DSN in a file", []string{"sandbox", "list", "--sandbox-store-postgres-file", dsnFile}, nil, "the PostgreSQL DSN is not valid"},
		{"bad DSN in the environment", []string{"sandbox", "list"}, []string{sandboxStorePostgresEnv + "=postgres://u:hunter2@[::1/db"}, "the PostgreSQL DSN is not valid"},
		{"both stores", []string{"sandbox", "list", "--sandbox-store", "x", "--sandbox-store-postgres-file", dsnFile}, nil, "none of the others can be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runIn(tt.args, tt.env, "")
			assert.Equal(t, ExitUsage, code, stderr)
			assert.Contains(t, stderr, tt.want)
			assert.NotContains(t, out+stderr, "hunter2")
		})
	}
}
