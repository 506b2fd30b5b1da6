//go:build !linux

package cluster

import "syscall"

// childAttr runs a child process as cred's user when cred is non-nil (no parent-death signal
// outside Linux).
func childAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
