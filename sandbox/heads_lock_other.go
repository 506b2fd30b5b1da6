//go:build !unix

package sandbox

import (
	"context"
	"errors"
)

var errNoFlock = errors.New("sandbox: locking across processes needs a Unix system (flock)")

// lockFile is not available: the file heads and the local copies' locks need flock(2).
func lockFile(context.Context, string) (func(), error) { return nil, errNoFlock }

// tryLockFile is not available either.
func tryLockFile(string) (func(), bool, error) { return nil, false, errNoFlock }
