package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// perSandboxRunner is the test runner, when it counts processes and memory per sandbox (a root
// worker on a cgroup v1 host, as make test runs); the test is skipped elsewhere.
func perSandboxRunner(t *testing.T) *Runner {
	t.Helper()
	r := newTestRunner(t)
	if ok, why := r.PerSandboxLimits(); !ok {
		t.Skipf("limits are per host user and process here: %s", why)
	}
	return r
}

// A sandbox at its process limit keeps no other sandbox of the same host user from starting or
// forking: each counts its own processes (its pids group), where RLIMIT_NPROC counted every
// sandbox of the user together (the second, limited to 16, could not start beside the first's
// 60 processes).
func TestRunProcessesArePerSandbox(t *testing.T) {
	r := perSandboxRunner(t)
	mark := marker(t)
	full := newWorkspace(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		// Forks sleepers until a fork fails, then says how many it started.
		_, err := r.Run(ctx, full, Command{Env: mark, Limits: Limits{Processes: 64, Wall: 5 * time.Minute},
			Argv: []string{"perl", "-e", `my $n = 0;
				while (1) { my $pid = fork; last unless defined $pid; if ($pid == 0) { sleep 600; exit } $n++ }
				open(my $f, ">", "full") or die; print $f $n; close $f; sleep 600`}})
		done <- err
	}()
	var started string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(full, "full"))
		started = string(b)
		return err == nil && started != ""
	}, time.Minute, 20*time.Millisecond, "the first sandbox reaches its process limit")
	n, err := strconv.Atoi(started)
	require.NoError(t, err)
	assert.Less(t, n, 64, "its forks beyond its limit failed")

	out := run(t, r, newWorkspace(t, r), Command{Shell: `for i in 1 2 3 4 5 6 7 8; do true & done; wait; echo forked`, Limits: Limits{Processes: 16}})
	assert.Equal(t, 0, out.ExitCode, out.Stderr)
	assert.Equal(t, "forked\n", out.Stdout, "another sandbox of the same user, with a lower limit, starts and forks")

	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.Empty(t, markedProcesses(t, mark, ""))
	assert.Empty(t, sandboxGroups(t, r), "every sandbox's groups are removed")
}

// The memory of a sandbox's processes together is bounded, tmpfs pages included: processes each
// within their own limits that fill /tmp beyond the sandbox's Memory are killed by the kernel,
// and the Output names the limit.
func TestRunMemoryIsPerSandbox(t *testing.T) {
	r := perSandboxRunner(t)
	out := run(t, r, newWorkspace(t, r), Command{
		Shell:  `for i in 1 2 3 4; do head -c 25165824 /dev/zero > /tmp/f$i; done; echo wrote 96 MiB`,
		Limits: Limits{Memory: 64 << 20, Tmp: 256 << 20},
	})
	// Which process the kernel kills first (a writer, the shell) varies; that it killed one does not.
	assert.Equal(t, "memory", out.Limit, "exit %d %s: %s %s", out.ExitCode, out.Signal, out.Stdout, out.Stderr)
	assert.Empty(t, sandboxGroups(t, r))

	out = run(t, r, newWorkspace(t, r), Command{
		Shell:  `for i in 1 2; do head -c 16777216 /dev/zero > /tmp/f$i; done; echo wrote 32 MiB`,
		Limits: Limits{Memory: 64 << 20, Tmp: 256 << 20},
	})
	assert.Equal(t, "wrote 32 MiB\n", out.Stdout, "within the limit: %s", out.Stderr)
	assert.Empty(t, out.Limit)
}

// sandboxGroups lists this process's sandbox groups left in the runner's hierarchies.
func sandboxGroups(t *testing.T, r *Runner) []string {
	t.Helper()
	var left []string
	for _, parent := range r.cgroups.parents {
		entries, err := os.ReadDir(parent)
		require.NoError(t, err)
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "w"+strconv.Itoa(os.Getpid())+"-") {
				left = append(left, filepath.Join(parent, e.Name()))
			}
		}
	}
	return left
}

func TestOwnCgroupsAndMountinfo(t *testing.T) {
	f := filepath.Join(t.TempDir(), "cgroup")
	require.NoError(t, os.WriteFile(f, []byte("12:pids:/a/b\n4:memory:/process_api/x\n3:cpu,cpuacct:/\n0::/\n"), 0o600))
	own, err := ownCgroups(f)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"pids": "/a/b", "memory": "/process_api/x", "cpu": "/", "cpuacct": "/"}, own)

	m := cgroupMount{dir: "/sys/fs/cgroup/memory", root: "/process_api"}
	dir, ok := m.groupDir("/process_api/x")
	assert.True(t, ok)
	assert.Equal(t, "/sys/fs/cgroup/memory/x", dir)
	_, ok = m.groupDir("/other")
	assert.False(t, ok, "a group outside the mount's root")
	assert.Equal(t, "/sys/fs/cgroup/a b", unescapeMountinfo(`/sys/fs/cgroup/a\040b`))
}

// A sandbox's processes together get Limits.CPUs: two busy loops under 5% of a CPU wait for
// the quota (the worker keeps the rest for its heartbeats and the sandboxes beside it).
func TestRunCPUsArePerSandbox(t *testing.T) {
	r := perSandboxRunner(t)
	if !r.cgroups.cpu() {
		t.Skip("no cpu controller here")
	}
	// The loops run for half a second of wall time (sleep is the workload's clock, not a wait
	// of the test).
	out := run(t, r, newWorkspace(t, r), Command{
		Shell:  `yes > /dev/null & a=$!; yes > /dev/null & b=$!; sleep 0.5; kill $a $b; wait; echo done`,
		Limits: Limits{CPUs: 0.05},
	})
	assert.Equal(t, "done\n", out.Stdout, out.Stderr)
	assert.Positive(t, out.Throttled, "the loops waited for the sandbox's quota")
	assert.Empty(t, sandboxGroups(t, r))
}
