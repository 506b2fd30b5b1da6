//go:build !unix

package credentials

import (
	"context"
	"errors"
)

// lockFile is not available: FileStore's lock across processes needs flock(2).
func lockFile(context.Context, string) (func(), error) {
	return nil, errors.New("credentials file store: locking needs a Unix system (flock)")
}
