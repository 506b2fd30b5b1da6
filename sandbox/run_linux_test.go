package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUserTasksCountsThreads(t *testing.T) {
	threads, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, userTasks(os.Getuid()), len(threads), "at least this process's threads")
}

func TestRunInheritedDescriptorsStayOutside(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	// A descriptor without close-on-exec, as one inherited from the worker's parent: dup
	// does not set the flag.
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("host secret"), 0o644))
	f, err := os.Open(secret)
	require.NoError(t, err)
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd()))
	require.NoError(t, err)
	defer syscall.Close(fd)
	out := run(t, r, dir, Command{Shell: "cat <&" + strconv.Itoa(fd) + " 2>&1; ls /proc/$$/fd | tr '\\n' ' '"})
	assert.NotContains(t, out.Stdout, "host secret")
	assert.NotContains(t, strings.Fields(out.Stdout), strconv.Itoa(fd))
}

// NewWorkspaces with a Runner refuses a directory whose parents the sandbox's user cannot pass
// (a root worker binds each workspace as that user): the CLI checked it, a library user got a
// sandbox that failed at its first command.
func TestNewWorkspacesRefusesAnUnreachableDir(t *testing.T) {
	r := newTestRunner(t)
	if os.Geteuid() != 0 {
		t.Skip("a worker that is not root runs the sandbox as itself")
	}
	private := t.TempDir()
	require.NoError(t, os.Chmod(private, 0o700))
	require.NoError(t, os.Chmod(filepath.Dir(private), 0o711))
	cfg := Config{Dir: filepath.Join(private, "ws"), Store: FileStore(t.TempDir(), nil), Runner: r}
	_, err := NewWorkspaces(cfg)
	require.ErrorIs(t, err, ErrDirUnreachable)
	assert.ErrorContains(t, err, "cannot pass through "+private)

	require.NoError(t, os.Chmod(private, 0o711))
	_, err = NewWorkspaces(cfg)
	require.NoError(t, err)
}
