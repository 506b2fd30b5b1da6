//go:build linux && !amd64

package sandbox

// No seccomp table is kept for this architecture: seccompFilter returns nil.
const (
	seccompArch       = 0
	seccompForeignABI = 0
)

var deniedSyscalls []uint32
