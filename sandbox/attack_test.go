package sandbox

// Item 3 of issue 36: each test attacks the sandbox as an untrusted command would, and asserts
// that the attack fails and the host is untouched. Inside, /bin/sh is dash, and perl (Debian's
// perl-base) makes the system calls (x86-64 numbers where perl has no wrapper).

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// perl runs a perl program in the sandbox and returns its output.
func perl(t *testing.T, r *Runner, dir, program string, args ...string) Output {
	t.Helper()
	return run(t, r, dir, Command{Argv: append([]string{"perl", "-e", program, "--"}, args...)})
}

func TestAttackMount(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	before, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	tests := []struct {
		name  string
		shell string
	}{
		{"mount a tmpfs", "mount -t tmpfs none /workspace"},
		{"bind the root over the workspace", "mount --bind / /workspace"},
		{"unmount /proc", "umount /proc"},
		{"unmount the read-only /usr", "umount -l /usr"},
		{"a new user namespace for root inside", "unshare -r -m true"},
		{"write the system", "echo pwned > /usr/bin/pwned"},
		{"remount /usr writable", "mount -o remount,rw /usr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(t, r, dir, Command{Shell: tt.shell + " && echo escaped"})
			assert.NotEqual(t, 0, out.ExitCode, out.Stderr)
			assert.NotContains(t, out.Stdout, "escaped")
		})
	}
	after, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the host's mounts are unchanged")
	assert.NoFileExists(t, "/usr/bin/pwned")
}

func TestAttackPtrace(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	victim := exec.Command("sleep", "600")
	require.NoError(t, victim.Start())
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	// PTRACE_ATTACH (16) to the host's victim and to this test process: neither PID exists in
	// the sandbox's PID namespace.
	for _, pid := range []int{victim.Process.Pid, os.Getpid()} {
		out := perl(t, r, dir, `syscall(101, 16, $ARGV[0], 0, 0) == -1 or die "attached\n"; print $!+0`, strconv.Itoa(pid))
		assert.Equal(t, 0, out.ExitCode, out.Stderr)
		// No such process in the sandbox, or ptrace refused outright (seccomp, on amd64).
		assert.Contains(t, []string{strconv.Itoa(int(syscall.ESRCH)), strconv.Itoa(int(syscall.EPERM))}, out.Stdout)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(victim.Process.Pid) + "/status")
	require.NoError(t, err)
	assert.Contains(t, string(status), "TracerPid:\t0\n")
	// Nor can it signal the victim.
	out := perl(t, r, dir, `kill(0, $ARGV[0]) and die "signalled\n"; print $!+0`, strconv.Itoa(victim.Process.Pid))
	assert.Equal(t, strconv.Itoa(int(syscall.ESRCH)), out.Stdout, out.Stderr)
}

func TestAttackHostProc(t *testing.T) {
	t.Setenv("TOOLGATE_TEST_HOST_SECRET", "host-secret-in-env")
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	out := run(t, r, dir, Command{Shell: `
		ls /proc | grep -c '^[0-9]'
		head -c 6 /proc/1/cmdline; echo
		cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr '\0' '\n' | grep -c 'host-secret-in-en[v]'
		ls /sys | wc -l
		ls /proc/` + strconv.Itoa(os.Getpid()) + ` 2>&1 >/dev/null | grep -c 'No such file'`})
	lines := strings.Split(strings.TrimSpace(out.Stdout), "\n")
	require.Len(t, lines, 5, out.Stdout+out.Stderr)
	n, err := strconv.Atoi(lines[0])
	require.NoError(t, err)
	assert.Less(t, n, 10, "only the sandbox's own processes are visible")
	assert.Equal(t, "/usr/b", lines[1], "PID 1 is the sandbox's init (bwrap), not the host's")
	assert.Equal(t, "0", lines[2], "no host environment or argv in the sandbox's /proc")
	assert.Equal(t, "0", lines[3], "no /sys")
	assert.Equal(t, "1", lines[4], "the test process is not visible")
}

func TestAttackDevices(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	out := run(t, r, dir, Command{Shell: `mknod disk b 254 0 && echo made-block; mknod mem c 1 1 && echo made-char; ls /dev | tr '\n' ' '`})
	assert.NotContains(t, out.Stdout, "made-")
	assert.Equal(t, "core fd full null ptmx pts random shm stderr stdin stdout tty urandom zero ", out.Stdout, "a minimal /dev")
	for _, name := range []string{"disk", "mem"} {
		assert.NoFileExists(t, filepath.Join(dir, name))
	}
}

func TestAttackSymlinksStayInside(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	parent := filepath.Dir(dir)
	secret := filepath.Join(parent, "host-secret")
	require.NoError(t, os.WriteFile(secret, []byte("host secret\n"), 0o644))
	hostPasswd, err := os.ReadFile("/etc/passwd")
	require.NoError(t, err)
	out := run(t, r, dir, Command{Shell: `
		ln -s /etc/passwd passwd; cat passwd
		ln -s ` + secret + ` abs; cat abs 2>/dev/null || echo no-abs
		ln -s ../host-secret rel; cat rel 2>/dev/null || echo no-rel
		ln -s .. up; ls up/ | tr '\n' ' '; echo
		echo pwned > abs 2>/dev/null || echo no-write`})
	assert.Equal(t, "root:x:0:0:root:/root:/bin/sh\nsandbox:x:65534:65534:sandbox:/workspace:/bin/sh\n"+
		"no-abs\nno-rel\nbin dev etc lib lib64 proc sbin tmp usr workspace \nno-write\n", out.Stdout)
	assert.NotEqual(t, string(hostPasswd), out.Stdout)
	got, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "host secret\n", string(got), "the host file is untouched")
}

func TestAttackHardLinks(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	out := run(t, r, dir, Command{Shell: `
		ln /etc/passwd passwd 2>/dev/null && echo linked-passwd
		ln /usr/bin/perl perl 2>/dev/null && echo linked-perl
		ln /proc/self/exe exe 2>/dev/null && echo linked-exe
		echo done`})
	assert.Equal(t, "done\n", out.Stdout, out.Stderr)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no link to a host file in the workspace")
}

func TestAttackSetuid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a setuid-root binary")
	}
	// A setuid-root copy of id, bound read-only into a sandbox: it must run as the sandbox's
	// user (no_new_privs, and root is not mapped in the sandbox's user namespace).
	bin := t.TempDir()
	require.NoError(t, os.Chmod(bin, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(bin), 0o711))
	data, err := os.ReadFile("/usr/bin/id")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "suid-id"), data, 0o755))
	require.NoError(t, os.Chmod(filepath.Join(bin, "suid-id"), 0o4755|os.ModeSetuid))
	r, err := NewRunner(RunnerConfig{ReadOnly: []string{bin}})
	require.NoError(t, err)
	dir := newWorkspace(t, r)
	out := run(t, r, dir, Command{Shell: bin + `/suid-id -u; /usr/bin/su -c id root </dev/null; grep NoNewPrivs /proc/self/status; grep CapEff /proc/self/status`})
	assert.Equal(t, "65534\nNoNewPrivs:\t1\nCapEff:\t0000000000000000\n", out.Stdout, out.Stderr)
}

func TestAttackNetwork(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	// The host's loopback services, e.g. the Temporal frontend: a TCP listener on 127.0.0.1
	// and an abstract unix socket.
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tcp.Close()
	abstract := "@toolgate-sandbox-test-" + strconv.Itoa(os.Getpid())
	unix, err := net.Listen("unix", abstract)
	require.NoError(t, err)
	defer unix.Close()
	port := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
	tests := []struct {
		name    string
		program string
	}{
		{"loopback TCP of the host", `use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die; connect($s, sockaddr_in(` + port + `, inet_aton("127.0.0.1"))) and print "connected"`},
		{"abstract unix socket of the host", `use Socket; socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die; connect($s, pack_sockaddr_un("\0` + abstract[1:] + `")) and print "connected"`},
		{"outside TCP", `use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die; connect($s, sockaddr_in(443, inet_aton("1.1.1.1"))) and print "connected"`},
		{"DNS over UDP", `use Socket; socket(my $s, PF_INET, SOCK_DGRAM, 0) or die; send($s, "x", 0, sockaddr_in(53, inet_aton("8.8.8.8"))) and print "connected"`},
		{"name resolution", `my @a = gethostbyname("example.com"); print "connected" if @a`},
		{"raw socket", `use Socket; socket(my $s, PF_INET, SOCK_RAW, 1) and print "connected"`},
		{"packet socket", `use Socket; socket(my $s, 17, SOCK_RAW, 0) and print "connected"`},
		{"a listener the host could reach", `use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die; bind($s, sockaddr_in(` + port + `, INADDR_ANY)) or die; listen($s, 1) or die; print "listening"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := perl(t, r, dir, tt.program)
			assert.NotContains(t, out.Stdout, "connected", out.Stderr)
		})
	}
	out := run(t, r, dir, Command{Shell: "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '"})
	assert.Equal(t, "lo\n", out.Stdout, "only the sandbox's own loopback")
	for _, l := range []net.Listener{tcp, unix} {
		deadline := time.Now()
		switch l := l.(type) {
		case *net.TCPListener:
			l.SetDeadline(deadline)
		case *net.UnixListener:
			l.SetDeadline(deadline)
		}
		conn, err := l.Accept()
		if conn != nil {
			conn.Close()
		}
		assert.Error(t, err, "no connection reached the host's listener")
	}
}

func TestAttackLeaks(t *testing.T) {
	// A secret in this process's environment and one in a host process's argv (as in the
	// worker's).
	t.Setenv("TOOLGATE_TEST_SECRET", "env-secret-value")
	// One process (perl keeps its argv and starts no child), so killing it leaves nothing.
	holder := exec.Command("perl", "-e", "sleep 600", "argv-secret-value")
	require.NoError(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	out := run(t, r, dir, Command{Shell: `env; cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr '\0' '\n'`})
	for _, secret := range []string{"env-secret-value", "argv-secret-value", "TOOLGATE_TEST_SECRET", os.Args[0]} {
		assert.NotContains(t, out.Stdout, secret)
	}
	assert.Contains(t, out.Stdout, "HOME=/workspace", "the environment was listed")
}

func TestAttackCancelLeavesNoProcess(t *testing.T) {
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	mark := marker(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// A child that leaves its session and ignores the signals it can.
		_, err := r.Run(ctx, dir, Command{Shell: `trap '' HUP TERM INT; (trap '' HUP TERM INT; setsid sleep 600 &); sleep 600 & sleep 600`, Env: mark})
		done <- err
	}()
	waitFor(t, func() bool { return len(markedProcesses(t, mark, "sleep")) == 3 })
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Empty(t, markedProcesses(t, mark, ""), "no process of the sandbox is left after Run returns")
	runtime.KeepAlive(dir)
}

func TestAttackKernelInterfacesAreRefused(t *testing.T) {
	table, ok := seccompTables[runtime.GOARCH]
	if !ok {
		t.Skipf("no seccomp table is kept for %s", runtime.GOARCH)
	}
	nr := func(name string) string { return strconv.Itoa(int(table.denied[slices.Index(deniedNames, name)])) }
	r := newTestRunner(t)
	dir := newWorkspace(t, r)
	// Each call would succeed (or fail otherwise than EPERM) for an unprivileged process
	// without the sandbox's seccomp program.
	tests := []struct {
		name    string
		program string
	}{
		{"ptrace(PTRACE_TRACEME)", `syscall(` + nr("ptrace") + `, 0, 0, 0, 0)`},
		{"keyctl(KEYCTL_GET_KEYRING_ID)", `syscall(` + nr("keyctl") + `, 0, -3, 0)`},
		{"io_uring_setup", `syscall(` + nr("io_uring_setup") + `, 1, 0)`},
		{"add_key", `my ($t, $d, $p) = ("user", "x", "data"); syscall(` + nr("add_key") + `, $t, $d, $p, 4, -2)`},
		{"process_vm_readv of itself", `syscall(` + nr("process_vm_readv") + `, $$, 0, 0, 0, 0, 0)`},
	}
	if runtime.GOARCH == "amd64" {
		tests = append(tests, struct {
			name    string
			program string
		}{"an x32 system call", `syscall(0x40000000 + 39)`})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := perl(t, r, dir, `my $r = do { `+tt.program+` }; print $r == -1 ? $!+0 : "ok"`)
			assert.Equal(t, strconv.Itoa(int(syscall.EPERM)), out.Stdout, out.Stderr)
		})
	}
}
