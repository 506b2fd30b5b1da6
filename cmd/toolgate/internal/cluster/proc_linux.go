package cluster

import "syscall"

// childAttr makes a child process die with the harness (SIGKILL when the parent thread exits)
// and, with cred non-nil, run as that user.
func childAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: cred}
}
