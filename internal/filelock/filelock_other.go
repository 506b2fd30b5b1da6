//go:build !unix

// Package filelock holds exclusive flock(2) locks on files; without Unix it has none.
package filelock

import (
	"context"
	"errors"
)

// ErrUnsupported: locking across processes needs a Unix system (flock).
var ErrUnsupported = errors.New("locking across processes needs a Unix system (flock)")

// Lock is not available here.
func Lock(context.Context, string) (func(), error) { return nil, ErrUnsupported }

// TryLock is not available here.
func TryLock(string) (func(), bool, error) { return nil, false, ErrUnsupported }
