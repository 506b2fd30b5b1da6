package sandbox

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// This machine's table holds the kernel's numbers of deniedNames (x/sys/unix's for GOARCH).
func TestSeccompTableIsTheKernels(t *testing.T) {
	kernel := map[string]uint32{
		"ptrace": unix.SYS_PTRACE, "process_vm_readv": unix.SYS_PROCESS_VM_READV, "process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
		"add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY, "keyctl": unix.SYS_KEYCTL,
		"bpf": unix.SYS_BPF, "perf_event_open": unix.SYS_PERF_EVENT_OPEN, "userfaultfd": unix.SYS_USERFAULTFD,
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER, "io_uring_register": unix.SYS_IO_URING_REGISTER,
		"kexec_load": unix.SYS_KEXEC_LOAD, "kexec_file_load": unix.SYS_KEXEC_FILE_LOAD, "init_module": unix.SYS_INIT_MODULE,
		"finit_module": unix.SYS_FINIT_MODULE, "delete_module": unix.SYS_DELETE_MODULE,
		"mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2, "pivot_root": unix.SYS_PIVOT_ROOT,
		"open_tree": unix.SYS_OPEN_TREE, "move_mount": unix.SYS_MOVE_MOUNT, "fsopen": unix.SYS_FSOPEN, "fsconfig": unix.SYS_FSCONFIG,
		"fsmount": unix.SYS_FSMOUNT, "fspick": unix.SYS_FSPICK, "mount_setattr": unix.SYS_MOUNT_SETATTR,
		"unshare": unix.SYS_UNSHARE, "setns": unix.SYS_SETNS,
		"name_to_handle_at": unix.SYS_NAME_TO_HANDLE_AT, "open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT,
		"acct": unix.SYS_ACCT, "swapon": unix.SYS_SWAPON, "swapoff": unix.SYS_SWAPOFF, "reboot": unix.SYS_REBOOT,
		"syslog": unix.SYS_SYSLOG, "quotactl": unix.SYS_QUOTACTL, "vhangup": unix.SYS_VHANGUP,
	}
	table, ok := seccompTables[runtime.GOARCH]
	if !ok {
		t.Skipf("no seccomp table for %s", runtime.GOARCH)
	}
	require.Len(t, table.denied, len(deniedNames))
	for i, name := range deniedNames {
		nr, known := kernel[name]
		require.True(t, known, name)
		assert.Equal(t, nr, table.denied[i], "%s on %s", name, runtime.GOARCH)
	}
}

// Each architecture's program, run by a classic BPF evaluator: another ABI and every denied
// call get EPERM, the others are allowed.
func TestSeccompProgramOfEachArchitecture(t *testing.T) {
	allowed := map[string][]uint32{
		"amd64": {0, 1, 2, 57, 59, 60, 231, 257}, // read, write, open, fork, execve, exit, exit_group, openat
		"arm64": {63, 64, 56, 220, 221, 93, 94},  // read, write, openat, clone, execve, exit, exit_group
	}
	for goarch, table := range seccompTables {
		t.Run(goarch, func(t *testing.T) {
			require.Len(t, table.denied, len(deniedNames))
			prog := table.program()
			for i, nr := range table.denied {
				assert.Equal(t, uint32(seccompEPERM), runSeccomp(t, prog, table.arch, nr), "%s (%d) is refused", deniedNames[i], nr)
			}
			require.NotEmpty(t, allowed[goarch], "the test names allowed calls of %s", goarch)
			for _, nr := range allowed[goarch] {
				assert.Equal(t, uint32(seccompAllow), runSeccomp(t, prog, table.arch, nr), "%d is allowed", nr)
			}
			for other, o := range seccompTables {
				if other != goarch {
					assert.Equal(t, uint32(seccompEPERM), runSeccomp(t, prog, o.arch, allowed[goarch][0]), "%s's arch value", other)
				}
			}
			assert.Equal(t, uint32(seccompEPERM), runSeccomp(t, prog, 0x40000003, allowed[goarch][0]), "i386 or 32-bit ARM")
			assert.Equal(t, uint32(seccompEPERM), runSeccomp(t, prog, table.arch, table.foreignABI|1), "a multiplexed foreign ABI")
		})
	}
}

// runSeccomp evaluates the classic BPF program prog (the instructions seccompTable.program emits)
// on a seccomp_data of arch and nr.
func runSeccomp(t *testing.T, prog []byte, arch, nr uint32) uint32 {
	t.Helper()
	var acc uint32
	for pc := 0; pc*8 < len(prog); pc++ {
		in := prog[pc*8 : pc*8+8]
		code, jt, jf, k := binary.NativeEndian.Uint16(in), in[2], in[3], binary.NativeEndian.Uint32(in[4:])
		switch code {
		case bpfLoadAbsWord:
			switch k {
			case seccompDataNr:
				acc = nr
			case seccompDataArch:
				acc = arch
			default:
				t.Fatalf("load of offset %d", k)
			}
		case bpfJumpEq, bpfJumpGE:
			if code == bpfJumpEq && acc == k || code == bpfJumpGE && acc >= k {
				pc += int(jt)
			} else {
				pc += int(jf)
			}
		case bpfReturn:
			return k
		default:
			t.Fatalf("instruction %#x", code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}
