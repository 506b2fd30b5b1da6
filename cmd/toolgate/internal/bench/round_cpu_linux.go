//go:build linux

package bench

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// onThreadCPU runs fn on one locked OS thread and returns the CPU time that thread used meanwhile
// (CLOCK_THREAD_CPUTIME_ID, nanosecond precision): the cost of fn, whatever else the machine
// runs. ok is false when the clock cannot be read.
func onThreadCPU(fn func() error) (cpu time.Duration, ok bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &before) != nil {
		return 0, false, fn()
	}
	err = fn()
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &after) != nil {
		return 0, false, err
	}
	return time.Duration(after.Nano() - before.Nano()), true, err
}
