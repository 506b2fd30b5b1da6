//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// Open flags of the host side: O_NOFOLLOW refuses a symlink as the last component, O_NONBLOCK
// never waits on a fifo, O_DIRECTORY refuses anything but a directory.
const (
	oNoFollow  = syscall.O_NOFOLLOW
	oNonBlock  = syscall.O_NONBLOCK
	oDirectory = syscall.O_DIRECTORY
)

// fileOwner is info's owner, when the system says.
func fileOwner(info fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// links is a file's hard link count (1 when unknown).
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
