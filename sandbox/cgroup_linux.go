package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupV1 places each sandbox of a root worker in control groups of its own, under the worker's
// own, in the cgroup v1 pids and memory hierarchies: the kernel then counts every process of
// one sandbox, and only those, against its Limits.Processes (pids.max), and the memory of all of
// them, its tmpfs pages included, against its Limits.Memory (memory.limit_in_bytes, and the
// memory+swap limit where swap is accounted). Where the cpu controller is mounted too, its
// processes together get Limits.CPUs (a CFS quota). Without it both are per host user and per process
// (rlimits), which lets one sandbox's processes keep the next from starting, and many processes
// each within RLIMIT_AS fill the host's memory.
type cgroupV1 struct {
	// controllers are the controllers in use, "pids", "memory" and, where mounted and writable,
	// "cpu"; parents the directories that hold this worker's sandbox groups in each
	// (<mount>/<the worker's group>/toolgate-sandboxes), in the same order.
	controllers, parents []string
	memsw                bool                   // the memory controller accounts swap: memory.memsw.limit_in_bytes
	mounts               map[string]cgroupMount // by controller
	seq                  atomic.Uint64
}

// cpu reports whether the sandboxes get a CPU quota (the cpu controller is in use).
func (c *cgroupV1) cpu() bool { return len(c.controllers) > 2 }

// cgroupParent is the directory, under the worker's own group, that holds its sandboxes' groups.
const cgroupParent = "toolgate-sandboxes"

// findCgroupV1 returns the cgroup v1 hierarchies of this worker's sandboxes, created when
// missing, or nil and why there are none: not root, no v1 pids and memory hierarchies mounted
// (a cgroup v2 host), or none writable.
func findCgroupV1() (*cgroupV1, string) {
	if os.Geteuid() != 0 {
		return nil, "the worker is not root"
	}
	mounts, err := cgroupV1Mounts()
	if err != nil {
		return nil, err.Error()
	}
	own, err := ownCgroups("/proc/self/cgroup")
	if err != nil {
		return nil, err.Error()
	}
	c := &cgroupV1{mounts: mounts}
	for _, ctl := range []string{"pids", "memory", "cpu"} {
		dir, why := sandboxParent(mounts[ctl], own, ctl)
		switch {
		case why == "":
			c.controllers, c.parents = append(c.controllers, ctl), append(c.parents, dir)
		case ctl != "cpu": // optional: without it the sandboxes share the worker's CPUs
			return nil, why
		}
	}
	_, err = os.Stat(filepath.Join(c.parents[1], "memory.memsw.limit_in_bytes"))
	c.memsw = err == nil
	c.removeStale()
	return c, ""
}

// sandboxParent creates, when missing, the directory of controller ctl (mounted at m, the zero
// value when not) that holds the sandboxes' groups under this process's group (own), and returns
// it, or why there is none.
func sandboxParent(m cgroupMount, own map[string]string, ctl string) (dir, why string) {
	g, mine := own[ctl]
	if m.dir == "" || !mine {
		return "", "no cgroup v1 " + ctl + " hierarchy (cgroup v2 is not used yet)"
	}
	dir, ok := m.groupDir(g)
	if !ok {
		return "", fmt.Sprintf("this process's %s group %s is outside the mount's root %s", ctl, g, m.root)
	}
	dir = filepath.Join(dir, cgroupParent)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Sprintf("cannot create a %s group: %v", ctl, err)
	}
	return dir, ""
}

// cgroupMount is where a v1 hierarchy is mounted (dir) and the group its root shows (root).
type cgroupMount struct{ dir, root string }

// groupDir is the directory of group (a path of /proc/PID/cgroup) under the mount.
func (m cgroupMount) groupDir(group string) (string, bool) {
	rel, err := filepath.Rel(m.root, group)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.Join(m.dir, rel), true
}

// cgroupV1Mounts returns the v1 hierarchies mounted in this process's mount namespace, by
// controller.
func cgroupV1Mounts() (map[string]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]cgroupMount{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - type source superoptions
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+3 >= len(fields) || fields[sep+1] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(fields[sep+3], ",") {
			if opt == "pids" || opt == "memory" || opt == "cpu" {
				out[opt] = cgroupMount{dir: unescapeMountinfo(fields[4]), root: unescapeMountinfo(fields[3])}
			}
		}
	}
	return out, sc.Err()
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups reads a /proc/<pid>/cgroup file: the v1 group of each controller.
func ownCgroups(file string) (map[string]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		// hierarchy-ID:controller[,controller]:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			if ctl != "" {
				out[ctl] = parts[2]
			}
		}
	}
	return out, nil
}

// removeStale removes the groups that workers no longer running left (a worker killed while its
// sandbox ran); a group still holding a process stays (rmdir refuses).
func (c *cgroupV1) removeStale() {
	for _, parent := range c.parents {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			pid, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), "w"), "-")
			n, err := strconv.Atoi(pid)
			if !ok || err != nil || !e.IsDir() || n == os.Getpid() || syscall.Kill(n, 0) != syscall.ESRCH {
				continue
			}
			_ = os.Remove(filepath.Join(parent, e.Name()))
		}
	}
}

// cfsPeriod is the scheduling period of a sandbox's CPU quota, in microseconds (the kernel's
// default).
const cfsPeriod = 100_000

// sandboxCgroup is the groups of one sandbox, one per controller in use.
type sandboxCgroup struct {
	c    *cgroupV1
	dirs []string // by c.controllers
	back []string // the tasks files of the entering thread's own groups
}

// create makes the groups of one sandbox with lim's limits.
func (c *cgroupV1) create(lim Limits) (s *sandboxCgroup, err error) {
	name := "w" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(c.seq.Add(1), 10)
	s = &sandboxCgroup{c: c}
	defer func() {
		if err != nil {
			s.remove()
		}
	}()
	for _, parent := range c.parents {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		s.dirs = append(s.dirs, dir)
	}
	pids, memory := s.dirs[0], s.dirs[1]
	limits := [][2]string{
		{filepath.Join(pids, "pids.max"), strconv.Itoa(lim.Processes)},
		{filepath.Join(memory, "memory.limit_in_bytes"), strconv.FormatInt(lim.Memory, 10)},
	}
	if c.memsw {
		limits = append(limits, [2]string{filepath.Join(memory, "memory.memsw.limit_in_bytes"), strconv.FormatInt(lim.Memory, 10)})
	}
	if c.cpu() {
		quota := max(int64(lim.CPUs*cfsPeriod), 1000) // the kernel's least quota is 1 ms
		limits = append(limits,
			[2]string{filepath.Join(s.dirs[2], "cpu.cfs_period_us"), strconv.Itoa(cfsPeriod)},
			[2]string{filepath.Join(s.dirs[2], "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10)})
	}
	for _, l := range limits {
		if err := os.WriteFile(l[0], []byte(l[1]), 0); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// enter moves the calling thread (locked to its goroutine) into the sandbox's groups: a process
// it forks starts in them, and so does every process that one starts. leave moves it back.
func (s *sandboxCgroup) enter() error {
	own, err := ownCgroups("/proc/thread-self/cgroup")
	if err != nil {
		return err
	}
	s.back = nil
	for _, ctl := range s.c.controllers {
		dir, ok := s.c.mounts[ctl].groupDir(own[ctl])
		if !ok {
			return fmt.Errorf("this thread's %s group %s is outside the mount", ctl, own[ctl])
		}
		s.back = append(s.back, filepath.Join(dir, "tasks"))
	}
	tid := []byte(strconv.Itoa(unix.Gettid()))
	for _, dir := range s.dirs {
		if err := os.WriteFile(filepath.Join(dir, "tasks"), tid, 0); err != nil {
			return errors.Join(err, s.leave())
		}
	}
	return nil
}

// leave moves the calling thread back to the groups it was in before enter.
func (s *sandboxCgroup) leave() error {
	tid := []byte(strconv.Itoa(unix.Gettid()))
	var errs []error
	for _, tasks := range s.back {
		errs = append(errs, os.WriteFile(tasks, tid, 0))
	}
	return errors.Join(errs...)
}

// oomKilled reports whether the kernel killed a process of the sandbox for its memory limit.
func (s *sandboxCgroup) oomKilled() bool {
	return statField(filepath.Join(s.dirs[1], "memory.oom_control"), "oom_kill") > 0
}

// throttled is how long the sandbox's processes waited for its CPU quota (0 without one).
func (s *sandboxCgroup) throttled() time.Duration {
	if !s.c.cpu() {
		return 0
	}
	return time.Duration(statField(filepath.Join(s.dirs[2], "cpu.stat"), "throttled_time")) // ns
}

// statField reads the field name of a "name value" lines file (memory.oom_control, cpu.stat),
// 0 when it is not there.
func statField(file, name string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove removes the sandbox's groups once its processes are gone (a group that still holds one
// stays, for the next worker's removeStale).
func (s *sandboxCgroup) remove() {
	for _, dir := range s.dirs {
		_ = os.Remove(dir)
	}
}
