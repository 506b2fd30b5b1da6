//go:build unix

package secrets

import (
	"io/fs"
	"os"
	"syscall"
)

// openFlags opens a secret's file without blocking on a FIFO.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

// fileID identifies a file: a replaced file (Kubernetes' atomic swap, a rename) has another.
type fileID struct{ dev, ino uint64 }

func idOf(info fs.FileInfo) fileID {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}
