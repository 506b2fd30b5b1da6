//go:build unix

package credentials

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// lockFile holds an exclusive flock(2) on the file at path (created mode 0600 when missing),
// which every process and every open of the file respects, until unlock. When ctx ends first it
// returns ctx's cause; the lock, if it comes later, is let go at once.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- flock(f) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Closing the file lets go of the lock.
		return func() { f.Close() }, nil
	case <-ctx.Done():
		go func() { <-done; f.Close() }()
		return nil, context.Cause(ctx)
	}
}

// flock waits for an exclusive lock on f, again after a signal interrupts the wait.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
