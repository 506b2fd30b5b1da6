//go:build !linux

package bench

import "time"

// onThreadCPU runs fn; a thread's CPU time cannot be read on this system.
func onThreadCPU(fn func() error) (time.Duration, bool, error) { return 0, false, fn() }
