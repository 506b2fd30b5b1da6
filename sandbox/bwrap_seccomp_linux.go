package sandbox

import "encoding/binary"

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

// seccompFilter returns the sandbox's seccomp program (bwrap --seccomp): system calls of
// another ABI and deniedSyscalls fail with EPERM, every other is allowed. They are the kernel
// interfaces a command has no use for and escapes have used (ptrace and process_vm_*, keyrings,
// bpf, perf, userfaultfd, io_uring, module and kexec loading, mounts, namespaces, file handles).
// nil where no table is kept for the architecture (the namespaces and rlimits still hold).
func seccompFilter() []byte {
	if seccompArch == 0 {
		return nil
	}
	type insn struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}
	n := len(deniedSyscalls)
	deny := uint32(6 + n) // the index of the final "return EPERM"
	prog := []insn{
		{bpfLoadAbsWord, 0, 0, seccompDataArch},
		{bpfJumpEq, 1, 0, seccompArch},
		{bpfReturn, 0, 0, seccompEPERM},
		{bpfLoadAbsWord, 0, 0, seccompDataNr},
		{bpfJumpGE, uint8(deny - 4 - 1), 0, seccompForeignABI},
	}
	for i, nr := range deniedSyscalls {
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
