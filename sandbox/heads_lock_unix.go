//go:build unix

package sandbox

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
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- flock(f, syscall.LOCK_EX) }()
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

// tryLockFile is lockFile without waiting: ok is false when another holds the lock.
func tryLockFile(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("open lock file: %w", err)
	}
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, true, nil
}

// flock takes a lock on f, again after a signal interrupts the wait.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
