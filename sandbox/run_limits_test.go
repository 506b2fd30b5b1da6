package sandbox

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stress runs the long forms of the limit and attack tests (big floods and fills).
var stress = flag.Bool("sandbox.stress", false, "run the sandbox's long stress forms (big output floods, workspace fills)")

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestRunLimitCPU(t *testing.T) {
	r := newTestRunner(t)
	out := run(t, r, newWorkspace(t, r), Command{Shell: "while :; do :; done", Limits: Limits{CPU: time.Second}})
	assert.Equal(t, "cpu", out.Limit)
	assert.Equal(t, -1, out.ExitCode)
	assert.Equal(t, "CPU time limit exceeded", out.Signal)
}

func TestRunLimitMemory(t *testing.T) {
	r := newTestRunner(t)
	// 512 MiB in one string, under a 128 MiB address space.
	out := run(t, r, newWorkspace(t, r), Command{
		Argv:   []string{"perl", "-e", `$s = "x" x (512*1024*1024); print "allocated\n"`},
		Limits: Limits{Memory: 128 << 20},
	})
	assert.NotEqual(t, 0, out.ExitCode)
	assert.NotContains(t, out.Stdout, "allocated")
	assert.Contains(t, out.Stderr, "Out of memory")
}

func TestRunLimitProcesses(t *testing.T) {
	r := newProcessLimitRunner(t)
	mark := marker(t)
	// Starts background sleeps until a fork fails; prints how many it started.
	out := run(t, r, newWorkspace(t, r), Command{
		Shell:  `i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); echo $i; done`,
		Env:    mark,
		Limits: Limits{Processes: 16},
	})
	n, err := strconv.Atoi(lastLine(out.Stdout))
	require.NoError(t, err, out.Stdout)
	assert.Less(t, n, 16, "forks beyond the limit fail")
	assert.Contains(t, out.Stderr, "fork")
	assert.Empty(t, markedProcesses(t, mark, ""))
}

func TestRunForkBombEnds(t *testing.T) {
	r := newProcessLimitRunner(t)
	mark := marker(t)
	out := run(t, r, newWorkspace(t, r), Command{
		Shell:  `bomb() { bomb | bomb & }; bomb; sleep 600`,
		Env:    mark,
		Limits: Limits{Processes: 32, Wall: time.Second},
	})
	assert.Equal(t, "wall", out.Limit)
	assert.Empty(t, markedProcesses(t, mark, ""), "every process of the bomb is gone")
}

func TestRunLimitOpenFiles(t *testing.T) {
	r := newTestRunner(t)
	out := run(t, r, newWorkspace(t, r), Command{
		Argv:   []string{"perl", "-e", `my @f; for (1..1000) { open(my $fh, "<", "/dev/null") or last; push @f, $fh } print scalar(@f), "\n"`},
		Limits: Limits{OpenFiles: 32},
	})
	n, err := strconv.Atoi(strings.TrimSpace(out.Stdout))
	require.NoError(t, err, out.Stderr)
	assert.Less(t, n, 32)
	assert.Greater(t, n, 20)
}

func TestRunLimitFileSize(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	out := run(t, r, dir, Command{Shell: "head -c 2097152 /dev/zero > big", Limits: Limits{FileSize: 1 << 20}})
	assert.Equal(t, "fileSize", out.Limit)
	fi, err := os.Stat(filepath.Join(dir, "big"))
	require.NoError(t, err)
	assert.Equal(t, int64(1<<20), fi.Size())
}

func TestRunLimitTmp(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	for _, path := range []string{"/tmp/big", "/dev/shm/big"} {
		out := run(t, r, dir, Command{Shell: "head -c 2097152 /dev/zero > " + path, Limits: Limits{Tmp: 1 << 20}})
		assert.NotEqual(t, 0, out.ExitCode, path)
		assert.Contains(t, out.Stderr, "No space left on device", path)
	}
}

func TestRunNothingWritableButWorkspaceAndTmp(t *testing.T) {
	r := newTestRunner(t)
	// bwrap's root and /dev are unsized tmpfs mounts in the host's memory: a command that could
	// write there would fill it past every limit.
	out := run(t, r, newWorkspace(t, r), Command{Shell: `for p in /x /etc/x /dev/x /usr/x /proc/x; do touch $p 2>/dev/null && echo wrote $p; done; mkdir /d 2>/dev/null && echo made /d; echo end`})
	assert.Equal(t, "end\n", out.Stdout)
}

func TestRunWorkspaceFillIsKilled(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	files := 1000 // 1 GiB unless killed
	if *stress {
		files = 20000
	}
	out := run(t, r, dir, Command{
		Shell:  `i=0; while [ $i -lt ` + strconv.Itoa(files) + ` ]; do head -c 1048576 /dev/zero > f$i || exit 9; i=$((i+1)); done; echo filled`,
		Limits: Limits{Workspace: 8 << 20},
	})
	assert.Equal(t, "workspace", out.Limit)
	assert.Equal(t, "killed", out.Signal)
	assert.NotContains(t, out.Stdout, "filled")
}

func TestRunOutputFloodIsBoundedInMemory(t *testing.T) {
	r := newTestRunner(t)
	size := int64(64 << 20)
	if *stress {
		size = 1 << 30
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := run(t, r, newWorkspace(t, r), Command{
		Shell:  "head -c " + strconv.FormatInt(size, 10) + " /dev/zero | tr '\\0' x; head -c " + strconv.FormatInt(size, 10) + " /dev/zero >&2",
		Limits: Limits{Output: 1 << 10},
	})
	runtime.ReadMemStats(&after)
	assert.Equal(t, size, out.StdoutBytes)
	assert.Equal(t, size, out.StderrBytes)
	assert.True(t, out.Truncated)
	assert.Equal(t, strings.Repeat("x", 1<<10), out.Stdout)
	assert.Len(t, out.Stderr, 1<<10)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "the flood is not buffered")
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	tl := &tail{max: 4}
	for _, w := range []string{"ab", "cdefg", "h", "", "ijklmnopq", "r"} {
		_, err := tl.Write([]byte(w))
		require.NoError(t, err)
		assert.LessOrEqual(t, len(tl.buf), 8)
	}
	assert.Equal(t, "nopqr"[1:], tl.String())
	assert.Equal(t, int64(18), tl.total)
	assert.True(t, tl.truncated())
	assert.Equal(t, "a\uFFFDb", (&tail{max: 8, buf: []byte("a\xffb"), total: 3}).String())
}
