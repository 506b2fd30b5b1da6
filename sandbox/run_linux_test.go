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
