//go:build unix

// Package filelock holds exclusive flock(2) locks on files, which every process and every open
// of the file respects: the credentials' file store and the sandbox's file heads and local
// copies take turns across processes with it.
package filelock

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// Lock holds an exclusive lock on the file at path (created mode 0600 when missing; a symlink
// there is refused) until unlock. When ctx ends first it returns ctx's cause; the lock, if it
// comes later, is let go at once.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := open(path)
	if err != nil {
		return nil, err
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

// TryLock is Lock without waiting: ok is false when another holds the lock.
func TryLock(path string) (unlock func(), ok bool, err error) {
	f, err := open(path)
	if err != nil {
		return nil, false, err
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

func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	return f, nil
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
