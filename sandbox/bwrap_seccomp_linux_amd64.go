package sandbox

// seccompArch is AUDIT_ARCH_X86_64; seccompForeignABI the first x32 system call number (x32
// calls, and i386 ones under another arch value, are refused).
const (
	seccompArch       = 0xc000003e
	seccompForeignABI = 0x40000000
)

// deniedSyscalls are the x86-64 numbers of the system calls the sandbox refuses (see
// seccompFilter).
var deniedSyscalls = []uint32{
	101, 310, 311, // ptrace, process_vm_readv, process_vm_writev
	248, 249, 250, // add_key, request_key, keyctl
	321, 298, 323, // bpf, perf_event_open, userfaultfd
	425, 426, 427, // io_uring_setup, io_uring_enter, io_uring_register
	246, 320, 175, 313, 176, // kexec_load, kexec_file_load, init_module, finit_module, delete_module
	165, 166, 155, // mount, umount2, pivot_root
	428, 429, 430, 431, 432, 433, 442, // open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr
	272, 308, // unshare, setns
	303, 304, // name_to_handle_at, open_by_handle_at
	163, 167, 168, 169, 103, 179, 153, // acct, swapon, swapoff, reboot, syslog, quotactl, vhangup
}
