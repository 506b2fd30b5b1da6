package sandbox

import (
	"encoding/binary"
	"runtime"
)

// Classic BPF and seccomp constants (linux/filter.h, linux/seccomp.h).
const (
	bpfLoadAbsWord = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJumpEq      = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJumpGE      = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfReturn      = 0x06 // BPF_RET | BPF_K

	seccompAllow = 0x7fff0000
	seccompEPERM = 0x00050000 | 1 // SECCOMP_RET_ERRNO | EPERM

	seccompDataNr   = 0 // offsetof(struct seccomp_data, nr)
	seccompDataArch = 4 // offsetof(struct seccomp_data, arch)
)

// seccompTable is one architecture's part of the sandbox's seccomp program.
type seccompTable struct {
	// arch is the AUDIT_ARCH_* value of the architecture's native ABI: a system call of another
	// ABI (i386 on amd64, 32-bit ARM on arm64) is refused.
	arch uint32
	// foreignABI is the first number of a foreign ABI multiplexed on the native arch value (x32
	// on amd64); numbers from it on are refused.
	foreignABI uint32
	// denied are the numbers of the system calls refused, in the order of deniedNames.
	denied []uint32
}

// deniedNames are the system calls the sandbox refuses: the kernel interfaces a command has no
// use for and escapes have used.
var deniedNames = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"add_key", "request_key", "keyctl",
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"mount", "umount2", "pivot_root",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"unshare", "setns",
	"name_to_handle_at", "open_by_handle_at",
	"acct", "swapon", "swapoff", "reboot", "syslog", "quotactl", "vhangup",
}

// seccompTables are the architectures with a table, by GOARCH. The numbers are the kernel's
// (arch/x86/entry/syscalls/syscall_64.tbl; arm64 uses the generic table of
// include/uapi/asm-generic/unistd.h), as golang.org/x/sys/unix's zsysnum_linux_*.go has them;
// TestSeccompTableIsTheKernels checks this machine's against them.
var seccompTables = map[string]seccompTable{
	"amd64": {arch: 0xc000003e, foreignABI: 0x40000000, denied: []uint32{ // AUDIT_ARCH_X86_64; __X32_SYSCALL_BIT
		101, 310, 311,
		248, 249, 250,
		321, 298, 323,
		425, 426, 427,
		246, 320, 175, 313, 176,
		165, 166, 155,
		428, 429, 430, 431, 432, 433, 442,
		272, 308,
		303, 304,
		163, 167, 168, 169, 103, 179, 153,
	}},
	"arm64": {arch: 0xc00000b7, foreignABI: 0x80000000, denied: []uint32{ // AUDIT_ARCH_AARCH64; no multiplexed ABI
		117, 270, 271,
		217, 218, 219,
		280, 241, 282,
		425, 426, 427,
		104, 294, 105, 273, 106,
		40, 39, 41,
		428, 429, 430, 431, 432, 433, 442,
		97, 268,
		264, 265,
		89, 224, 225, 142, 116, 60, 58,
	}},
}

// seccompFilter returns the sandbox's seccomp program for this architecture (bwrap --seccomp),
// nil where no table is kept (the namespaces and rlimits still hold).
func seccompFilter() []byte {
	t, ok := seccompTables[runtime.GOARCH]
	if !ok {
		return nil
	}
	return t.program()
}

// program is the seccomp program of t: system calls of another ABI and the denied ones fail with
// EPERM, every other is allowed.
func (t seccompTable) program() []byte {
	type insn struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}
	n := len(t.denied)
	deny := uint32(6 + n) // the index of the final "return EPERM"
	prog := []insn{
		{bpfLoadAbsWord, 0, 0, seccompDataArch},
		{bpfJumpEq, 1, 0, t.arch},
		{bpfReturn, 0, 0, seccompEPERM},
		{bpfLoadAbsWord, 0, 0, seccompDataNr},
		{bpfJumpGE, uint8(deny - 4 - 1), 0, t.foreignABI},
	}
	for i, nr := range t.denied {
		prog = append(prog, insn{bpfJumpEq, uint8(deny - uint32(5+i) - 1), 0, nr})
	}
	prog = append(prog, insn{bpfReturn, 0, 0, seccompAllow}, insn{bpfReturn, 0, 0, seccompEPERM})
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}
